#!/bin/sh
# guest.sh SET SERIES: run in the guest by row.sh.  Each item of the set
# (see items.sh) with its output in /run/io/res/ITEM.out and its status in
# /run/io/res/ITEM.rc, one after the other: each has the guest to
# itself.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/vm/items.sh"
set_env "${1:?set}" "${2:?series}"
res=/run/io/res
mkdir -p "$res"
cd "$top" || exit 1
echo "# Linux $(uname -r), $(nproc) CPUs," \
	"mmap_min_addr $(cat /proc/sys/vm/mmap_min_addr)"
for i in $(items); do
	s=$(date +%s)
	# shellcheck disable=SC2046
	timeout -k 10 "$item_timeout" $(item_command "$i") \
		>"$res/$i.out" 2>&1 </dev/null
	echo $? >"$res/$i.rc"
	echo "# $i: $(($(date +%s) - s)) s"
done
# What the kernel said of the run: a warning or an oops is a failure of
# its own.
dmesg | grep -E 'WARNING:|BUG:|Oops|general protection' >"$res/dmesg" || :
exit 0
