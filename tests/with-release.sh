#!/bin/sh
# with-release.sh RELEASE COMMAND...: COMMAND with the kernel naming itself
# RELEASE (/proc/sys/kernel/osrelease, bound over in a mount namespace of
# its own).  The library reads the release only to choose between paths
# no experiment can choose between (src/resv.c's commits before 6.12);
# this runs the paths of another release on this kernel.  Where no mount
# namespace can be made, the TAP plan of a skip.
set -u
rel=${1:?release}
shift
skip() {
	echo "1..0 # SKIP $1"
	exit 0
}
f=$(mktemp) || skip "no temporary file for the release"
echo "$rel" >"$f"
if unshare -m true 2>/dev/null; then
	ns="unshare -m"
elif unshare -rm true 2>/dev/null; then
	ns="unshare -rm"
else
	rm -f "$f"
	skip "no mount namespace to name the kernel $rel in"
fi
# The file can go once bound: the mount holds it.
exec $ns sh -c '
	if ! mount --bind "$0" /proc/sys/kernel/osrelease 2>/dev/null; then
		rm -f "$0"
		echo "1..0 # SKIP cannot bind a release over osrelease"
		exit 0
	fi
	rm -f "$0"
	exec "$@"' "$f" "$@"
