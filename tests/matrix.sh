#!/bin/sh
# The kernel-behaviour matrix: every test program in every environment,
# run by one prove.  A row whose tool is missing reports SKIP and why.
#
#   row          runs                                  MAP_FIXED_NOREPLACE
#   native       the host kernel                       honoured
#   emu-old      tests/ncb-emu --mode=old (ptrace)     ignored (< 4.17)
#   emu-4.17     tests/ncb-emu --mode=4.17 (ptrace)    partial (4.17, 4.18)
#   qemu-x86_64  qemu-user                             ignored
#   valgrind     valgrind memcheck                     ignored
#   i386         an i686 build, static, on the host    honoured
#   aarch64      an aarch64 build under qemu-aarch64   ignored
set -u
cd "$(dirname "$0")/.." || exit 1
top=$(pwd)
jobs=${NCB_JOBS:-$(nproc 2>/dev/null || echo 2)}
M=build/matrix

make -s -j"$jobs" O=build/native all tests || exit 1
# The ptrace emulator needs libseccomp; without it its rows say so.
emu=
make -s O=build/native test-helpers 2>/dev/null ||
	emu="tests/ncb-emu needs libseccomp-dev, which is not installed"
have() { command -v "$1" >/dev/null 2>&1; }
if have i686-linux-gnu-gcc; then
	make -s -j"$jobs" O=build/i386 CC=i686-linux-gnu-gcc \
		CFLAGS="-O2 -g -m32" LDFLAGS=-static tests \
		build/i386/noclobber || exit 1
fi
if have aarch64-linux-gnu-gcc; then
	make -s -j"$jobs" O=build/aarch64 CC=aarch64-linux-gnu-gcc \
		LDFLAGS=-static tests build/aarch64/noclobber || exit 1
fi

rm -rf "$M"
# row NAME EXPECT MISSING-TOOL-OR-EMPTY ENV RUNNER BUILD
row() {
	name=$1 expect=$2 missing=$3 env=$4 runner=$5 build=$6
	mkdir -p "$M/$name"
	for src in tests/t-*.c; do
		t=$(basename "$src" .c)
		f="$M/$name/$t.t"
		if [ -n "$missing" ]; then
			printf '#!/bin/sh\necho "1..0 # SKIP %s"\n' \
				"$missing" > "$f"
			continue
		fi
		cat > "$f" <<SCRIPT
#!/bin/sh
NCB_EXPECT_NOREPLACE=$expect $env
export NCB_EXPECT_NOREPLACE NCB_TEST_SLOW NCB_TEST_VALGRIND NCB_MODEL_SEEDS \
	NCB_MODEL_OPS
$runner "$top/$build/tests/$t"
rc=\$?
[ \$rc -eq 77 ] && rc=0
exit \$rc
SCRIPT
	done
}
tool() { have "$1" || echo "$1 is not installed"; }

# The model's differential run: 1,000,000 operations against the kernel.
row native honoured "" "NCB_MODEL_SEEDS=8 NCB_MODEL_OPS=125000" "" \
	build/native
row emu-old ignored "$emu" "" "$top/build/native/tests/ncb-emu --mode=old" \
	build/native
row emu-4.17 partial "$emu" "" \
	"$top/build/native/tests/ncb-emu --mode=4.17" build/native
row qemu-x86_64 ignored "$(tool qemu-x86_64)" "NCB_TEST_SLOW=1" \
	qemu-x86_64 build/native
row valgrind ignored "$(tool valgrind)" \
	"NCB_TEST_SLOW=1 NCB_TEST_VALGRIND=1" \
	"valgrind -q --error-exitcode=99 --trace-children=no" build/native
row i386 honoured "$(tool i686-linux-gnu-gcc)" "" "" build/i386
a64=$(tool aarch64-linux-gnu-gcc)
[ -z "$a64" ] && a64=$(tool qemu-aarch64)
row aarch64 ignored "$a64" "NCB_TEST_SLOW=1" qemu-aarch64 build/aarch64

mkdir -p "$M/tools"
for s in tests/*.sh; do
	case $s in tests/matrix.sh | tests/tap.sh) continue ;; esac
	t=$(basename "$s" .sh)
	printf '#!/bin/sh\nexec sh "%s/%s" "%s/build/native"\n' "$top" "$s" \
		"$top" > "$M/tools/$t.t"
done

exec prove -j"$jobs" --timer --failures --comments --exec /bin/sh -r "$M"
