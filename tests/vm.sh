#!/bin/sh
# The VM harness (tests/vm) itself: a script's status comes back, a guest
# that does not finish is killed with a clear message, and a missing
# kernel or qemu is said, by run.sh and by a row (a SKIP).  One boot of
# Debian's Linux 6.12 (or 6.1) for the statuses, one for the timeout.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
run=$top/tests/vm/run.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Without a kernel: run.sh says which and how to get it; a row skips.
mkdir "$tmp/none"
NCB_VM_DIR=$tmp/none "$run" -n 6.1 >"$tmp/o" 2>&1
[ $? -eq 125 ] && grep -q 'no Linux 6.1 in .*kernels.sh fetch 6.1' "$tmp/o"
ok $? "no kernel: status 125 and how to fetch it"
NCB_VM_DIR=$tmp/none sh "$top/tests/vm/row.sh" 6.12 check >"$tmp/o" 2>&1
grep -q '^1\.\.0 # SKIP no Linux 6.12' "$tmp/o"
ok $? "no kernel: the row is a SKIP with the reason"
# Without qemu: a PATH of the shell's tools only.
mkdir "$tmp/bin"
for t in sh cat grep mkdir rm cp dirname timeout; do
	ln -s "$(command -v "$t")" "$tmp/bin/$t"
done
PATH=$tmp/bin "$run" -n 6.1 >"$tmp/o" 2>&1
[ $? -eq 125 ] && grep -q 'qemu-system-x86_64 is not installed' "$tmp/o"
ok $? "no qemu: status 125 and the package"
status 2 "no arguments: usage" "$run"

series=
for s in 6.12 6.1; do
	if "$run" -n "$s" >/dev/null 2>&1; then
		series=$s
		break
	fi
done
if [ -z "$series" ]; then
	skip "no kernel for the VM rows: tests/vm/kernels.sh fetch"
	done_testing
	exit
fi
printf 'echo "$(uname -r) $(id -u)"\nexit 3\n' >"$tmp/s"
"$run" "$series" "$tmp/io" "$tmp/s" 2>"$tmp/e"
st=$?
[ "$st" -eq 3 ] || { echo "# status $st"; sed 's/^/# /' "$tmp/e"; }
[ "$st" -eq 3 ]
ok $? "Linux $series: the script's status comes back"
rel=$(cat "${NCB_VM_DIR:-$top/build/vm}/$series/release")
[ "$(cat "$tmp/io/out")" = "$rel 0" ]
ok $? "Linux $series: the script ran as root in the guest"
echo 'sleep 100000' >"$tmp/s"
"$run" -t 30 "$series" "$tmp/io" "$tmp/s" 2>"$tmp/e"
[ $? -eq 124 ] && grep -q 'did not finish in 30 s' "$tmp/e"
ok $? "a guest that does not finish: killed, status 124"
done_testing
