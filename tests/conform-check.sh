#!/bin/sh
# conform-check.sh KEYS COMMAND...: COMMAND (noclobber-conform, perhaps
# under an emulator) runs to its verdict, and fails exactly the cases the
# KEYS of tests/conform-expect name (their lists added up; a case skipped
# there left out), as TAP.  KEYS "" says nothing may fail; "?" that any
# verdict goes (an environment whose behaviour is not known from its
# version), and then only the answer's form is checked.
# NCB_CONFORM_SAVE names a file to keep the program's TAP in (for
# scripts/conformance-doc), its first line "# env: " and what ran.
set -u
keys=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The cases the keys name, one a line.
expected() {
	awk -v keys=" $1 " '
		/^#/ { next }
		/^[^ \t]/ { on = index(keys, " " $1 " ") > 0
			     for (i = 2; on && i <= NF; i++) print $i
			     next }
		on { for (i = 1; i <= NF; i++) print $i }' \
		"$top/tests/conform-expect" | sort -u
}

"$@" --tap >"$tmp/out" 2>"$tmp/err"
st=$?
if [ -n "${NCB_CONFORM_SAVE:-}" ]; then
	mkdir -p "$(dirname "$NCB_CONFORM_SAVE")"
	{ echo "# env: $*"; cat "$tmp/out"; } >"$NCB_CONFORM_SAVE"
fi
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tmp/out")
ran=$(grep -c -e '^ok ' -e '^not ok ' "$tmp/out")
[ "$st" -le 1 ] && [ -n "$plan" ] && [ "$plan" = "$ran" ]
s=$?
[ $s -eq 0 ] || sed 's/^/# /' "$tmp/err" | head -20
ok $s "$* answers every case (status $st, $ran of ${plan:-no} planned)"
sed -n 's/^not ok [0-9]* - \([^:]*\):.*/\1/p' "$tmp/out" | sort >"$tmp/failed"
[ -s "$tmp/failed" ] && st_want=1 || st_want=0
[ "$st" -eq "$st_want" ]
ok $? "the status says what the cases say ($st)"
[ "$keys" = "?" ] && done_testing && exit
sed -n 's/^ok [0-9]* - \([^:]*\):.*# SKIP.*/\1/p' "$tmp/out" |
	sort >"$tmp/skipped"
expected "$keys" | comm -23 - "$tmp/skipped" >"$tmp/expected"
while read -r c; do
	grep -qx "$c" "$tmp/failed"
	ok $? "$c fails here${keys:+ ($keys)}"
done <"$tmp/expected"
comm -13 "$tmp/expected" "$tmp/failed" >"$tmp/extra"
if [ -s "$tmp/extra" ]; then
	while read -r c; do
		grep -A1 "^not ok [0-9]* - $c:" "$tmp/out" | sed 's/^/# /'
	done <"$tmp/extra"
fi
[ ! -s "$tmp/extra" ]
ok $? "no other case fails"
done_testing
