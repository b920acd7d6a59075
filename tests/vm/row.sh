#!/bin/sh
# row.sh SERIES SET: a VM row of the matrix as one TAP stream.  Boots
# Debian's Linux SERIES once (run.sh), runs the SET's items in it
# (guest.sh, items.sh) and reports one test an item: ok, a SKIP with the
# item's reason, or not ok with the item's failures as comments.  No
# kernel or no qemu: the plan of a skip, with the reason.
set -u
series=${1:?series}
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/items.sh"
set_env "${2:?set}" "$series" || exit 1
io=$top/build/vm-io/$series-$vm_set
why=$("$top/tests/vm/run.sh" -n "$series" 2>&1) || {
	echo "1..0 # SKIP ${why#run.sh: }"
	exit 0
}
rm -rf "$io"
mkdir -p "$io"
set -- $(items)
echo "1..$#"
printf 'sh %s/tests/vm/guest.sh %s %s\n' "$top" "$vm_set" "$series" \
	>"$io/guest"
# The whole set's time, and some for booting.
"$top/tests/vm/run.sh" -t $((item_timeout * 2 + 600)) "$series" "$io" \
	"$io/guest" 2>"$io/run.err"
st=$?
sed 's/^/# /' "$io/run.err"
[ -f "$io/out" ] && grep '^#' "$io/out"
n=0
for i; do
	n=$((n + 1))
	o=$io/res/$i.out
	rc=$(cat "$io/res/$i.rc" 2>/dev/null || echo none)
	if [ "$rc" = none ]; then
		echo "not ok $n - $i # did not run (the guest: status $st)"
	elif [ "$rc" = 77 ] || { [ "$rc" = 0 ] &&
	     grep -q '^1\.\.0 *# *SKIP' "$o"; }; then
		r=$(sed -n 's/.*# *SKIP *//p' "$o" | head -n 1)
		echo "ok $n - $i # SKIP ${r:-skipped}"
	elif [ "$rc" = 0 ] && ! grep -q '^not ok' "$o"; then
		echo "ok $n - $i"
	else
		# Each failure with the comments just before it.
		awk '/^not ok/ { for (k = 0; k < c; k++) print "# " b[k];
				 print "# " $0; c = 0; next }
		     /^#/ { if (c == 8) { for (k = 1; k < 8; k++)
					b[k - 1] = b[k]; c = 7 }
			    b[c++] = $0; next }
		     { c = 0 }' "$o"
		[ "$rc" = 124 ] && echo "# $i: killed after $item_timeout s"
		echo "not ok $n - $i (status $rc)"
	fi
done
# The conformance suite's answers, kept for scripts/conformance-doc.
if [ -f "$io/res/noclobber-conform.out" ]; then
	mkdir -p "$top/build/native/conform"
	{ echo "# env: noclobber-conform in Debian's Linux $series (tests/vm)"
	  cat "$io/res/noclobber-conform.out"; } \
		>"$top/build/native/conform/vm-$series.tap"
fi
if [ -s "$io/res/dmesg" ]; then
	sed 's/^/# /' "$io/res/dmesg"
	n=$((n + 1))
	echo "not ok $n - the kernel's log has warnings"
fi
