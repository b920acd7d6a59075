#!/bin/sh
# run.sh [-t SECONDS] SERIES IODIR SCRIPT: boots Debian's kernel of SERIES
# (tests/vm/kernels.sh fetched it) under qemu-system-x86_64 with the
# host's file system read-only, runs SCRIPT with sh as root there, and
# exits with its status.  IODIR (the guest's /run/io, writable) receives
# out (the script's output), rc, console.log (the kernel's).  KVM where
# the machine has hardware virtualisation, TCG otherwise.  The guest is
# killed after SECONDS (default 3600): status 124.  Anything else that
# keeps the script from running: a message and status 125.
#
# run.sh -n SERIES: only whether it could (status 0), or why not (125).
set -u
tmo=3600
dry=
case ${1:-} in
-t)
	tmo=$2
	shift 2 ;;
-n)
	dry=1
	set -- "${2:-}" /nonexistent /nonexistent ;;
esac
if [ $# -ne 3 ]; then
	echo "usage: run.sh [-t SECONDS] SERIES IODIR SCRIPT" >&2
	exit 2
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
kd=${NCB_VM_DIR:-$top/build/vm}/$1
io=$2
script=$3
fail() {
	echo "run.sh: $*" >&2
	exit 125
}
command -v qemu-system-x86_64 >/dev/null ||
	fail "qemu-system-x86_64 is not installed (qemu-system-x86)"
[ -f "$kd/release" ] && [ -f "$kd/initrd.gz" ] ||
	fail "no Linux $1 in $kd (tests/vm/kernels.sh fetch $1)"
rel=$(cat "$kd/release")
[ -f "$kd/root/boot/vmlinuz-$rel" ] || fail "$kd has no vmlinuz-$rel"
[ -z "$dry" ] || exit 0
[ -r "$script" ] || fail "no script $script"
mkdir -p "$io" || fail "cannot make $io"
io=$(cd "$io" && pwd)
rm -f "$io/rc" "$io/out" "$io/console.log"
cp "$script" "$io/cmd" || fail "cannot write to $io"
cat >"$io/stage2" <<'STAGE2'
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp LC_ALL=C.UTF-8
cd /
sh /run/io/cmd >/run/io/out 2>&1 </dev/null
echo $? >/run/io/rc
sync
busybox poweroff -f
STAGE2
# kvm_pvm answers KVM_CREATE_VM without the hardware, and qemu 7.2 fails
# on it: real KVM only where the CPU says vmx or svm.
accel="-accel tcg,thread=multi -cpu max"
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo &&
   ! grep -q '^kvm_pvm ' /proc/modules 2>/dev/null; then
	accel="-accel kvm -cpu host"
fi
# The kernel's messages and /init's on the second serial port; the
# script's output goes to the share.  BPF among the LSMs: watch --system
# --deny's programs attach there.  x32's calls taken (Debian builds them
# in, off by default): the watchers must see them too.
cmdline="console=ttyS1 panic=-1 quiet loglevel=3"
cmdline="$cmdline lsm=lockdown,capability,landlock,yama,bpf syscall.x32=y"
# The host's devices as distinct devices: inodes stay unique.
remap=multidevs=remap
# One CPU by default: under TCG with two, 6.12's guests die now and then
# of an int3 in the syscall entry while BPF tracepoints are switched on
# or off (two empty tp_btf programs attached and detached in a loop do
# it: the live patching of the kernel's text across CPUs), and the host
# has but two cores for both guests.
# shellcheck disable=SC2086
timeout -k 10 "$tmo" qemu-system-x86_64 $accel -smp "${NCB_VM_CPUS:-1}" \
	-m "${NCB_VM_MEM:-2G}" \
	-kernel "$kd/root/boot/vmlinuz-$rel" -initrd "$kd/initrd.gz" \
	-append "$cmdline" \
	-fsdev "local,id=root,path=/,security_model=none,readonly=on,$remap" \
	-device virtio-9p-pci,fsdev=root,mount_tag=root \
	-fsdev local,id=io,path="$io",security_model=none \
	-device virtio-9p-pci,fsdev=io,mount_tag=io \
	-no-reboot -nodefaults -display none -monitor none \
	-serial null -serial file:"$io/console.log" \
	</dev/null >"$io/qemu.log" 2>&1
q=$?
if [ $q -eq 124 ] || [ $q -eq 137 ]; then
	echo "run.sh: the guest (Linux $rel) did not finish in $tmo s;" \
		"its kernel's log: $io/console.log" >&2
	exit 124
fi
if [ ! -f "$io/rc" ]; then
	tail -n 5 "$io/console.log" "$io/qemu.log" >&2 2>/dev/null
	fail "Linux $rel did not run the script (qemu: $q; $io/console.log)"
fi
exit "$(cat "$io/rc")"
