# Sourced by matrix.sh and exec.sh: the architectures the matrix builds
# for, how this machine runs each, and what each environment does with
# MAP_FIXED_NOREPLACE (known from versions, independently of the library's
# probe, which the tests check against it).
#
#   NAME     compiler                    qemu-user      extra CFLAGS
ncb_targets="i386     i686-linux-gnu-gcc          qemu-i386      -m32
aarch64  aarch64-linux-gnu-gcc       qemu-aarch64
riscv64  riscv64-linux-gnu-gcc       qemu-riscv64
ppc64le  powerpc64le-linux-gnu-gcc   qemu-ppc64le
s390x    s390x-linux-gnu-gcc         qemu-s390x
armhf    arm-linux-gnueabihf-gcc     qemu-arm"

have() { command -v "$1" >/dev/null 2>&1; }

# target NAME: sets t_gcc, t_qemu, t_cflags (empty if NAME is unknown).
target() {
	t_gcc= t_qemu= t_cflags=
	# shellcheck disable=SC2034
	while read -r t_name t_g t_q t_c; do
		[ "$t_name" = "$1" ] || continue
		t_gcc=$t_g t_qemu=$t_q t_cflags=$t_c
	done <<EOF
$ncb_targets
EOF
}

# target_build TOP NAME: the tools and the test programs, static.
target_build() {
	target "$2"
	make -s -C "$1" -j"${NCB_JOBS:-2}" O="build/$2" CC="$t_gcc" \
		CFLAGS="-O2 -g $t_cflags" LDFLAGS=-static tests \
		"build/$2/noclobber" "build/$2/noclobber-conform" </dev/null
}

# target_how TOP NAME: how this machine runs NAME's programs.  Sets
# t_how (native, qemu or skip), t_runner (empty when native) and t_why.
# A tiny static program finds out: some kernels run i386 programs and some
# refuse them (IA-32 emulation off), and a program the kernel hands to an
# emulator (binfmt_misc) reports that emulator's machine, not the host's.
target_how() {
	target "$2"
	t_how=skip t_runner= t_why=
	if [ -z "$t_gcc" ]; then
		t_why="no target $2"
		return
	fi
	if ! have "$t_gcc"; then
		t_why="$t_gcc is not installed"
		return
	fi
	d=$1/build/$2
	# A build tree shared read-only (a VM row's guest): a directory of
	# its own, in the guest's own /tmp.
	mkdir -p "$d" 2>/dev/null && [ -w "$d" ] || d=$(mktemp -d)
	printf '%s\n' '#include <stdio.h>' '#include <sys/utsname.h>' \
		'int main(void) { struct utsname u; uname(&u);' \
		'printf("%s\n", u.machine); return 0; }' >"$d/machine.c"
	if ! $t_gcc $t_cflags -static -o "$d/machine" "$d/machine.c" \
		2>"$d/machine.err"; then
		t_why="$t_gcc cannot build a static program"
		return
	fi
	m=$("$d/machine" 2>"$d/machine.err" </dev/null)
	if [ "$m" = "$(uname -m)" ]; then
		t_how=native t_why="this kernel runs $2 programs"
		return
	fi
	if [ -n "$m" ]; then
		t_why="this kernel hands $2 programs to an emulator ($m)"
	else
		t_why="this kernel refuses $2 programs: $(head -c 80 \
			"$d/machine.err" | sed 's/.*: //')"
	fi
	if ! have "$t_qemu"; then
		t_why="$t_why, and $t_qemu is not installed"
		return
	fi
	t_how=qemu t_runner=$t_qemu
}

# What the host kernel does with the flag, from its version: 4.19 and
# later honour it, older kernels take it as a hint; 4.17 and 4.18 replaced
# a mapping starting inside the range unless their stable updates carry
# the fix (7aa867dd8952), so any verdict is taken there.
# NCB_HOST_NOREPLACE overrides it for a kernel whose version says nothing
# (gVisor reports its own).
# i386_static TOP OUT SOURCE FLAGS...: SOURCE built static for i386 into
# OUT where this machine runs i386 programs itself: 0 built, 1 the build
# failed, 2 not here (t_why says why).
i386_static() {
	target_how "$1" i386
	[ "$t_how" = native ] || return 2
	_out=$2
	shift 2
	$t_gcc -m32 -static -O1 -o "$_out" "$@" || return 1
}

# i386_dynamic TOP OUT SOURCE FLAGS...: as i386_static, linked against
# the C library's shared objects, where this machine has them to run it
# (libc6-i386's loader).
i386_dynamic() {
	target_how "$1" i386
	[ "$t_how" = native ] || return 2
	if [ ! -e /lib/ld-linux.so.2 ]; then
		t_why="no i386 C library to run it (libc6-i386)"
		return 2
	fi
	_out=$2
	shift 2
	$t_gcc -O1 -o "$_out" "$@" || return 1
}

host_expect() {
	if [ -n "${NCB_HOST_NOREPLACE:-}" ]; then
		echo "$NCB_HOST_NOREPLACE"
		return
	fi
	uname -r | awk -F'[.-]' '{
		v = $1 * 1000 + $2
		print (v >= 4019 ? "honoured" : v >= 4017 ? "" : "ignored")
	}'
}

# qemu-user for this machine's own architecture, by qemu's name for it.
host_qemu() {
	case $(uname -m) in
	i?86) echo qemu-i386 ;;
	armv7l | armv8l) echo qemu-arm ;;
	*) echo "qemu-$(uname -m)" ;;
	esac
}

# qemu-user 7 (Debian 12's) takes the flag as a hint.  Later versions
# check the guest's page table; no verdict is assumed for them (empty).
qemu_expect() {
	"$1" --version 2>/dev/null | awk 'NR == 1 {
		for (i = 1; i <= NF; i++)
			if ($i == "version") { split($(i + 1), v, "."); break }
		print (v[1] != "" && v[1] < 8 ? "ignored" : "")
	}'
}

# valgrind learnt the flag in 2025 (bug 418756); 3.24 and older take it
# as a hint.  No verdict is assumed for later versions (empty).
valgrind_expect() {
	valgrind --version 2>/dev/null | awk -F'[-.]' '{
		v = $2 * 1000 + $3
		print (v > 0 && v < 3025 ? "ignored" : "")
	}'
}
