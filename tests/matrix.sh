#!/bin/sh
# The kernel-behaviour matrix: every test program in every environment,
# run by one prove.  A row whose tool is missing reports SKIP and why.
#
#   row            runs                                  MAP_FIXED_NOREPLACE
#   native         the host kernel                       by its version
#   emu-old        tests/ncb-emu --mode=old (ptrace)     ignored (< 4.17)
#   emu-4.17       tests/ncb-emu --mode=4.17 (ptrace)    partial (4.17, 4.18)
#   faults         tests/ncb-emu --faults: ENOMEM injected  native, old, 4.17
#                  (and natively as if 6.1: tests/with-release.sh)
#   qemu-x86_64    qemu-user                             by its version
#   valgrind       valgrind memcheck                     by its version
#   asan           clang, ASan and UBSan, natively       by the kernel
#   ARCH-native    a static cross build (tests/targets.sh) on the host
#   ARCH-qemu      the same under qemu-ARCH, where the host cannot run it
#   vm-6.1         Debian's Linux 6.1 in a VM (tests/vm)    honoured
#   vm-6.12        Debian's Linux 6.12 in a VM              honoured
#
# ARCH is each of i386, aarch64, riscv64, ppc64le, s390x and armhf; the
# row's name says how it ran.  Each row runs noclobber-conform too, which
# must fail exactly the cases its environment is known to break
# (tests/conform-expect).  A VM row is one test an item of its set
# (tests/vm/items.sh): NCB_VM_SET=all (make check-vm) runs all of them.
# NCB_HOST_NOREPLACE names the host kernel's behaviour where its version
# does not tell (see tests/targets.sh).
#
# NCB_ROWS, when set, is a list of patterns naming the rows to run; the
# others are neither built nor listed.  "tools" is the row of the shell
# tests, each of which is also "tools/NAME"; a pattern after "!" leaves
# out what it names.  A package build tests the build it ships so
# (debian/rules).
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
jobs=${NCB_JOBS:-$(nproc 2>/dev/null || echo 2)}
export NCB_JOBS=$jobs
M=build/matrix
. tests/targets.sh

# want NAME...: NCB_ROWS asks for some NAME and leaves out none (all are
# asked for without it).
want() {
	[ -n "${NCB_ROWS:-}" ] || return 0
	w_in=1 w_out=1
	# The patterns are split, not matched against file names.
	set -f
	for w_row; do
		for w_pat in $NCB_ROWS; do
			# shellcheck disable=SC2254
			case $w_pat in
			!*) case $w_row in ${w_pat#!}) w_out=0 ;; esac ;;
			*) case $w_row in $w_pat) w_in=0 ;; esac ;;
			esac
		done
	done
	set +f
	[ $w_in -eq 0 ] && [ $w_out -ne 0 ]
}
[ -z "${NCB_ROWS:-}" ] || echo "# only the rows $NCB_ROWS"

make -s -j"$jobs" O=build/native all tests || exit 1
# The ptrace emulator needs libseccomp and ptrace; without them its rows
# say so.
emu=
if ! make -s O=build/native test-helpers 2>/dev/null; then
	emu="tests/ncb-emu needs libseccomp-dev, which is not installed"
elif ! build/native/tests/ncb-emu --mode=old /bin/true 2>/dev/null; then
	emu="tests/ncb-emu cannot trace here (ptrace not permitted)"
fi
# Without clang or its sanitizer runtimes the row says so; a build that
# fails with them is the code's fault, and fails the run.
asan=
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
if ! want asan; then
	:
elif ! have clang; then
	asan="clang is not installed"
elif ! echo 'int main(void) { return 0; }' |
	clang $san -x c -o build/asan-probe - 2>/dev/null; then
	asan="clang cannot link ASan and UBSan programs (libclang-rt-dev?)"
elif ! make -s -j"$jobs" O=build/asan CC=clang CFLAGS="-O1 -g $san" \
	all tests >build/asan.log 2>&1; then
	tail -20 build/asan.log >&2
	echo "# asan: the clang build failed (build/asan.log)" >&2
	exit 1
fi
rm -f build/asan-probe

rm -rf "$M"
mkdir -p "$M"
# row NAME EXPECT MISSING-TOOL-OR-EMPTY ENV RUNNER BUILD
row() {
	name=$1 expect=$2 missing=$3 env=$4 runner=$5 build=$6
	want "$name" || return 0
	mkdir -p "$M/$name"
	echo "# $name: ${missing:-${runner:-the host kernel}}; the flag" \
		"${expect:-any verdict}"
	# Each test program, and the mmap ones built on the core alone.
	for t in $(cd tests && ls t-*.c | sed 's/\.c$//') \
		t-errno-core t-mremap-core t-stress-core; do
		f="$M/$name/$t.t"
		if [ -n "$missing" ]; then
			printf '#!/bin/sh\necho "1..0 # SKIP %s"\n' \
				"$missing" > "$f"
			continue
		fi
		cat > "$f" <<SCRIPT
#!/bin/sh
$env
[ -n "$expect" ] && NCB_EXPECT_NOREPLACE=$expect
export NCB_EXPECT_NOREPLACE NCB_TEST_SLOW NCB_TEST_VALGRIND NCB_TEST_QEMU \
	NCB_MODEL_SEEDS NCB_MODEL_OPS ASAN_OPTIONS UBSAN_OPTIONS 2>/dev/null
$runner "$top/$build/tests/$t"
rc=\$?
[ \$rc -eq 77 ] && rc=0
exit \$rc
SCRIPT
	done
	conform_row "$@"
}
# conform_keys ROW EXPECT: the failures noclobber-conform must show in the
# row, as keys of tests/conform-expect ("?": no verdict assumed).
conform_keys() {
	case $1:$2 in
	emu-*) echo "$1" ;;
	*:honoured) echo "" ;;
	valgrind:ignored) echo valgrind-3 ;;
	qemu-x86_64:ignored) echo "qemu-7 qemu-7/x86_64" ;;
	i386-qemu:ignored | armhf-qemu:ignored) echo "qemu-7 qemu-7/32" ;;
	*-qemu:ignored) echo qemu-7 ;;
	*) echo "?" ;;
	esac
}
# The conformance suite's program in the row, judged by what the row's
# environment is known to break (tests/conform-check.sh).
conform_row() {
	f="$M/$1/noclobber-conform.t"
	if [ -n "$3" ]; then
		printf '#!/bin/sh\necho "1..0 # SKIP %s"\n' "$3" >"$f"
		return
	fi
	# memcheck does not follow a static C library's allocator: what it
	# says there is about glibc, not the rules, and not the status.
	r=$(echo "$5" | sed 's/ --error-exitcode=[0-9]*//')
	cat >"$f" <<SCRIPT
#!/bin/sh
$4
export NCB_CONFORM_SAVE="$top/build/native/conform/$1.tap"
exec sh "$top/tests/conform-check.sh" "$(conform_keys "$1" "$2")" \
	$r "$top/$6/noclobber-conform"
SCRIPT
}
tool() { have "$1" || echo "$1 is not installed"; }
host=$(host_expect)

# The model's differential run: 1,000,000 operations against the kernel.
row native "$host" "" "NCB_MODEL_SEEDS=8 NCB_MODEL_OPS=125000" "" \
	build/native
row emu-old ignored "$emu" "" "$top/build/native/tests/ncb-emu --mode=old" \
	build/native
row emu-4.17 partial "$emu" "" \
	"$top/build/native/tests/ncb-emu --mode=4.17" build/native
# Faults: the programs that arm the emulator's injection (tests/faults.h)
# under it, at two rates and three seeds, in each kernel's behaviour, with
# a failed MAP_FIXED keeping its range (6.12) or unmapping it (before);
# and natively with the kernel naming itself 6.1, whose library paths
# (commits made elsewhere and moved) this kernel would not take.
faults_row() {
	want faults || return 0
	mkdir -p "$M/faults"
	echo "# faults: ${emu:-ENOMEM injected by tests/ncb-emu --faults}"
	for t in $(grep -l 'test_faults(' tests/t-*.c); do
		t=$(basename "$t" .c)
		for m in native old 4.17 native@6.1.0; do
			for u in "" --unmap-first; do
				for rs in 5:1 25:2 25:3; do
					faults_case "$t" "$m" "$u" "${rs%:*}" \
						"${rs#*:}"
				done
			done
		done
	done
}
# faults_case PROGRAM MODE[@RELEASE] [--unmap-first] PERCENT SEED
faults_case() {
	f="$M/faults/$1-$2${3:+-unmap}-$4-$5.t"
	if [ -n "$emu" ]; then
		printf '#!/bin/sh\necho "1..0 # SKIP %s"\n' "$emu" >"$f"
		return
	fi
	case $2 in
	*@*) rel="$top/tests/with-release.sh ${2#*@} " ;;
	*) rel= ;;
	esac
	{
		echo '#!/bin/sh'
		[ -n "$3" ] && echo 'export NCB_FAULTS_UNMAP_FIRST=1'
		echo "exec $rel$top/build/native/tests/ncb-emu --mode=${2%@*}" \
			"--faults=$4 --seed=$5 $3 $top/build/native/tests/$1"
	} >"$f"
}
faults_row
q=$(host_qemu)
row "$q" "$(qemu_expect "$q")" "$(tool "$q")" \
	"NCB_TEST_SLOW=1 NCB_TEST_QEMU=1" "$q" build/native
row valgrind "$(valgrind_expect)" "$(tool valgrind)" \
	"NCB_TEST_SLOW=1 NCB_TEST_VALGRIND=1" \
	"valgrind -q --error-exitcode=99 --trace-children=no" build/native
row asan "$host" "$asan" \
	"ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1" "" \
	build/asan

while read -r arch rest; do
	want "$arch" "$arch-native" "$arch-qemu" || continue
	target_how "$top" "$arch"
	if [ "$t_how" != skip ] && ! target_build "$top" "$arch"; then
		echo "# $arch: the cross build failed" >&2
		exit 1
	fi
	case $t_how in
	native) row "$arch-native" "$host" "" "" "" "build/$arch" ;;
	qemu) row "$arch-qemu" "$(qemu_expect "$t_runner")" "" \
		"NCB_TEST_SLOW=1 NCB_TEST_QEMU=1" "$t_runner" "build/$arch" ;;
	*) row "$arch" "" "$t_why" "" "" "build/$arch" ;;
	esac
	[ "$t_how" = skip ] || echo "#   ($t_why)"
done <<EOF
$ncb_targets
EOF

mkdir -p "$M/tools"
for s in tests/*.sh; do
	case $s in
	tests/matrix.sh | tests/tap.sh | tests/targets.sh | \
	tests/with-release.sh | tests/conform-check.sh | \
	tests/watch-events.sh | tests/preload-setup.sh) continue ;;
	esac
	t=$(basename "$s" .sh)
	want tools "tools/$t" || continue
	printf '#!/bin/sh\nNCB_EXPECT_NOREPLACE=%s exec sh "%s/%s" %s\n' \
		"$host" "$top" "$s" "\"$top/build/native\"" > "$M/tools/$t.t"
done

# The VM rows: one boot of each kernel for the whole set.
for s in 6.1 6.12; do
	want "vm-$s" || continue
	mkdir -p "$M/vm-$s"
	printf '#!/bin/sh\nexec sh "%s/tests/vm/row.sh" %s %s\n' "$top" "$s" \
		"${NCB_VM_SET:-check}" >"$M/vm-$s/row.t"
done

# The longest first (the VM rows), so that they do not start last.
exec prove -j"$jobs" --timer --failures --comments --exec /bin/sh \
	$(find "$M" -path "$M/vm-*" -name '*.t' | sort) \
	$(find "$M" -name '*.t' ! -path "$M/vm-*" | sort)
