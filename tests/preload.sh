#!/bin/sh
# noclobber watch --preload (libnoclobber-preload.so): the watcher's
# corpus (tests/progs/clobber.c) judged from inside the process in every
# mode, as the other watchers judge it, but where the C library made the
# memory itself (unseen here) a placement over it is unjudged; the benign
# patterns silent; NCB_PRELOAD's words; and MAP_FIXED_NOREPLACE kept
# exactly by --emulate for an unmodified program
# (tests/progs/noreplace.c) where the flag is ignored: qemu-user (for
# every architecture we build), valgrind, the old-kernel and 4.17
# emulators.  The programs it runs, and real ones: preload-exec.sh.
. "$(dirname "$0")/preload-setup.sh"
$cc -O1 -o "$tmp/clobber" "$top/tests/progs/clobber.c" -pthread &&
	$cc -O1 -shared -fPIC -o "$tmp/libncbcache.so" \
		"$top/tests/progs/cache.c" &&
	$cc -O1 -o "$tmp/noreplace" "$top/tests/progs/noreplace.c" -pthread ||
	skip_all "the test programs do not build"
p=$tmp/clobber

# one_case CASE EVENT CLASS KIND MAKER: reported as EVENT of CLASS, its
# victim's maker named (the program may die of it: no summary then);
# refused under --deny and --upgrade, intact.
one_case() {
	c=$1 event=$2 cls=$3 kind=$4 maker=$5
	set -- "$c"
	[ "$c" = cache ] && set -- cache "$tmp/libncbcache.so"
	"$nc" watch --preload --json -O "$tmp/e" "$p" "$@" >"$tmp/o" 2>&1
	events "$tmp/e" "len(ev) == 1" "ev[0]['event'] == '$event'" \
		"ev[0]['class'] == '$cls'" \
		"'$kind' in [v['kind'] for v in ev[0]['victims']]" \
		"'$maker' in ev[0]['victims'][0]['creator']" \
		"ev[0]['action'] == 'reported'" \
		"ev[0]['caller']['module'] == '$p'" \
		"ev[0]['caller']['symbol'] != ''"
	ok $? "$c: reported as $event, $cls ($kind, made by $maker)"
	for m in --deny --upgrade; do
		"$nc" watch --preload $m --json -O "$tmp/e" "$p" "$@" \
			>"$tmp/o" 2>&1
		grep -q "^$c: EEXIST$" "$tmp/o" && grep -qx intact "$tmp/o" &&
			events "$tmp/e" "len(ev) == 1" \
				"ev[0]['action'] in ('denied', 'upgraded')"
		r=$?
		[ $r -eq 0 ] || sed 's/^/# output: /' "$tmp/o"
		ok $r "$c $m: refused with EEXIST, nothing replaced"
	done
}

while read -r c event cls kind maker; do
	one_case "$c" "$event" "$cls" "$kind" "$maker"
done <<EOF
heap clobber kernel-memory heap kernel
stack clobber kernel-memory stack kernel
image clobber kernel-memory program kernel
interp clobber kernel-memory interpreter kernel
thread-stack clobber thread-stack thread-stack pthread_create
many-threads clobber thread-stack thread-stack pthread_create
library clobber other-module library loader
mremap clobber kernel-memory heap kernel
shmat clobber kernel-memory heap kernel
fork clobber kernel-memory heap kernel
vfork clobber kernel-memory heap kernel
thread clobber kernel-memory heap kernel
after-leader clobber kernel-memory heap kernel
mremap-after-leader clobber kernel-memory heap kernel
huge clobber kernel-memory heap kernel
huge-mremap clobber kernel-memory heap kernel
cache clobber other-module region libncbcache
malloc-mmap unjudged unknown-maker anonymous not seen
malloc-mremap unjudged unknown-maker anonymous not seen
malloc-shmat unjudged unknown-maker anonymous not seen
prot-none unjudged unknown-maker anonymous not seen
prot-none-after-leader unjudged unknown-maker anonymous not seen
merged unjudged unknown-maker anonymous not seen
EOF

for m in "" --deny --upgrade; do
	"$nc" watch --preload $m --json -O "$tmp/e" "$p" no-type >"$tmp/o" 2>&1
	grep -q "^no-type: EINVAL$" "$tmp/o" && grep -qx intact "$tmp/o" &&
		events "$tmp/e" "len(ev) == 0" "sums[0]['clobbers'] == 0" \
			"sums[0]['invalid'] == 1"
	ok $? "no-type ${m:-(report)}: the kernel's EINVAL, no clobber"
done
# The benign patterns; and the C library's arena reservation, which the
# preload cannot tell from one of the program's own (it never sees the
# C library map it): reservation pages of no known maker.
while read -r c cls; do
	how=--preload benign "$p" "" "$c" "$cls"
done <<EOF
reserve reservation
remap-own own-region
ring reservation
own-region own-region
own-stack own-stack
jit own-region
at-break own-region
heap-end own-region
below-heap own-region
arena reservation
churn own-region
EOF

# A process that ends without exit's handlers (_exit, _Exit, exit_group,
# as qemu-user ends) still says its summary, once.
for e in _exit _Exit exit_group; do
	"$nc" watch --preload --json -O "$tmp/e" "$p" end-by $e own-region \
		>"$tmp/o" 2>&1
	grep -q "^own-region: ok$" "$tmp/o" &&
		events "$tmp/e" "len(ev) == 0" "len(sums) == 1" \
			"sums[0]['fixed'] == 2" \
			"sums[0]['benign']['own-region'] == 1"
	ok $? "ended by $e: its summary, once"
done

# An image that execs says its placements first (the new image, with
# counts of its own, writes the process's summary as it ends); where the
# exec fails, its counts start again.
"$nc" watch --preload --json -O "$tmp/e" "$p" end-by exec own-region \
	>"$tmp/o" 2>&1
st=$?
grep -q "^own-region: ok$" "$tmp/o" && [ $st = 0 ] &&
	events "$tmp/e" "len(sums) == 2" "sums[0]['program'] == 'clobber'" \
		"sums[0]['fixed'] == 2" "sums[1]['program'] == 'sh'" \
		"sums[1]['fixed'] == 0" "sums[0]['pid'] == sums[1]['pid']"
ok $? "an exec: the image it replaces says its placements"
"$nc" watch --preload --json -O "$tmp/e" "$p" end-by exec-fail own-region \
	>"$tmp/o" 2>&1
st=$?
grep -q "^own-region: ok$" "$tmp/o" && [ $st = 0 ] &&
	events "$tmp/e" "len(sums) == 2" "sums[0]['fixed'] == 2" \
		"sums[1]['fixed'] == 0" "sums[1]['program'] == 'clobber'"
ok $? "an exec that fails: the counts start again, the sums add up"
"$nc" watch --preload --json -O "$tmp/e" sh -c 'exec true' >"$tmp/o" 2>&1
events "$tmp/e" "len(sums) == 1"
ok $? "an exec by an image that made no placement: one summary"

# The human report: the other watchers' lines.
"$nc" watch --preload "$p" heap >"$tmp/o" 2>&1
x='0x[0-9a-f]*'
grep -q "^noclobber watch: kernel-memory: clobber\[[0-9]*\] mmap($x, \
0x1000, 3, 0x32, -1, 0) on \[" "$tmp/o" &&
	grep -q '^  replaces \[.*\[heap\]: heap, made by the kernel$' \
		"$tmp/o" &&
	grep -q "^  called from .*clobber+$x (over+$x); reported$" \
		"$tmp/o" &&
	grep -q '^noclobber watch: clobber\[[0-9]*\]: 1 fixed .*1 clobber$' \
		"$tmp/o"
ok $? "the report's lines are the other watchers'"

# syscall(2) naming mmap goes the same way.
"$nc" watch --preload --json -O "$tmp/e" "$p" x32 >"$tmp/o" 2>&1
if grep -q "^x32: ENOSYS$" "$tmp/o"; then
	skip "x32: this kernel takes no x32 call (syscall.x32=y)"
else
	events "$tmp/e" "len(ev) == 1" "ev[0]['class'] == 'kernel-memory'"
	ok $? "x32's mmap through syscall(2): judged as mmap"
fi

# NCB_PRELOAD's words: a word that is no mode stops the program, said.
LD_PRELOAD=$lib NCB_PRELOAD=deyn "$p" heap >"$tmp/o" 2>&1
[ $? -eq 125 ] && grep -q 'NCB_PRELOAD: not a mode' "$tmp/o" &&
	! grep -q '^heap' "$tmp/o"
ok $? "NCB_PRELOAD=deyn: not run, said (125)"
LD_PRELOAD=$lib NCB_PRELOAD=deny,upgrade "$p" heap >"$tmp/o" 2>&1
[ $? -eq 125 ]
ok $? "NCB_PRELOAD=deny,upgrade: not together (125)"
LD_PRELOAD=$lib NCB_PRELOAD=deny,emulate NCB_PRELOAD_OUTPUT=$tmp/r \
	"$p" heap >"$tmp/o" 2>&1
grep -q '^heap: EEXIST$' "$tmp/o" && grep -q 'kernel-memory' "$tmp/r"
ok $? "NCB_PRELOAD=deny,emulate: refused, reported to NCB_PRELOAD_OUTPUT"

status 125 "--preload with -p: a usage error" "$nc" watch --preload -p 1
status 125 "--preload with --system: a usage error" \
	"$nc" watch --preload --system
status 125 "--emulate without --preload: a usage error" \
	"$nc" watch --emulate true
status 127 "--preload, a program not found: 127" \
	"$nc" watch --preload "$tmp/nothing"

# --emulate: an unmodified program that relies on MAP_FIXED_NOREPLACE
# (QEMU since 8.1 does), where the flag is ignored.  Without, it must
# fail there (else the environment honours the flag: nothing to show).
# The library's words reach the program as the environment lets them:
# qemu-user's -E (a guest's execve would run its program natively),
# valgrind's own environment (it passes LD_PRELOAD on to its guest, and
# follows no execve), env(1) inside a ptrace emulator (which follows it).
with() {
	how=$1
	shift
	case $how in
	qemu) $bound "$@" -E LD_PRELOAD="$lib" -E NCB_PRELOAD=emulate \
		"$nr" ;;
	outside) env LD_PRELOAD="$lib" NCB_PRELOAD=emulate $bound "$@" \
		"$nr" ;;
	*) $bound "$@" "$(command -v env)" LD_PRELOAD="$lib" \
		NCB_PRELOAD=emulate "$nr" ;;
	esac
}
# emulated NAME WRAPPER...: the program fails under WRAPPER, and passes
# with the library.  An environment that does not run it to its end at
# all (qemu-i386 7.2 hangs in a dynamically linked program's threads
# here) is no environment to judge: said, and bounded by timeout(1).
emulated() {
	name=$1
	shift
	$bound "$@" "$nr" >"$tmp/o" 2>&1
	s=$?
	if [ $s -eq 0 ]; then
		skip "$name honours MAP_FIXED_NOREPLACE: nothing to emulate"
		return
	elif [ $s -eq 124 ] && [ -n "$bound" ]; then
		skip "$name does not run the program to its end (hangs)"
		return
	fi
	sed 's/^/# without: /' "$tmp/o"
	with "$how" "$@" >"$tmp/o" 2>&1
	s=$?
	[ $s -eq 0 ] || sed 's/^/# /' "$tmp/o"
	ok $s "$name: every placement exact or EEXIST, none lost"
}
bound=
have timeout && bound="timeout 120"

# Judged under qemu-user, whose /proc/self is made up for the guest (and
# /proc/thread-self is the emulator's own), whose maps show no code
# executable: under --deny the benign patterns run, the clobbers are
# refused (the guest's heap is of no known maker there: unjudged).
# qemu_case CASE: the corpus's CASE under qemu-x86_64, NCB_PRELOAD=deny.
qemu_case() {
	rm -f "$tmp/e"
	$bound qemu-x86_64 -E LD_PRELOAD="$lib" -E NCB_PRELOAD=deny \
		-E NCB_PRELOAD_JSON=1 -E NCB_PRELOAD_OUTPUT="$tmp/e" "$p" "$1" \
		>"$tmp/o" 2>&1
}
if have qemu-x86_64; then
	for c in reserve remap-own ring own-region own-stack jit at-break \
		heap-end; do
		qemu_case $c
		grep -q "^$c: ok$" "$tmp/o" &&
			events "$tmp/e" "len(ev) == 0" "len(sums) == 1" \
				"sums[0]['clobbers'] == 0" \
				"sums[0]['unjudged'] == 0"
		ok $? "qemu-x86_64 --deny $c: benign, runs"
	done
	while read -r c cls kind; do
		qemu_case $c
		grep -q "^$c: EEXIST$" "$tmp/o" && grep -qx intact "$tmp/o" &&
			events "$tmp/e" "len(ev) == 1" \
				"ev[0]['class'] == '$cls'" \
				"ev[0]['victims'][0]['kind'] == '$kind'" \
				"ev[0]['action'] == 'denied'"
		ok $? "qemu-x86_64 --deny $c: refused ($cls, $kind)"
	done <<EOF
heap unknown-maker anonymous
after-leader unknown-maker anonymous
image kernel-memory program
stack kernel-memory stack
library other-module library
thread-stack thread-stack thread-stack
EOF
else
	skip "qemu-x86_64 is not installed"
fi

nr=$tmp/noreplace
"$nr" >"$tmp/o" 2>&1
ok $? "natively: every placement exact or EEXIST, none lost"
"$nc" watch --preload --emulate "$tmp/noreplace" >"$tmp/o" 2>&1
ok $? "natively, --emulate: the same"
if have qemu-x86_64; then
	how=qemu emulated qemu-x86_64 qemu-x86_64
else
	skip "qemu-x86_64 is not installed"
fi
how=outside emulated valgrind valgrind -q
emu=$b/tests/ncb-emu
if [ -x "$emu" ] && "$emu" --mode=old /bin/true 2>/dev/null; then
	how=inside emulated "a kernel before 4.17 (ncb-emu)" "$emu" \
		--mode=old
	how=inside emulated "Linux 4.17 (ncb-emu)" "$emu" --mode=4.17
else
	skip "tests/ncb-emu is not built or cannot trace here"
	skip "tests/ncb-emu is not built or cannot trace here"
fi

# Every architecture the matrix builds for, its program and the library
# built by its cross compiler and run by its qemu-user (7.2 takes the
# flag for a hint on each), its C library from its cross sysroot.
. "$top/tests/targets.sh"
# In a VM row the source tree is the host's, read-only, and qemu-user's
# emulation is the same as on the host: the host's row runs these.
while read -r arch gcc qemu flags; do
	if [ -n "${NCB_TEST_VM:-}" ]; then
		skip "$arch: not in a VM (the host's row runs it)"
		continue
	elif ! have "$gcc" || ! have "$qemu"; then
		skip "$arch: $gcc or $qemu is not installed"
		continue
	fi
	o=build/preload-$arch
	if ! make -s -C "$top" O="$o" CC="$gcc $flags" \
		"$o/libnoclobber-preload.so" >"$tmp/o" 2>&1 ||
		! $gcc $flags -O1 -o "$tmp/noreplace-$arch" \
			"$top/tests/progs/noreplace.c" -pthread; then
		sed 's/^/# /' "$tmp/o"
		ok 1 "$arch: the library and the program build"
		continue
	fi
	sysroot=/usr/$($gcc $flags -dumpmachine)
	lib=$top/$o/libnoclobber-preload.so nr=$tmp/noreplace-$arch \
		how=qemu emulated "$arch (qemu-user)" "$qemu" -L "$sysroot"
done <<EOF
$ncb_targets
EOF
done_testing
