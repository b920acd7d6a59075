#!/bin/sh
# examples/jit-call.c: generated code calling the runtime with the
# machine's direct call, placed by ncb_resv_new within its reach: built
# against this build and run here, then built statically for aarch64 and
# run under qemu-aarch64 (BL's 128 MiB), as the matrix's rows run.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
. "$top/tests/targets.sh"
[ -e "$b/libnoclobber.a" ] || skip_all "no $b/libnoclobber.a: run make"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$top/examples/jit-call.c

# run NAME RUNNER...: the program prints the call's result, 42, where
# the machine has an emitter.
run() {
	name=$1
	shift
	"$@" >"$tmp/$name.out" 2>&1
	st=$?
	sed 's/^/# /' "$tmp/$name.out"
	[ $st -eq 0 ] && grep -q ' = 42$' "$tmp/$name.out"
}

${CC:-cc} -Wall -Wextra -Werror -I"$top/include" -o "$tmp/jit" "$src" \
	"$b/libnoclobber.a" -pthread
ok $? "jit-call builds"
case $(uname -m) in
x86_64 | aarch64)
	run native "$tmp/jit"
	ok $? "jit-call calls the runtime from generated code"
	;;
*)
	"$tmp/jit" >/dev/null
	ok $? "jit-call runs (no emitter for $(uname -m))"
	;;
esac

target aarch64
if [ "$(uname -m)" = aarch64 ]; then
	skip "aarch64 under qemu: this machine is aarch64"
elif ! have "$t_gcc" || ! have "$t_qemu"; then
	skip "aarch64 under qemu: $t_gcc or $t_qemu is not installed"
else
	lib=$top/build/jit-aarch64
	make -s -C "$top" -j"${NCB_JOBS:-2}" O="$lib" CC="$t_gcc" \
		CFLAGS="-O2 -g" "$lib/libnoclobber.a" >"$tmp/lib" 2>&1 &&
	"$t_gcc" -static -Wall -Wextra -Werror -I"$top/include" \
		-o "$tmp/jit64" "$src" "$lib/libnoclobber.a" -pthread
	ok $? "jit-call builds for aarch64"
	run aarch64 "$t_qemu" "$tmp/jit64"
	ok $? "jit-call on aarch64 calls the runtime with BL"
fi
done_testing
