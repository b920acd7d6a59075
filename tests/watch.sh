#!/bin/sh
# noclobber watch: the corpus (tests/progs/clobber.c), every clobber kind
# reported with its victim and caller, refused under --deny with the
# victim's bytes intact, made no-replace under --upgrade; the benign
# patterns reported as nothing; for x86_64 programs and, where this
# machine runs them, i386 ones.  Exit statuses, signals and output pass
# through; real programs report no clobber and behave as without it.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
nc=$b/noclobber
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }

"$nc" watch --help >/dev/null 2>&1
[ $? -ne 125 ] || skip_all "$("$nc" watch true 2>&1 | sed 's/^.*: //')"
"$nc" watch true >"$tmp/o" 2>&1 ||
	skip_all "the watcher cannot trace here: $(head -c 200 "$tmp/o")"
have python3 || skip_all "python3 is not installed (it reads the JSON)"

. "$top/tests/watch-events.sh"

# one_case PROG ARCH CASE CLASS KIND MAKER: a clobber reported, refused
# under --deny, made no-replace under --upgrade.
one_case() {
	p=$1 a=$2 c=$3 cls=$4 kind=$5 maker=$6
	lib=$(dirname "$p")/libncbcache${p##*clobber}.so
	set -- "$c"
	[ "$c" = cache ] && set -- cache "$lib"
	"$nc" watch --json -O "$tmp/e" "$p" "$@" >"$tmp/o" 2>&1
	events "$tmp/e" "len(ev) == 1" \
		"ev[0]['class'] == '$cls'" \
		"'$kind' in [v['kind'] for v in ev[0]['victims']]" \
		"'$maker' in ev[0]['victims'][0]['creator']" \
		"ev[0]['action'] == 'reported'" \
		"ev[0]['caller']['module'] == '$p'" \
		"ev[0]['caller']['symbol'] != ''" \
		"sum(s['clobbers'] for s in sums) == 1"
	ok $? "$a $c: reported as $cls ($kind, made by $maker)"
	"$nc" watch --deny --json -O "$tmp/e" "$p" "$@" >"$tmp/o" 2>&1
	grep -q "^$c: EEXIST$" "$tmp/o" && grep -qx intact "$tmp/o" &&
		events "$tmp/e" "len(ev) == 1" "ev[0]['action'] == 'denied'"
	ok $? "$a $c: --deny refuses it with EEXIST, nothing replaced"
	"$nc" watch --upgrade --json -O "$tmp/e" "$p" "$@" >"$tmp/o" 2>&1
	grep -q "^$c: EEXIST$" "$tmp/o" && grep -qx intact "$tmp/o" &&
		events "$tmp/e" "len(ev) == 1" \
			"ev[0]['action'] in ('upgraded', 'denied')"
	ok $? "$a $c: --upgrade makes it fail no-replace"
}

# corpus PROG ARCH SKIP: every case but SKIP's, in every mode.  Reported,
# a clobber may well kill the program (the image's relocations gone):
# only the report is checked then.  Each clobber names its victim's maker:
# the kernel, clone, the loader, or the module of the call that made it.
corpus() {
	p=$1 a=$2 no=$3 why=${4:-}
	while read -r c cls kind maker; do
		case " $no " in
		*" $c "*)
			skip "$a $c: $why"
			continue ;;
		esac
		one_case "$p" "$a" "$c" "$cls" "$kind" "$maker"
	done <<EOF
heap kernel-memory heap kernel
stack kernel-memory stack kernel
image kernel-memory program kernel
interp kernel-memory interpreter kernel
thread-stack thread-stack thread-stack clone
many-threads thread-stack thread-stack clone
library other-module library loader
mremap kernel-memory heap kernel
shmat kernel-memory heap kernel
fork kernel-memory heap kernel
vfork kernel-memory heap kernel
thread kernel-memory heap kernel
after-leader kernel-memory heap kernel
huge kernel-memory heap kernel
huge-mremap kernel-memory heap kernel
malloc-mmap other-module region libc.so.6
malloc-mremap other-module region libc.so.6
malloc-shmat other-module region libc.so.6
cache other-module region libncbcache
prot-none other-module region libc.so.6
arena other-module region libc.so.6
merged spans-regions region libc.so.6
shared-vm other-module region libc.so.6
clone-parent other-module region libc.so.6
EOF
	for m in "" --deny --upgrade; do
		"$nc" watch $m --json -O "$tmp/e" "$p" no-type >"$tmp/o" 2>&1
		grep -q "^no-type: EINVAL$" "$tmp/o" &&
			grep -qx intact "$tmp/o" &&
			events "$tmp/e" "len(ev) == 0" \
				"sums[0]['clobbers'] == 0" \
				"sums[0]['invalid'] == 1"
		w="the kernel's EINVAL, no clobber"
		ok $? "$a no-type ${m:-(report)}: $w"
	done
	"$nc" watch --json -O "$tmp/e" "$p" exec heap >"$tmp/o" 2>&1
	events "$tmp/e" "len(ev) == 1" "ev[0]['class'] == 'kernel-memory'" \
		"len(sums) == 1 and sums[0]['fixed'] >= 1"
	ok $? "$a exec: the program run by execve is watched as well"
	while read -r c cls; do
		benign "$p" "$a " "$c" "$cls"
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
EOF
}

cc=${CC:-cc}
if $cc -O1 -o "$tmp/clobber" "$top/tests/progs/clobber.c" -pthread &&
	$cc -O1 -shared -fPIC -o "$tmp/libncbcache.so" \
		"$top/tests/progs/cache.c"; then
	corpus "$tmp/clobber" x86_64 ""
	# Records of memory since unmapped dropped when they fill the set:
	# once, for its 70000 placements' time.
	"$nc" watch --deny --json -O "$tmp/e" "$tmp/clobber" churn \
		>"$tmp/o" 2>&1
	grep -q "^churn: ok$" "$tmp/o" && events "$tmp/e" "len(ev) == 0" \
		"sums[0]['unjudged'] == 0" \
		"sums[0]['benign']['own-region'] >= 1"
	ok $? "x86_64 churn --deny: own-region past the records' bound"
	# x32's calls: the native ABI's, a bit set in their numbers.
	if "$tmp/clobber" x32 2>/dev/null | grep -q "^x32: ENOSYS$"; then
		skip "x32: this kernel takes no x32 call (syscall.x32=y)"
	else
		one_case "$tmp/clobber" x86_64 x32 kernel-memory heap kernel
	fi
	# The watcher built with the sanitizers (the matrix's asan row).
	asan=$top/build/asan/noclobber
	if [ -x "$asan" ] && "$asan" watch true >/dev/null 2>&1; then
		native=$nc
		nc=$asan
		corpus "$tmp/clobber" "x86_64 (ASan, UBSan)" ""
		nc=$native
	else
		skip "the sanitizers' build: no $asan with the watcher"
	fi
	# As on a kernel before 6.11: the maps read as text, a copy taken
	# when they are opened.
	if ! "$nc" probe | grep -q '^PROCMAP_QUERY: *yes'; then
		skip "no PROCMAP_QUERY here: the corpus above ran without it"
	elif $cc -O1 -o "$tmp/noquery" "$top/tests/progs/noquery.c" \
		-lseccomp 2>/dev/null; then
		native=$nc
		nc=$tmp/nc-noquery
		printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$tmp/noquery" \
			"$native" >"$nc"
		chmod +x "$nc"
		corpus "$tmp/clobber" "x86_64 (no PROCMAP_QUERY)" ""
		nc=$native
	else
		skip "progs/noquery.c does not build (libseccomp-dev?)"
	fi
else
	ok 1 "build progs/clobber.c"
fi
. "$top/tests/targets.sh"
c32=$tmp/clobber32
i386_dynamic "$top" "$c32" "$top/tests/progs/clobber.c" -pthread &&
	i386_dynamic "$top" "$tmp/libncbcache32.so" -shared -fPIC \
		"$top/tests/progs/cache.c"
case $? in
0) corpus "$c32" i386 "" ;;
1) ok 1 "build progs/clobber.c for i386" ;;
*) skip "i386 programs: $t_why (the watcher traces native ones only)" ;;
esac
# Ways around the watcher (tests/progs/escape.c): reported; under --deny
# refused with EPERM, and the clobber that would have followed refused or
# failing closed (ENOSYS: an untraced child meets the filter, no tracer).
escapes() {
	p=$1 a=$2
	while read -r c what step; do
		"$nc" watch --json -O "$tmp/e" "$p" "$c" >"$tmp/o" 2>&1
		events "$tmp/e" "[e['what'] for e in ev] == ['$what']" \
			"ev[0]['action'] == 'reported'" \
			"ev[0]['caller']['module'] == '$p'" \
			"sums[0]['escapes'] == 1"
		ok $? "$a $c: the way around the watcher ($what) reported"
		"$nc" watch --deny --json -O "$tmp/e" "$p" "$c" >"$tmp/o" 2>&1
		grep -q "^$c: $step EPERM$" "$tmp/o" &&
			grep -qE "^$c: (EEXIST|ENOSYS)$" "$tmp/o" &&
			grep -qx intact "$tmp/o" &&
			events "$tmp/e" "ev[0]['event'] == 'escape'" \
				"ev[0]['action'] == 'denied'" \
				"ev[0]['error']['errno'] == 'EPERM'"
		ok $? "$a $c: --deny refuses it (EPERM), nothing replaced"
	done <<EOF
listener seccomp-listener seccomp
untraced ptrace ptrace
EOF
}
if $cc -O1 -o "$tmp/escape" "$top/tests/progs/escape.c" -pthread; then
	escapes "$tmp/escape" x86_64
else
	ok 1 "build progs/escape.c"
fi
i386_dynamic "$top" "$tmp/escape32" "$top/tests/progs/escape.c" -pthread
case $? in
0) escapes "$tmp/escape32" i386 ;;
1) ok 1 "build progs/escape.c for i386" ;;
*) skip "i386 programs: $t_why" ;;
esac
# A placement racing the heap (tests/progs/race.c): the process's other
# threads held still while the call is judged and made, no round loses
# the heap's page (a thousand rounds, the second thread acting later in
# each, so that some meet any judgement's length); nor a malloc block
# another thread has just mapped where the caller's own region was
# (stale: its exit not yet seen, the region's record not yet replaced).
if $cc -O1 -o "$tmp/race" "$top/tests/progs/race.c" -pthread; then
	for cm in "mremap --deny" "shmat --deny" "own --deny" \
		"own --upgrade" "stale --deny" "stale --upgrade"; do
		set -- $cm
		"$nc" watch "$2" -O /dev/null "$tmp/race" "$1" 1000 \
			>"$tmp/o" 2>&1
		grep -q "^$1: 0 lost in 1000$" "$tmp/o"
		ok $? "race $1 $2: $(cat "$tmp/o")"
	done
else
	ok 1 "build progs/race.c"
fi
skip "qemu-user: it has no ptrace, so a program it runs cannot be watched"
w="the old-kernel emulators (ncb-emu) trace the program themselves,"
skip "$w and a process has one tracer"
w="valgrind 3.19 knows neither seccomp(2) (system call 317) nor what"
skip "$w PTRACE_GET_SYSCALL_INFO writes: memcheck cannot check the watcher"
w="the other architectures: the watcher is built for this machine only"
skip "$w (a cross build has no libseccomp), and reads x86_64 registers"

# Attached to a running process (-p): a clobber refused, and Ctrl-C
# detaching, the process left running.  The program waits for a line on
# its input; the watcher has attached when the kernel names a tracer.
traced() {
	i=0
	while [ $i -lt 100 ]; do
		grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$1/status" &&
			return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
if [ -x "$tmp/clobber" ] && mkfifo "$tmp/fifo"; then
	exec 3<>"$tmp/fifo"
	"$tmp/clobber" wait heap <&3 >"$tmp/o" 2>&1 &
	pid=$!
	"$nc" watch --deny --json -O "$tmp/e" -p "$pid" 2>"$tmp/err" &
	wpid=$!
	traced "$pid"
	ok $? "-p: attached to a running process"
	echo go >&3
	wait "$pid"
	wait "$wpid"
	rc=$?
	grep -q "^heap: EEXIST$" "$tmp/o" && grep -qx intact "$tmp/o" &&
		[ "$rc" -eq 1 ] && events "$tmp/e" "len(ev) == 1" \
			"ev[0]['action'] == 'denied'" \
			"ev[0]['victims'][0]['kind'] == 'heap'"
	ok $? "-p --deny: its clobber refused; its status is the watcher's"
	"$tmp/clobber" wait heap <&3 >"$tmp/o" 2>&1 &
	pid=$!
	"$nc" watch -p "$pid" 2>"$tmp/err" &
	wpid=$!
	traced "$pid"
	kill -INT "$wpid"
	wait "$wpid"
	rc=$?
	! grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$pid/status" &&
		[ "$rc" -eq 0 ]
	ok $? "-p: SIGINT detaches, and the process runs on"
	echo go >&3
	wait "$pid"
	grep -q "^heap: ok$" "$tmp/o"
	ok $? "-p: detached, the process is as without the watcher"
	exec 3>&-
else
	skip "-p: no fifo here"
fi
status 125 "-p with a program too: 125" "$nc" watch -p 1 true
"$nc" watch -p 999999999 2>"$tmp/err"
[ $? -eq 125 ] && grep -q "no process" "$tmp/err"
ok $? "-p with no such process: 125, and why"

# What passes through: output, status, signals.
out=$("$nc" watch echo through 2>/dev/null)
[ "$out" = through ]
ok $? "the program's output is its own"
status 7 "its exit status" "$nc" watch sh -c 'exit 7'
"$nc" watch sh -c 'kill -SEGV $$' 2>/dev/null
[ $? -eq 139 ]
ok $? "death by a signal is the watcher's death by the same signal"
out=$("$nc" watch sh -c 'trap "echo caught" USR1; kill -USR1 $$; echo on' \
	2>/dev/null)
[ "$out" = "caught
on" ]
ok $? "a signal reaches the program's handler"
# A stop: the program stops itself, stays stopped, and SIGCONT resumes it.
"$nc" watch sh -c 'kill -STOP $$; echo resumed' >"$tmp/o" 2>/dev/null &
wpid=$!
i=0 prog= st=
while [ $i -lt 100 ] && [ "$st" != stopped ]; do
	prog=$(pgrep -P "$wpid" | head -1)
	[ -n "$prog" ] && grep -q "^State:[[:space:]]*[tT]" \
		"/proc/$prog/status" 2>/dev/null && st=stopped
	[ "$st" = stopped ] || sleep 0.1
	i=$((i + 1))
done
[ "$st" = stopped ] && [ ! -s "$tmp/o" ]
ok $? "a stop signal stops the program, watched"
[ -n "$prog" ] && kill -CONT "$prog"
wait "$wpid"
rc=$?
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/o")" = resumed ]
ok $? "SIGCONT resumes it"
# As run directly: where the signal comes in ignored, the shell lives on.
sh -c 'kill -33 $$' 2>/dev/null
want=$?
"$nc" watch sh -c 'kill -33 $$' 2>/dev/null
got=$?
[ "$got" -eq "$want" ]
ok $? "death by a signal the C library keeps for itself (33) too ($want)"
# SIGTERM to the watcher once the program has exited (the watcher has no
# child left: it reaped the program) goes on to what it left running.
"$nc" watch sh -c '(sleep 67 &); exit 4' 2>/dev/null &
wpid=$!
i=0
while [ $i -lt 200 ] && { [ -n "$(pgrep -P "$wpid")" ] ||
	! pgrep -f "^sleep 67$" >/dev/null; }; do
	sleep 0.05
	i=$((i + 1))
done
kill -TERM "$wpid"
wait "$wpid"
rc=$?
pkill -f "^sleep 67$"
[ "$rc" -eq 4 ]
ok $? "SIGTERM after the program's exit ends what it left; its status 4"
status 127 "a program not found: 127" "$nc" watch "$tmp/nothing"
printf 'not a program\n' >"$tmp/text"
chmod -x "$tmp/text"
status 126 "a file that cannot run: 126" "$nc" watch "$tmp/text"
status 125 "an unknown option: 125" "$nc" watch --frobnicate true
status 125 "no program: 125" "$nc" watch
"$nc" watch -O "$tmp/out" sh -c 'exit 0' 2>"$tmp/err"
[ ! -s "$tmp/err" ]
ok $? "-O FILE: nothing on stderr"

real_programs

# An in-process exec (noclobber exec) is an exec to the watcher too: the
# summary names the new program, not the tool it replaced.
"$nc" watch --json -O "$tmp/e" "$nc" exec /bin/true >"$tmp/o" 2>&1
events "$tmp/e" "len(sums) == 1 and sums[0]['program'] == 'true'" \
	"sums[0]['clobbers'] == 0"
ok $? "an in-process exec: the summary names the program run"

# --report-html: a page of the clobbers, each drawn as its range was
# before the call (a shared memory segment the call attaches is not in
# it), its victim's maker and the caller named; a refused one too; a run
# with none has a page that says so; a page that cannot be written
# stops the watcher before the program runs.
page() {
	pics=$(python3 "$top/tests/pictures.py" html "$1") && [ "$pics" = "$2" ]
}
if [ -x "$tmp/clobber" ]; then
	"$nc" watch --report-html "$tmp/r.html" "$tmp/clobber" malloc-shmat \
		>"$tmp/o" 2>&1 && page "$tmp/r.html" 1 &&
		grep -q '<p>1 clobber: ' "$tmp/r.html" &&
		grep -q 'victim (region): anonymous, made by mmap from .*libc' \
			"$tmp/r.html" &&
		grep -q "caller: $tmp/clobber:do_shmat" "$tmp/r.html" &&
		grep -q 'the watcher: reported' "$tmp/r.html" &&
		! grep -q SYSV "$tmp/r.html"
	ok $? "--report-html: the clobber, drawn as before the call"
	"$nc" watch --deny --report-html "$tmp/r.html" "$tmp/clobber" heap \
		>"$tmp/o" 2>&1
	grep -q '^intact$' "$tmp/o" &&
		page "$tmp/r.html" 1 && grep -q 'victim (heap)' "$tmp/r.html" &&
		grep -q 'the watcher: denied: failed with' "$tmp/r.html"
	ok $? "--report-html --deny: the refused clobber"
	"$nc" watch --report-html "$tmp/r.html" "$tmp/clobber" reserve \
		>"$tmp/o" 2>&1 && page "$tmp/r.html" 0 &&
		grep -q '<p>0 clobbers: ' "$tmp/r.html"
	ok $? "--report-html: a run with no clobber, a page that says so"
	"$nc" watch --report-html "$tmp/no/such/r.html" "$tmp/clobber" heap \
		>"$tmp/o" 2>&1
	[ $? -eq 125 ] && ! grep -q '^heap' "$tmp/o" &&
		grep -q 'no/such/r.html: No such file' "$tmp/o"
	ok $? "--report-html: a page that cannot be written, nothing run"
	# A file there before is the user's: truncated, never unlinked.
	echo kept > "$tmp/old.html"
	"$nc" watch --report-html "$tmp/old.html" -O "$tmp/no/such/o" \
		"$tmp/clobber" reserve >"$tmp/o" 2>&1
	[ $? -eq 125 ] && [ -f "$tmp/old.html" ] &&
		grep -q 'no/such/o: No such file' "$tmp/o"
	ok $? "--report-html: a file there before is left when -O fails"
	"$nc" watch --report-html "$tmp/new.html" -O "$tmp/no/such/o" \
		"$tmp/clobber" reserve >"$tmp/o" 2>&1
	[ $? -eq 125 ] && [ ! -e "$tmp/new.html" ]
	ok $? "--report-html: a page made for a run that fails is removed"
fi

done_testing
