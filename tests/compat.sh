#!/bin/sh
# The compatibility defines, on a libc whose headers lack the flag, and the
# header in C89-pedantic C and C++.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
cc=${CC:-cc}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/sys"
# A <sys/mman.h> that hides the flag, as glibc before 2.28 did.
cat > "$t/sys/mman.h" <<'H'
#include_next <sys/mman.h>
#undef MAP_FIXED_NOREPLACE
H
cat > "$t/v.c" <<'C'
#include <noclobber.h>
int v = MAP_FIXED_NOREPLACE, s = MAP_FIXED_SAFE;
C
val() { "$cc" -E -P -I"$t" -I"$top/include" "$@" "$t/v.c" | grep 'int v'; }
val | grep -q 'int v = 0x100000, s = 0x100000'
ok $? "defined as 0x100000 when libc lacks it"
# alpha, preprocessed only, over empty system headers.
mkdir -p "$t/alpha/sys"
for h in stddef.h stdint.h sys/mman.h sys/types.h; do : > "$t/alpha/$h"; done
"$cc" -E -P -nostdinc -I"$t/alpha" -I"$top/include" -U__x86_64__ \
	-D__alpha__ "$t/v.c" | grep -q 'int v = 0x200000, s = 0x200000'
ok $? "0x200000 on alpha"
printf '#include <sys/mman.h>\n#include <noclobber.h>\n_Static_assert(MAP_FIXED_NOREPLACE == NCB_MAP_FIXED_NOREPLACE, "");\n' > "$t/r.c"
check "agrees with libc's own define" "$cc" -Wall -Werror -I"$top/include" -c -o "$t/r.o" "$t/r.c"
printf '#include <noclobber.h>\nint main(void) { return 0; }\n' > "$t/c.c"
check "header is clean C99 pedantic" "$cc" -std=c99 -pedantic -Wall -Wextra -Werror -I"$top/include" -c -o "$t/c.o" "$t/c.c"
if command -v c++ >/dev/null 2>&1; then
	cp "$t/c.c" "$t/c.cc"
	check "header compiles as C++" c++ -Wall -Wextra -Werror -I"$top/include" -c -o "$t/cc.o" "$t/c.cc"
fi
done_testing
