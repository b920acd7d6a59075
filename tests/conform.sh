#!/bin/sh
# The conformance suite: noclobber conform and noclobber-conform agree and
# take their options; each case fails in the environment built to break
# it (tests/ncb-emu's modes) and every case has one; a release's own
# choices are the version's behaviour, not failures; the JSON is as
# noclobber(1) says.  The matrix runs the program in every row besides
# (tests/conform-check.sh).
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
nc=$b/noclobber
ncf=$b/noclobber-conform
emu=$b/tests/ncb-emu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$b/conform"

check "noclobber-conform --help" "$ncf" --help
check "noclobber conform --help" "$nc" conform --help
status 2 "an unknown option" "$ncf" --frobnicate
status 2 "an argument" "$ncf" extra
status 2 "--json and --tap together" "$ncf" --json --tap
status 2 "--only naming nothing" "$ncf" --only no-such-group
"$ncf" --only no-such-group 2>&1 | grep -q "no group or case 'no-such-group'"
ok $? "--only naming nothing says so"

status 2 "a table to a full device" sh -c "'$ncf' --only place >/dev/full"
status 2 "JSON to a full device" sh -c "'$nc' conform --json --only place \
	>/dev/full"
# No process for a case (one process allowed, another user's): status 2,
# and why.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
   command -v prlimit >/dev/null 2>&1; then
	prlimit --nproc=1 setpriv --reuid=65534 --regid=65534 \
		--clear-groups --inh-caps=-all "$ncf" --only place \
		>/dev/null 2>"$tmp/err"
	s=$?
	[ $s -eq 2 ] && grep -q 'cannot run it' "$tmp/err"
	ok $? "no process for a case: status 2 and why (status $s)"
else
	skip "not root, or no setpriv and prlimit (util-linux)"
fi

# No room for a case's window (an address space limit): that case is
# skipped and says why, none fails, and none waits for its alarm.
(ulimit -v 16000 && "$ncf" --tap) >"$tmp/small" 2>&1
s=$?
[ $s -eq 0 ] && grep -q '# SKIP no room for a window' "$tmp/small" &&
	! grep -q '^not ok' "$tmp/small"
ok $? "no room for the windows: skipped, not failed (status $s)"

# The cases as data: every one named once, in a known group, with a rule
# and a source.
"$ncf" --list >"$tmp/list"
cases=$(wc -l <"$tmp/list")
[ "$cases" -ge 40 ]
ok $? "--list names the cases ($cases)"
awk -F '\t' 'NF != 4 || $1 !~ "^" $2 "\\." || $3 == "" || $4 == "" {
	print "# " $0; bad = 1 } END { exit bad }' "$tmp/list"
ok $? "each case has a name in its group, a rule and a source"
[ "$(cut -f1 "$tmp/list" | sort -u | wc -l)" -eq "$cases" ]
ok $? "no case is named twice"
"$nc" conform --list >"$tmp/list2"
cmp -s "$tmp/list" "$tmp/list2"
ok $? "noclobber conform lists the same cases"
cut -f1 "$tmp/list" | sort >"$tmp/names"

# --only: a group, and a case of another.
"$ncf" --tap --only mremap --only place.free >"$tmp/only"
want=$(($(grep -c '^mremap\.' "$tmp/list") + 1))
[ "$(grep -c '^ok\|^not ok' "$tmp/only")" -eq "$want" ] &&
	grep -q ' - place\.free:' "$tmp/only"
ok $? "--only runs the group and the case it names ($want)"

# This kernel: as the matrix knows it from its version.
case ${NCB_EXPECT_NOREPLACE:-} in
honoured) keys= ;;
*) keys="?" ;;
esac
for prog in "$ncf" "$nc conform"; do
	# shellcheck disable=SC2086
	sh "$top/tests/conform-check.sh" "$keys" $prog >"$tmp/tap" 2>&1
	s=$?
	grep -v '^ok\|^1\.\.' "$tmp/tap"
	ok $s "$prog on this kernel (${keys:-conformant})"
done
if command -v python3 >/dev/null 2>&1; then
	"$nc" conform --json >"$tmp/doc"
	python3 "$top/tests/json-schema.py" "$top/man/man1/noclobber.1" \
		conform "$tmp/doc" >"$tmp/why"
	s=$?
	sed 's/^/# /' "$tmp/why"
	ok $s "noclobber conform --json prints a conform document"
	"$ncf" --json --only errno >"$tmp/doc"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [g["group"] for g in d["groups"]] == ["errno"], d["groups"]
n = len(d["cases"])
assert d["passed"] + d["failed"] + d["versions"] + d["skipped"] == n
assert d["conformant"] == (d["failed"] == 0)
assert all(c["group"] == "errno" for c in d["cases"])' "$tmp/doc"
	ok $? "--json --only errno: one group, its counts add up"
else
	skip "no python3 to read the JSON"
	skip "no python3 to read the JSON"
fi

# Environments built to break the rules: each fails exactly its cases.
modes="old 4.17 anywhere naive hints upgrade 5.4 pretend 32bit"
if [ -x "$emu" ] && "$emu" --mode=old /bin/true 2>/dev/null; then
	for m in $modes; do
		NCB_CONFORM_SAVE=$b/conform/emu-$m.tap \
			sh "$top/tests/conform-check.sh" "emu-$m" "$emu" \
			--mode="$m" "$ncf" >"$tmp/tap" 2>&1
		s=$?
		grep -v '^ok\|^1\.\.' "$tmp/tap"
		ok $s "ncb-emu --mode=$m breaks exactly its cases"
	done
else
	for m in $modes; do
		skip "tests/ncb-emu is not built or cannot trace here"
	done
fi
# Every case has an environment that breaks it.
keys=$(for m in $modes; do printf 'emu-%s ' "$m"; done)
awk -v keys=" $keys" '/^#/ { next }
	/^[^ \t]/ { on = index(keys, " " $1 " ") > 0
		    for (i = 2; on && i <= NF; i++) print $i; next }
	on { for (i = 1; i <= NF; i++) print $i }' \
	"$top/tests/conform-expect" | sort -u >"$tmp/broken"
comm -23 "$tmp/names" "$tmp/broken" >"$tmp/unbroken"
sed 's/^/# no environment breaks /' "$tmp/unbroken"
[ ! -s "$tmp/unbroken" ]
ok $? "every case fails in some mode of tests/ncb-emu"
comm -13 "$tmp/names" "$tmp/broken" >"$tmp/stale"
sed 's/^/# tests\/conform-expect names no case /' "$tmp/stale"
[ ! -s "$tmp/stale" ]
ok $? "tests/conform-expect names only cases that exist"

# A 32-bit kernel's own refusal of MAP_DROPPABLE (--mode=32bit) is
# skipped, with why, by an i386 program that sees a 32-bit machine; the
# 64-bit program above failed it.
. "$top/tests/targets.sh"
if ! [ -x "$emu" ] || ! "$emu" --mode=old /bin/true 2>/dev/null; then
	skip "tests/ncb-emu is not built or cannot trace here"
elif ! command -v setarch >/dev/null 2>&1; then
	skip "no setarch (util-linux)"
elif i386_static "$top" "$tmp/ncf32" -std=gnu11 -D_GNU_SOURCE \
	-I"$top/include" -I"$top/tools" -pthread "$top"/tools/conform/*.c \
	"$top/tools/json.c"; r=$?; [ $r -eq 2 ]; then
	skip "$t_why"
else
	"$emu" --mode=32bit setarch linux32 "$tmp/ncf32" --tap \
		--only errno.droppable >"$tmp/32" 2>&1
	s=$?
	sed 's/^/# /' "$tmp/32"
	[ $r -eq 0 ] && [ $s -eq 0 ] &&
		grep -q '^ok 1 .*# SKIP a 32-bit kernel has no MAP_DROPPABLE' \
		"$tmp/32"
	ok $? "a 32-bit kernel's refusal of MAP_DROPPABLE: skipped (status $s)"
fi

# A release whose own choice a mode plays: conformant, the differences
# reported as that version's behaviour (the release bound over
# osrelease in a mount namespace of its own).
version() {
	rel=$1 mode=$2
	if ! [ -x "$emu" ] || ! "$emu" --mode=old /bin/true 2>/dev/null; then
		skip "tests/ncb-emu is not built or cannot trace here"
		return
	fi
	"$top/tests/with-release.sh" "$rel" "$emu" --mode="$mode" "$ncf" \
		--tap >"$tmp/v" 2>&1
	s=$?
	if grep -q '^1\.\.0 # SKIP' "$tmp/v"; then
		skip "$(sed -n 's/^1\.\.0 # SKIP //p' "$tmp/v")"
		return
	fi
	{ echo "# env: $emu --mode=$mode, the release named $rel"
	  cat "$tmp/v"; } >"$b/conform/emu-$mode@$rel.tap"
	short=$(echo "$rel" | cut -d. -f1,2)
	got=$(grep -c "^# Linux $short's behaviour" "$tmp/v")
	want=$(sh "$top/tests/conform-check.sh" "emu-$mode" "$emu" \
		--mode="$mode" "$ncf" | grep -c ' fails here')
	grep -A1 '^not ok' "$tmp/v" | sed 's/^/# /'
	[ $s -eq 0 ] && [ "$got" -eq "$want" ] && [ "$want" -gt 0 ]
	ok $? "as Linux $rel, --mode=$mode is conformant ($got of $want \
cases the version's own)"
}
version 4.16.0 old
version 4.18.0 4.17
version 5.4.0 5.4

# rr, where it can record on this machine (a CPU whose counters it knows,
# perf events allowed): any verdict, kept for docs/conformance.md; else
# why not, kept too.
rm -f "$b/conform/rr.why" "$b/conform/rr.tap"
if ! command -v rr >/dev/null 2>&1; then
	why="rr is not installed"
elif ! rr record -o "$tmp/rr-true" true >"$tmp/rr.err" 2>&1; then
	why="\`rr record true\` fails: $(grep -v '^$' "$tmp/rr.err" |
		head -n 1)"
else
	why=
fi
if [ -n "$why" ]; then
	echo "$why" >"$b/conform/rr.why"
	skip "$why"
else
	NCB_CONFORM_SAVE=$b/conform/rr.tap sh "$top/tests/conform-check.sh" \
		"?" rr record -o "$tmp/rr-trace" "$ncf" >"$tmp/tap" 2>&1
	s=$?
	grep -v '^ok\|^1\.\.' "$tmp/tap"
	ok $s "noclobber-conform under rr record answers every case"
fi

# The page the runs make: a row for each run kept so far.
sh "$top/scripts/conformance-doc" "$b/conform" "$tmp/page.md" >/dev/null
s=$?
[ $s -eq 0 ] && grep -q '^| emu-anywhere | ' "$tmp/page.md" &&
	grep -q '^| `overlap.end` |' "$tmp/page.md"
ok $? "scripts/conformance-doc writes a page from the runs (status $s)"

done_testing
