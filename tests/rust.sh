#!/bin/sh
# The Rust binding (rust/): cargo test (unit tests, doctests, an
# integration test per API, noclobber-sys's check against the header),
# clippy and rustfmt, and the JIT example, one TAP line each, against this
# build's library; then the same tests cross-built for aarch64 and run
# under qemu-aarch64.  Debian's toolchain only (/usr/bin/cargo, rustc,
# rustdoc: packages cargo, rustc, rust-clippy, rustfmt; the aarch64
# standard library is libstd-rust-dev:arm64's, which scripts/install-deps
# unpacks in build/rust-std), offline, whatever else PATH holds (a rustup
# toolchain).
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
. "$top/tests/targets.sh"
case $b in
/*) ;;
*) b=$(pwd)/$b ;;
esac
[ -e "$b/libnoclobber.so.0" ] || skip_all "no $b/libnoclobber.so.0: run make"
for t in cargo rustc rustdoc; do
	[ -x /usr/bin/$t ] || skip_all "Debian's $t is not installed \
(/usr/bin/$t: packages cargo and rustc)"
done
export PATH="/usr/bin:/bin:$PATH" RUSTC=/usr/bin/rustc \
	RUSTDOC=/usr/bin/rustdoc CARGO_HOME="$b/cargo-home" \
	CARGO_TARGET_DIR="$b/rust" NOCLOBBER_LIB_DIR="$b" \
	LD_LIBRARY_PATH="$b" CARGO_TERM_COLOR=never
unset RUSTFLAGS RUSTUP_TOOLCHAIN CARGO_BUILD_TARGET
cargo=/usr/bin/cargo
cd "$top/rust" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $($cargo --version), $(/usr/bin/rustc --version)"

# tests NAME LOG: each "test X ... ok" of cargo's report as a TAP line,
# and one for cargo itself.
tests() {
	sed 's/^/# /' "$2" | grep -v '^# test .* \.\.\. ' | grep -v '^# *$' |
		tail -40
	while read -r line; do
		case $line in
		"test "*" ... ok") ok 0 "$1: ${line% ... ok}" ;;
		"test "*" ... FAILED") ok 1 "$1: ${line% ... FAILED}" ;;
		"test "*" ... ignored") skip "$1: ${line% ... ignored}" ;;
		esac
	done < "$2"
}

$cargo test --offline --no-fail-fast >"$tmp/native" 2>&1
st=$?
tests native "$tmp/native"
ok $st "cargo test (status $st)"
grep -q '^test mirror_matches_the_header \.\.\. ok' "$tmp/native"
ok $? "noclobber-sys is checked against the header"

$cargo run --offline -q --example jit_call >"$tmp/jit" 2>&1
st=$?
sed 's/^/# /' "$tmp/jit"
case $(uname -m) in
x86_64 | aarch64) grep -q 'runtime_add(40, 2) = 42$' "$tmp/jit" ;;
*) [ $st -eq 0 ] ;;
esac
ok $? "examples/jit_call calls the runtime from generated code"

if [ -x /usr/bin/cargo-clippy ]; then
	$cargo clippy --offline --all-targets -- -D warnings \
		>"$tmp/clippy" 2>&1
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$tmp/clippy"
	ok $st "clippy finds nothing"
else
	skip "Debian's clippy is not installed (rust-clippy)"
fi
if [ -x /usr/bin/rustfmt ]; then
	$cargo fmt --all -- --check >"$tmp/fmt" 2>&1
	st=$?
	[ $st -eq 0 ] || sed 's/^/# /' "$tmp/fmt" | head -40
	ok $st "rustfmt changes nothing"
else
	skip "Debian's rustfmt is not installed (rustfmt)"
fi

# aarch64: the library and the tests static, as the matrix's rows are
# (Debian 12's qemu-aarch64 hangs dynamically linked programs that start
# threads, and the test harness does).  Doctests are not cross-built
# (cargo's -Zdoctest-xcompile is unstable).
std=$top/build/rust-std/aarch64/usr
sysroot="--sysroot $std"
[ -d /usr/lib/rustlib/aarch64-unknown-linux-gnu ] && sysroot=
a64() {
	target aarch64
	if [ "$(uname -m)" = aarch64 ]; then
		echo "this machine is aarch64: the native run was it"
	elif [ -n "$sysroot" ] &&
	     [ ! -d "$std/lib/rustlib/aarch64-unknown-linux-gnu" ]; then
		echo "no aarch64 standard library for Debian's rustc \
(libstd-rust-dev:arm64, unpacked in build/rust-std by scripts/install-deps)"
	elif ! have "$t_gcc"; then
		echo "$t_gcc is not installed"
	elif ! have "$t_qemu"; then
		echo "$t_qemu is not installed"
	fi
}
why=$(a64)
target aarch64
if [ -n "$why" ]; then
	skip "aarch64 under qemu: $why"
	done_testing
	exit
fi
lib=$top/build/rust-aarch64
make -s -C "$top" -j"${NCB_JOBS:-2}" O="$lib" CC="$t_gcc" \
	CFLAGS="-O2 -g" "$lib/libnoclobber.a" >"$tmp/lib" 2>&1
st=$?
[ $st -eq 0 ] || sed 's/^/# /' "$tmp/lib"
ok $st "the library built for aarch64"
tr=aarch64-unknown-linux-gnu
T=CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU
env NOCLOBBER_LIB_DIR="$lib" NOCLOBBER_STATIC=1 CC="$t_gcc" \
	"${T}_LINKER=$t_gcc" "${T}_RUNNER=$t_qemu" \
	"${T}_RUSTFLAGS=-C target-feature=+crt-static $sysroot" \
	$cargo test --offline --no-fail-fast --target $tr >"$tmp/a64" 2>&1
st=$?
tests aarch64 "$tmp/a64"
ok $st "cargo test for aarch64 under $t_qemu (status $st)"
env NOCLOBBER_LIB_DIR="$lib" NOCLOBBER_STATIC=1 "${T}_LINKER=$t_gcc" \
	"${T}_RUNNER=$t_qemu" \
	"${T}_RUSTFLAGS=-C target-feature=+crt-static $sysroot" \
	$cargo run --offline -q --target $tr --example jit_call \
	>"$tmp/jit64" 2>&1
sed 's/^/# /' "$tmp/jit64"
grep -q 'runtime_add(40, 2) = 42$' "$tmp/jit64"
ok $? "examples/jit_call on aarch64 calls the runtime with BL"
done_testing
