#!/bin/sh
# The Debian symbols file (debian/libnoclobber0.symbols) is what
# scripts/gen-symbols makes of the version script, and lists exactly what
# the build's library exports, each symbol in its node; debian/changelog
# is at the Makefile's VERSION.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
sym=$top/debian/libnoclobber0.symbols
[ -f "$sym" ] || skip_all "no debian/libnoclobber0.symbols in this tree"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$top/scripts/gen-symbols" - >"$tmp/want" 2>"$tmp/err"
ok $? "scripts/gen-symbols reads the version script"
sed 's/^/# /' "$tmp/err"
diff -u "$sym" "$tmp/want" >"$tmp/diff"
ok $? "debian/libnoclobber0.symbols is up to date (run scripts/gen-symbols)"
sed 's/^/# /' "$tmp/diff"

# The packages' version is the release's (a native package: no revision).
ver=$(awk '/^VERSION :=/ { print $3 }' "$top/Makefile")
dv=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$top/debian/changelog")
[ "$dv" = "$ver" ]
ok $? "debian/changelog is at version $ver (it says $dv)"

if ! command -v nm >/dev/null 2>&1; then
	skip "nm (binutils) is not installed"
elif [ ! -f "$b/libnoclobber.so" ]; then
	skip "no $b/libnoclobber.so"
else
	# nm -D: "NODE" for a node's own symbol, "name@@NODE" for the rest.
	nm -D --defined-only "$b/libnoclobber.so" | awk '
		$3 ~ /@@/ { sub(/@@/, "@", $3); print $3; next }
		$2 == "A" { print $3 "@" $3 }' | LC_ALL=C sort >"$tmp/lib"
	awk '/^ / { print $1 }' "$sym" | LC_ALL=C sort >"$tmp/file"
	diff -u "$tmp/file" "$tmp/lib" >"$tmp/diff"
	ok $? "the library exports what the symbols file lists"
	sed 's/^/# /' "$tmp/diff"
fi
done_testing
