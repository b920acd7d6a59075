#!/bin/sh
# noclobber watch --preload (libnoclobber-preload.so): the watcher's
# corpus (tests/progs/clobber.c) judged from inside the process in every
# mode, as the other watchers judge it, but where the C library made the
# memory itself (unseen here) a placement over it is unjudged; the benign
# patterns silent; real programs unchanged; what it cannot see said;
# NCB_PRELOAD's words; and MAP_FIXED_NOREPLACE kept exactly by --emulate
# for an unmodified program (tests/progs/noreplace.c) where the flag is
# ignored: qemu-user, valgrind, the old-kernel and 4.17 emulators.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
b=$(cd "$b" && pwd)
nc=$b/noclobber
lib=$b/libnoclobber-preload.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }

[ -f "$lib" ] || skip_all "no $lib: run make"
"$nc" watch --help 2>&1 | grep -q -- --preload ||
	skip_all "this noclobber has no watcher (WATCH=0)"
have python3 || skip_all "python3 is not installed (it reads the JSON)"
. "$top/tests/watch-events.sh"
cc=${CC:-cc}
$cc -O1 -o "$tmp/clobber" "$top/tests/progs/clobber.c" -pthread &&
	$cc -O1 -shared -fPIC -o "$tmp/libncbcache.so" \
		"$top/tests/progs/cache.c" &&
	$cc -O1 -o "$tmp/noreplace" "$top/tests/progs/noreplace.c" -pthread &&
	$cc -O1 -o "$tmp/run-by" "$top/tests/progs/run-by.c" -pthread ||
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
huge clobber kernel-memory heap kernel
huge-mremap clobber kernel-memory heap kernel
cache clobber other-module region libncbcache
malloc-mmap unjudged unknown-maker anonymous not seen
malloc-mremap unjudged unknown-maker anonymous not seen
malloc-shmat unjudged unknown-maker anonymous not seen
prot-none unjudged unknown-maker anonymous not seen
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

# What it cannot see, said before the program runs.
if $cc -static -O1 -o "$tmp/static" "$top/tests/progs/hello.c" \
	2>/dev/null; then
	"$nc" watch --preload "$tmp/static" >"$tmp/o" 2>&1
	grep -q 'a static program: no loader reads LD_PRELOAD' "$tmp/o"
	ok $? "a static program: said, run all the same"
else
	skip "no static C library to build a static program"
fi
# warned PROG TEXT CMD...: CMD run under --preload (its status in wst,
# its output in $tmp/o) says one warning, of PROG, with TEXT in it.
warned() {
	w=$1 text=$2
	shift 2
	"$nc" watch --preload --json -O "$tmp/e" "$@" >"$tmp/o" 2>&1
	wst=$?
	events "$tmp/e" "len(warns) == 1" "warns[0]['program'] == '$w'" \
		"'$text' in warns[0]['message']"
}

# The same of the programs a watched one runs (the exec family, fexecve),
# and of one run without the library in its LD_PRELOAD; every way a
# program starts another, its argument passed on unchanged.
if [ -x "$tmp/static" ]; then
	warned "$tmp/static" 'a static program' sh -c "$tmp/static"
	ok $? "a static program a shell runs: said, naming it"
	for how in execl execle execlp execv execve execvp execvpe fexecve; do
		warned "$tmp/static" 'a static program' "$tmp/run-by" $how \
			"$tmp/static" marker && [ $wst -eq 0 ] &&
			grep -q '^argv\[1\] = marker$' "$tmp/o"
		ok $? "$how: the static program it runs said, its argument kept"
	done
	for how in execle-env execve-env; do
		"$nc" watch --preload --json -O "$tmp/e" "$tmp/run-by" $how \
			"$tmp/static" marker >"$tmp/o" 2>&1 &&
			grep -q '^argv\[1\] = marker$' "$tmp/o" &&
			events "$tmp/e" "len(warns) == 1" \
				"'without libnoclobber' in warns[0]['message']"
		ok $? "$how: an empty environment, run unwatched, said"
	done
else
	skip "no static C library to build a static program"
fi
# What the exec calls do is the C library's and the kernel's: a FIFO
# is not run (nor opened: that would wait for a writer), a NULL path is
# the kernel's EFAULT, posix_spawn is not taken (the C library's older
# one, which old programs call, runs a script without "#!" by /bin/sh),
# and a child of a fork no handler saw runs its program.
mkfifo "$tmp/fifo" && chmod 755 "$tmp/fifo"
timeout 60 "$nc" watch --preload "$tmp/run-by" execve "$tmp/fifo" x \
	>"$tmp/o" 2>&1
[ $? -eq 127 ] && grep -q 'Permission denied' "$tmp/o"
ok $? "a FIFO run: EACCES, as without the library, nothing waits"
"$nc" watch --preload "$tmp/run-by" execve-null - - >"$tmp/o" 2>&1
[ $? -eq 127 ] && grep -q 'Bad address' "$tmp/o"
ok $? "execve(NULL): the kernel's EFAULT"
"$nc" watch --preload --json -O "$tmp/e" "$tmp/run-by" posix_spawn \
	/bin/true x >"$tmp/o" 2>&1 && events "$tmp/e" "len(warns) == 0"
ok $? "posix_spawn: not taken, its program run"
timeout 300 "$nc" watch --preload "$tmp/run-by" raw-fork /bin/true x \
	>"$tmp/o" 2>&1
ok $? "50 children of syscall(SYS_fork) run their program, none held"

# execvp's search and fexecve, made by the library as the C library
# makes them: each case's output, error and status as without it.  PATH
# entries of a file not executable (EACCES, remembered), of a script
# without "#!" (run by /bin/sh), of a file that is no directory, empty
# (the current directory), PATH unset, an empty name, a name with a
# slash, a name too long; fexecve of a program, of a "#!" script and of
# one without (the descriptor closed on exec: the kernel's errors).
px=$tmp/px
mkdir -p "$px/d1" "$px/d2" "$px/d3" && : >"$px/nd" &&
	printf '#!/bin/sh\necho no\n' >"$px/d1/good" &&
	printf 'echo "script ran: $1"\n' >"$px/d2/prog" &&
	printf '#!/bin/sh\necho "good: $1"\n' >"$px/d3/good" &&
	chmod 644 "$px/d1/good" && chmod 755 "$px/d2/prog" "$px/d3/good"
long=$(printf '%0300d' 0)
# same_run DESC DIR ENV HOW PROG: run-by HOW PROG x in DIR, env's word
# ENV (PATH=..., or -uPATH) set.
same_run() {
	desc=$1 dir=$2 ev=$3
	shift 3
	(cd "$dir" && env "$ev" "$tmp/run-by" "$@" x >"$tmp/o1" 2>&1
	 echo "status $?" >>"$tmp/o1")
	(cd "$dir" && env "$ev" "$nc" watch --preload -O "$tmp/e" \
		"$tmp/run-by" "$@" x >"$tmp/o2" 2>&1
	 echo "status $?" >>"$tmp/o2")
	cmp -s "$tmp/o1" "$tmp/o2" && ! grep -q 'noclobber' "$tmp/o2"
	ok $? "$desc: as without the library ($(head -c 50 "$tmp/o1" |
		tr '\n' ' '))"
}
for how in execvp execvpe execlp; do
	same_run "$how: EACCES, then a program" "$px" PATH="$px/d1:$px/d3" \
		"$how" good
	same_run "$how: EACCES only" "$px" PATH="$px/d1" "$how" good
	same_run "$how: a script without #!" "$px" PATH="$px/d2" "$how" prog
	same_run "$how: an entry that is a file" "$px" PATH="$px/nd" \
		"$how" good
	same_run "$how: an empty entry" "$px/d3" PATH= "$how" good
	same_run "$how: PATH unset" "$px" -uPATH "$how" true
	same_run "$how: an empty name" "$px" PATH="$px/d3" "$how" ""
	same_run "$how: a name with a slash, no #!" "$px" PATH=/nothing \
		"$how" "$px/d2/prog"
	same_run "$how: a name too long" "$px" PATH="$px/d3" "$how" "$long"
	same_run "$how: a name too long, no directory" "$px" \
		PATH=/nothing "$how" "$long"
	same_run "$how: a name too long, an entry that is a file" "$px" \
		PATH="$px/nd" "$how" "$long"
done
same_run "fexecve: a program" "$px" PATH="$PATH" fexecve /bin/echo
same_run "fexecve: a #! script" "$px" PATH="$PATH" fexecve "$px/d3/good"
same_run "fexecve: no #!" "$px" PATH="$PATH" fexecve "$px/d2/prog"

# Hostile headers in a program run: the look refuses them, says nothing
# and crashes nothing (the kernel's ENOEXEC, /bin/sh's error, as without
# the library): a program header offset that wraps past the file's first
# bytes, one past the end of the address space, no program headers, a
# header cut short.
elf() { # FILE PHOFF PHNUM [BYTES]
	python3 - "$@" <<'PYEOF2'
import struct, sys
f, phoff, phnum = sys.argv[1], int(sys.argv[2], 0), int(sys.argv[3])
ident = b"\x7fELF\x02\x01\x01" + bytes(9)
h = struct.pack("<16sHHIQQQIHHHHHH", ident, 3, 62, 1, 0, phoff, 0, 0, 64,
                56, phnum, 64, 0, 0)
n = int(sys.argv[4]) if len(sys.argv) > 4 else len(h)
open(f, "wb").write(h[:n])
PYEOF2
	chmod 755 "$1"
}
elf "$px/wrap" 0xffffffffffc80048 65535
elf "$px/far" 0xffffffffffffea30 100
elf "$px/nophdr" 64 0
elf "$px/short" 64 1 40
for bad in wrap far nophdr short; do
	same_run "a hostile ELF header ($bad), run" "$px" PATH="$PATH" \
		execv "$px/$bad"
	"$nc" watch --preload --json -O "$tmp/e" "$tmp/run-by" execv \
		"$px/$bad" x >"$tmp/o" 2>&1
	events "$tmp/e" "len(warns) == 0"
	ok $? "a hostile ELF header ($bad): nothing said"
	"$nc" watch --preload "$px/$bad" >"$tmp/o" 2>&1
	[ $? -eq 126 ] && ! grep -q 'program:' "$tmp/o"
	ok $? "a hostile ELF header ($bad) given to watch --preload: 126"
done
"$nc" watch --preload --json -O "$tmp/e" env -u LD_PRELOAD true \
	>"$tmp/o" 2>&1
events "$tmp/e" "len(warns) == 1" \
	"warns[0]['program'].endswith('/true')" \
	"'without libnoclobber-preload.so' in warns[0]['message']"
ok $? "env -u LD_PRELOAD: the program it runs unwatched, said"
"$nc" watch --preload --json -O "$tmp/e" sh -c 'exec env true' \
	>"$tmp/o" 2>&1
events "$tmp/e" "len(warns) == 0" "len(sums) == 1"
ok $? "programs run with the library (exec in place): nothing said"
# A Go program, as its file tells one (a section .go.buildinfo).
printf 'go' >"$tmp/buildinfo"
if have objcopy && $cc -O1 -o "$tmp/hello" "$top/tests/progs/hello.c" \
	-pthread && objcopy --add-section .go.buildinfo="$tmp/buildinfo" \
	"$tmp/hello" "$tmp/gohello" 2>/dev/null; then
	warned "$tmp/gohello" 'a Go program' "$tmp/gohello"
	ok $? "a Go program: said, run all the same"
	warned "$tmp/gohello" 'a Go program' "$tmp/run-by" execv \
		"$tmp/gohello" x
	ok $? "a Go program a watched one runs: said"
	"$nc" watch --preload --json -O "$tmp/e" "$tmp/run-by" execv \
		"$tmp/hello" x >"$tmp/o" 2>&1
	events "$tmp/e" "len(warns) == 0"
	ok $? "a program it sees, run by a watched one: nothing said"
	# Past the first batch of section headers the look reads: the
	# names' own header and the Go section's, 70 sections later.
	many=
	for i in $(seq 70); do
		many="$many --add-section .x$i=$tmp/buildinfo"
	done
	# shellcheck disable=SC2086 # one word a section
	if objcopy $many "$tmp/gohello" "$tmp/gomany" 2>/dev/null &&
		objcopy $many "$tmp/hello" "$tmp/many" 2>/dev/null; then
		warned "$tmp/gomany" 'a Go program' "$tmp/run-by" execv \
			"$tmp/gomany" x
		ok $? "a Go program of 100 sections: said"
		"$nc" watch --preload --json -O "$tmp/e" "$tmp/run-by" \
			execv "$tmp/many" x >"$tmp/o" 2>&1
		events "$tmp/e" "len(warns) == 0"
		ok $? "a program of 100 sections it sees: nothing said"
	else
		skip "objcopy made no program of 100 sections"
	fi
else
	skip "no objcopy to make a Go-like program"
fi
status 125 "--preload with -p: a usage error" "$nc" watch --preload -p 1
status 125 "--preload with --system: a usage error" \
	"$nc" watch --preload --system
status 125 "--emulate without --preload: a usage error" \
	"$nc" watch --emulate true
status 127 "--preload, a program not found: 127" \
	"$nc" watch --preload "$tmp/nothing"

how=--preload real_programs

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
while read -r arch gcc qemu flags; do
	if ! have "$gcc" || ! have "$qemu"; then
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
