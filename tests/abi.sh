#!/bin/sh
# The shared library's interface: soname, version nodes, only ncb_
# symbols, every public function exported and documented, and the 1.0
# interface unchanged (abi/libnoclobber.abi, compared by libabigail).
# With --dump (make abi-dump), the description is written as the one to
# keep instead.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
so=$b/libnoclobber.so
base=$top/abi/libnoclobber.abi
command -v nm >/dev/null 2>&1 || skip_all "nm (binutils) is not installed"

readelf -d "$so" | grep -q 'SONAME.*\[libnoclobber\.so\.0\]'
ok $? "soname is libnoclobber.so.0"
dyn=$(nm -D --defined-only "$so" |
	awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }')
syms=$(echo "$dyn" | sed 's/@.*//' | sort -u)
bad=$(echo "$syms" | grep -v '^ncb_' | grep -v '^NOCLOBBER_')
[ -z "$bad" ]
ok $? "only ncb_ symbols exported${bad:+ (not: $bad)}"
unversioned=$(echo "$dyn" | grep '^ncb_' | grep -v '@@NOCLOBBER_[0-9.]*$')
[ -z "$unversioned" ]
ok $? "every symbol is in a version node${unversioned:+ (not: $unversioned)}"
api=$(grep -ohE '\bncb_[a-z0-9_]+ *\(' "$top/include/noclobber.h" |
	sed 's/ *($//' | sort -u)
for f in $api; do
	echo "$syms" | grep -qx "$f"
	ok $? "$f is exported"
	[ -f "$top/man/man3/$f.3" ]
	ok $? "$f has a man page"
done
for f in $syms; do
	case $f in NOCLOBBER_*) continue ;; esac
	echo "$api" | grep -qx "$f"
	ok $? "exported $f is declared in noclobber.h"
done

# The version macros, the run-time version and the file name agree.
ver=$(awk '/^VERSION :=/ { print $3 }' "$top/Makefile")
[ -e "$b/libnoclobber.so.$ver" ]
ok $? "the library file is named for version $ver"
hv=$(awk '/define NCB_VERSION_(MAJOR|MINOR|PATCH) / { printf "%s%s",
	sep, $3; sep = "." }' "$top/include/noclobber.h")
[ "$hv" = "$ver" ]
ok $? "noclobber.h says version $hv, the Makefile $ver"
printf '#include <noclobber.h>\n#include <stdio.h>\nint main(void) {
	printf("%%x %%x\\n", ncb_version(), NCB_VERSION); return 0; }\n' |
	${CC:-cc} -I"$top/include" -x c -o "$b/abi-version" - -L"$b" \
		-lnoclobber 2>/dev/null
got=$(LD_LIBRARY_PATH=$b "$b/abi-version" 2>/dev/null)
want=$(echo "$ver" | awk -F. '{ printf "%x %x", $1 * 65536 + $2 * 256 + $3,
	$1 * 65536 + $2 * 256 + $3 }')
[ "$got" = "$want" ]
ok $? "ncb_version() and NCB_VERSION give $want (got: $got)"
rm -f "$b/abi-version"

# What the 1.0 interface is, against what this build exports.  A build
# with sanitizers or without debug information cannot be compared.
if ! command -v abidiff >/dev/null 2>&1; then
	skip "abidiff (abigail-tools) is not installed"
	done_testing
	exit
fi
if ! readelf -S "$so" | grep -q '\.debug_info'; then
	skip "the library has no debug information to compare types by"
	done_testing
	exit
fi
now=$b/libnoclobber.abi
abidw --exported-interfaces-only --no-corpus-path --no-show-locs \
	--drop-private-types --headers-dir "$top/include" \
	--out-file "$now" "$so"
ok $? "abidw describes the library"
if [ "${2:-}" = --dump ]; then
	# A new release's node is in: it becomes what later ones keep.
	cp "$now" "$base"
	ok $? "abi/libnoclobber.abi rewritten"
	done_testing
	exit
fi
# Removed or changed functions and types: never within a node.
out=$(abidiff --no-added-syms --suppressions "$top/abi/libnoclobber.suppr" \
	"$base" "$now" 2>&1)
rc=$?
[ $rc -eq 0 ] || echo "$out" | sed 's/^/# /'
ok $rc "no symbol of a released node is removed or changed"
# Added ones: each in a node that no earlier release has.
old_nodes=$(grep -o "version='NOCLOBBER_[0-9.]*'" "$base" | sort -u |
	sed "s/version='\(.*\)'/\1/")
for s in $(echo "$dyn" | grep '^ncb_'); do
	name=${s%%@*} node=${s##*@}
	grep -q "elf-symbol name='$name'" "$base" && continue
	! echo "$old_nodes" | grep -qx "$node"
	ok $? "new symbol $name is in a node no release has (it is in $node)"
done
done_testing
