#!/bin/sh
# The single-file core (include/noclobber_core.h) in a program with no
# libc at all (tests/core/freestanding.c, -ffreestanding -nostdlib):
# built for x86_64 and every architecture of tests/targets.sh with gcc,
# for x86_64 with clang too, at -O0, -O2 and -Os, and run natively, under
# the old-kernel and 4.17 emulators, qemu-user and valgrind, and on each
# architecture natively or under qemu-user as this machine can.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
. "$top/tests/targets.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$top/tests/core/freestanding.c
# The test program's own code is kept from the stack protector (the core
# needs no flag: checked below).
flags="-std=gnu11 -Wall -Wextra -Werror -static -nostdlib -ffreestanding
	-fno-builtin -fno-stack-protector -I$top/include"

# build NAME CC [FLAGS...]: $tmp/NAME, or a failed test.
build() {
	name=$1 cc=$2
	shift 2
	# shellcheck disable=SC2086
	if $cc $flags "$@" -o "$tmp/$name" "$src" 2>"$tmp/err"; then
		return 0
	fi
	sed 's/^/# /' "$tmp/err" | head -20
	ok 1 "$name: builds with $cc $*"
	return 1
}

# run NAME RUNNER...: its checks pass there.
run() {
	name=$1
	shift
	"$@" "$tmp/$name" 2>"$tmp/err"
	s=$?
	sed 's/^/# /' "$tmp/err"
	[ $s -eq 0 ]
	ok $? "$name under ${*:-the host kernel} (status $s)"
}

for o in -O0 -O2 -Os; do
	build "x86_64$o" "${CC:-cc}" $o && run "x86_64$o"
done
build x86_64-nokeep "${CC:-cc}" -O2 -DNCB_CORE_NO_KEPT_FD &&
	run x86_64-nokeep
if have clang; then
	build x86_64-clang clang -O2 && run x86_64-clang
else
	skip "clang is not installed"
fi
emu=$b/tests/ncb-emu
if [ -x "$emu" ] && "$emu" --mode=old /bin/true 2>/dev/null; then
	run x86_64-O2 "$emu" --mode=old
	run x86_64-O2 "$emu" --mode=4.17
else
	skip "tests/ncb-emu is not built or cannot trace here"
	skip "tests/ncb-emu is not built or cannot trace here"
fi
if have qemu-x86_64; then
	run x86_64-O2 qemu-x86_64
else
	skip "qemu-user is not installed"
fi
if have valgrind; then
	run x86_64-O2 valgrind -q --error-exitcode=9
else
	skip "valgrind is not installed"
fi

for arch in $(echo "$ncb_targets" | awk '{ print $1 }'); do
	target_how "$top" "$arch"
	if [ "$t_how" = skip ]; then
		skip "$arch: $t_why"
		skip "$arch: $t_why"
		continue
	fi
	# riscv64's static programs start from crt1, which sets up the
	# global pointer that linker relaxation uses: this one has none.
	x=
	[ "$arch" = riscv64 ] && x="-mno-relax -Wl,--no-relax"
	for o in -O0 -O2; do
		# shellcheck disable=SC2086
		build "$arch$o" "$t_gcc" $t_cflags $x $o &&
			run "$arch$o" $t_runner
	done
done

# The core needs no stack protector's runtime, whatever the compiler's
# default: with it forced on, the implementation calls nothing.
printf '#define NCB_CORE_IMPLEMENTATION\n#include <noclobber_core.h>\n' \
	>"$tmp/ssp.c"
ssp() {
	name=$1 cc=$2
	shift 2
	if ! have "$cc"; then
		skip "$name: $cc is not installed"
		return
	fi
	# shellcheck disable=SC2086
	$cc -std=gnu11 -Wall -Wextra -Werror -ffreestanding -fno-builtin \
		-fstack-protector-all -O2 -I"$top/include" "$@" -c \
		-o "$tmp/ssp.o" "$tmp/ssp.c" 2>"$tmp/err" || {
		sed 's/^/# /' "$tmp/err"
		ok 1 "$name: the core builds with -fstack-protector-all"
		return
	}
	# What the linker itself provides is no library's.
	u=$(nm -u "$tmp/ssp.o" | awk '{ print $2 }' |
		grep -v -e '^_GLOBAL_OFFSET_TABLE_$' -e '^\.TOC\.$')
	[ -z "$u" ]
	ok $? "$name: no symbol needed with -fstack-protector-all${u:+ ($u)}"
}
ssp gcc "${CC:-cc}"
ssp clang clang
for arch in $(echo "$ncb_targets" | awk '{ print $1 }'); do
	target "$arch"
	# shellcheck disable=SC2086
	ssp "$arch" "$t_gcc" $t_cflags
done

done_testing
