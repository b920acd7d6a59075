#!/bin/sh
# The shared library's interface: soname, version node, only ncb_ symbols,
# every public function exported and documented.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
so=$b/libnoclobber.so
command -v nm >/dev/null 2>&1 || skip_all "nm (binutils) is not installed"

readelf -d "$so" | grep -q 'SONAME.*\[libnoclobber\.so\.0\]'
ok $? "soname is libnoclobber.so.0"
syms=$(nm -D --defined-only "$so" | awk '$2 == "T" || $2 == "D" || $2 == "B" { print $3 }' | sed 's/@.*//' | sort -u)
bad=$(echo "$syms" | grep -v '^ncb_' | grep -v '^NOCLOBBER_')
[ -z "$bad" ]
ok $? "only ncb_ symbols exported${bad:+ (not: $bad)}"
nm -D --defined-only "$so" | grep -q 'ncb_mmap@@NOCLOBBER_0.1'
ok $? "symbols carry the NOCLOBBER_0.1 version"
api=$(grep -ohE '\bncb_[a-z0-9_]+ *\(' "$top/include/noclobber.h" | sed 's/ *($//' | sort -u)
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
done_testing
