#!/bin/sh
# initrd.sh ROOT RELEASE OUT: an initramfs for Debian's kernel RELEASE
# unpacked in ROOT: busybox-static, the modules the 9p root needs (virtio
# is built into 6.12, modules in 6.1), and an /init that mounts the
# host's file system read-only (9p tag "root"), the kernel's file systems
# and tmpfs where programs write, a writable share (tag "io") at /run/io,
# and switches to /run/io/stage2 there.
set -eu
root=$(cd "$1" && pwd)
rel=$2
out=$3
bb=$(command -v busybox) || { echo "initrd.sh: busybox-static is not" \
	"installed" >&2; exit 1; }
# A dynamically linked busybox would need the host's libc in the image.
if ldd "$bb" >/dev/null 2>&1; then
	echo "initrd.sh: $bb is not busybox-static" >&2
	exit 1
fi
[ -f "$root/lib/modules/$rel/modules.dep" ] || depmod -b "$root" "$rel"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/bin" "$w/mods" "$w/proc" "$w/sys" "$w/dev" "$w/newroot"
cp "$bb" "$w/bin/busybox"
for c in sh mount mkdir insmod switch_root poweroff cat; do
	ln -s busybox "$w/bin/$c"
done
# In dependency order, each once; the shipped .ko.xz decompressed, as
# busybox's insmod takes only plain objects.
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -d "$root" -S "$rel" --show-depends "$m" 2>/dev/null |
		awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | {
	i=0
	while read -r f; do
		i=$((i + 1))
		b=$(printf '%02d-%s' "$i" "$(basename "$f" .xz)")
		case $f in
		*.xz) xz -dc "$f" >"$w/mods/$b" ;;
		*) cp "$f" "$w/mods/$b" ;;
		esac
		echo "$b" >>"$w/mods/order"
	done
}
touch "$w/mods/order"
cat >"$w/init" <<'INIT'
#!/bin/sh
fail() {
	echo "noclobber-vm: $*"
	poweroff -f
}
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do
	insmod "/mods/$m" || echo "noclobber-vm: insmod $m failed"
done
o=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o $o,ro,cache=loose root /newroot || fail "no root share"
n=/newroot
mount -t proc proc $n/proc
mount -t sysfs sys $n/sys
mount -t devtmpfs dev $n/dev
mkdir -p $n/dev/pts $n/dev/shm
mount -t devpts devpts $n/dev/pts
for d in /tmp /var/tmp /run /root /dev/shm; do
	mount -t tmpfs -o mode=1777 tmpfs $n$d
done
mount -t securityfs securityfs $n/sys/kernel/security 2>/dev/null
mount -t bpf bpf $n/sys/fs/bpf 2>/dev/null
mount -t debugfs debugfs $n/sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs $n/sys/kernel/tracing 2>/dev/null
mount -t cgroup2 cgroup2 $n/sys/fs/cgroup 2>/dev/null
mkdir -p $n/run/io
mount -t 9p -o $o io $n/run/io || fail "no io share"
exec switch_root $n /bin/sh /run/io/stage2
INIT
chmod +x "$w/init"
(cd "$w" && find . | busybox cpio -o -H newc 2>/dev/null) | gzip -1 >"$out"
