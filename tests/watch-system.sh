#!/bin/sh
# noclobber watch --system: the watcher's corpus (tests/progs/clobber.c)
# run as ordinary processes while the system watcher runs, each clobber
# reported with its process, victim and caller, nothing for the benign
# patterns; the scopes (--comm, -p, --uid, --cgroup) keep what is outside
# them out; real programs report nothing; a full ring buffer is counted
# and said.  The corpus runs again with the programs for kernels without
# the task and VMA iterators (NCB_TEST_SYSTEM_TREE) where the kernel has
# both, and under --deny with BPF LSM programs (NCB_TEST_SYSTEM_LSM).  One
# watcher per case, scoped to this test's own programs (by their unique
# names, or a cgroup of its own): other tests run beside it.
# Under --deny (where the kernel lets BPF programs refuse a call: not
# everywhere, said as a skip) each clobber of the corpus is refused with
# EEXIST, its victim's bytes intact, and reported as denied; the benign
# patterns and real programs run as before; the scopes keep others out.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
nc=$b/noclobber
tmp=$(mktemp -d)
chmod 755 "$tmp"
W=
cg=
cleanup() {
	[ -n "$W" ] && kill -INT "$W" 2>/dev/null && wait "$W"
	[ -n "$cg" ] && rmdir "$cg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
have() { command -v "$1" >/dev/null 2>&1; }
have python3 || skip_all "python3 is not installed (it reads the JSON)"

# start OUT ARGS...: a system watcher, until it says it watches (0), or
# its failure (1, its words in $tmp/err).
start() {
	out=$1
	shift
	rm -f "$out"
	"$nc" watch --system --json -O "$out" "$@" 2>"$tmp/err" &
	W=$!
	while ! grep -q '"event":"start"' "$out" 2>/dev/null; do
		if ! kill -0 "$W" 2>/dev/null; then
			wait "$W"
			W=
			return 1
		fi
		sleep 0.05
	done
}

# stop: interrupted, it reads what was sent and writes the summaries.
stop() {
	kill -INT "$W"
	wait "$W"
	st=$?
	W=
	return $st
}

. "$top/tests/watch-events.sh"

# events FILE CHECK...: as in watch.sh, with the start and lost events.
events() {
	f=$1
	shift
	schema "$f" || return 1
	python3 - "$f" "$@" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ev = [l for l in lines if l["event"] in ("clobber", "unjudged")]
sums = [l for l in lines if l["event"] == "summary"]
unknown = [l for l in ev if l["class"] == "unknown-maker"]
lost = [l for l in lines if l["event"] == "lost"]
# Every fixed placement of a process is accounted for once.
def balanced(s):
    return s["fixed"] == (s["free"] + sum(s["benign"].values()) +
                          s["clobbers"] + s["invalid"] + s["unjudged"] +
                          s["lost"])
for c in sys.argv[2:]:
    if not eval(c):
        print("# failed: %s\n# events: %s" % (c, json.dumps(lines)[:900]))
        sys.exit(1)
EOF
}

start "$tmp/probe" --comm ncb-none-$$ ||
	skip_all "$(sed 's/^noclobber watch: //' "$tmp/err")"
stop
ok $? "a watcher with nothing in scope starts and ends with status 0"

# corpus PROG LIB ARCH SKIP WHY: each case under a watcher scoped to
# PROG's name (PROG is unique to this run); LIB the cache library
# (tests/progs/cache.c) built for it.  Each clobber names its victim's
# maker: the kernel, clone, the loader, or the module of the call that
# made it (the region's "maker" too).  Nothing is unjudged: every mapping
# the program meets was made while the watcher watched.
corpus() {
	p=$1 lib=$2 a=$3 no=$4 why=$5
	comm=$(basename "$p" | cut -c1-15)
	while read -r c cls kind procs maker; do
		case " $no " in
		*" $c "*)
			skip "$a $c: $why"
			continue ;;
		esac
		[ "$c" = x32 ] && no_x32 "$p" "$a" && continue
		if ! start "$tmp/e" --comm "$comm"; then
			ok 1 "$a $c: start: $(cat "$tmp/err")"
			continue
		fi
		set -- "$c"
		[ "$c" = cache ] && set -- cache "$lib"
		"$p" "$@" >"$tmp/o" 2>&1
		stop
		# Unjudged but known: another thread held the memory map's
		# lock.  A region's maker: its module.
		made=True
		[ "$kind" = region ] && made="'$maker' in \
			ev[0]['victims'][0]['maker']['module']"
		events "$tmp/e" \
			"[e['event'] for e in ev].count('clobber') == 1" \
			"ev.sort(key=lambda e: e['event'] != 'clobber') or 1" \
			"ev[0]['class'] == '$cls'" \
			"'$kind' in [v['kind'] for v in ev[0]['victims']]" \
			"'$maker' in ev[0]['victims'][0]['creator']" \
			"$made" \
			"ev[0]['action'] == 'reported'" \
			"ev[0]['program'] == '$comm'" \
			"ev[0]['caller']['module'] == '$p'" \
			"ev[0]['caller']['symbol'] != ''" \
			"ev[0]['error'] is None" \
			"len(sums) >= $procs" \
			"sum(s['clobbers'] for s in sums) == 1" \
			"unknown == []" \
			"all(balanced(s) for s in sums)" \
			"all(s['lost'] == 0 for s in sums) and not lost"
		ok $? "$a $c: reported as $cls ($kind, made by $maker)"
	done <<EOF
heap kernel-memory heap 1 kernel
stack kernel-memory stack 1 kernel
image kernel-memory program 1 kernel
thread-stack thread-stack thread-stack 1 clone
many-threads thread-stack thread-stack 1 clone
library other-module library 1 loader
mremap kernel-memory heap 1 kernel
shmat kernel-memory heap 1 kernel
fork kernel-memory heap 1 kernel
vfork kernel-memory heap 1 kernel
thread kernel-memory heap 1 kernel
after-leader kernel-memory heap 1 kernel
huge kernel-memory heap 1 kernel
huge-mremap kernel-memory heap 1 kernel
malloc-mmap other-module region 1 libc.so.6
malloc-mremap other-module region 1 libc.so.6
malloc-shmat other-module region 1 libc.so.6
merged spans-regions region 1 libc.so.6
cache other-module region 1 libncbcache
arena other-module region 1 libc.so.6
prot-none other-module region 1 libc.so.6
clone-parent other-module region 2 libc.so.6
x32 kernel-memory heap 1 kernel
EOF
	start "$tmp/e" --comm "$comm" && "$p" exec heap >"$tmp/o" 2>&1
	stop && events "$tmp/e" "len(ev) == 1" \
		"ev[0]['class'] == 'kernel-memory'" \
		"len(sums) == 1 and sums[0]['fixed'] >= 1"
	ok $? "$a exec: the program run by execve is watched as well"
	start "$tmp/e" --comm "$comm" && "$p" no-type >"$tmp/o" 2>&1
	stop && grep -q "^no-type: EINVAL$" "$tmp/o" &&
		events "$tmp/e" "len(ev) == 0" "len(sums) == 1" \
			"sums[0]['invalid'] == 1" "sums[0]['clobbers'] == 0"
	ok $? "$a no-type: the kernel's EINVAL, counted as invalid, no clobber"
	while read -r c cls; do
		start "$tmp/e" --comm "$comm" && "$p" $c >"$tmp/o" 2>&1
		stop
		st=$?
		[ $st = 0 ] && taken "$c" "$a $c" && continue
		[ $st = 0 ] && grep -q "^$c: ok$" "$tmp/o" &&
			events "$tmp/e" "len(ev) == 0" "len(sums) == 1" \
				"sums[0]['clobbers'] == 0" \
				"sums[0]['unjudged'] == 0" \
				"sums[0]['benign']['$cls'] >= 1"
		ok $? "$a $c: $cls, nothing reported"
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

# no_x32 PROG ARCH: whether PROG's kernel takes no x32 call (its case
# says ENOSYS), said as a skip.  x32's calls come by x86_64's entry, the
# bit 0x40000000 set in their numbers; an i386 program's are ENOSYS.
# Asked with no watcher of PROG's name running: the case is a clobber.
no_x32() {
	"$1" x32 2>/dev/null | grep -q "^x32: ENOSYS$" &&
		skip "$2 x32: this kernel takes no x32 call (syscall.x32=y)"
}

# report_html PROG: --report-html draws a clobber as the kernel said its
# range was (the maps are read when the event is, after the call: the
# program lingers until then), a segment attached there not drawn.
report_html() {
	p=$1
	comm=$(basename "$p" | cut -c1-15)
	f=$tmp/html-fifo
	rm -f "$f"
	mkfifo "$f" || { ok 1 "--report-html: mkfifo"; return; }
	if ! start "$tmp/e" --comm "$comm" --report-html "$tmp/r.html"; then
		ok 1 "--report-html: start: $(cat "$tmp/err")"
		return
	fi
	"$p" linger malloc-shmat <"$f" >"$tmp/o" 2>&1 &
	P=$!
	exec 3>"$f"
	# Until the event is read (a bound for a watcher that never says).
	tries=0
	while ! grep -q '"event":"clobber"' "$tmp/e" &&
		[ $tries -lt 2400 ] && kill -0 "$W" 2>/dev/null; do
		sleep 0.05
		tries=$((tries + 1))
	done
	echo >&3
	exec 3>&-
	wait "$P"
	rm -f "$f"
	stop
	pics=$(python3 "$top/tests/pictures.py" html "$tmp/r.html") &&
		[ "$pics" = 1 ] &&
		grep -q '<p>1 clobber: ' "$tmp/r.html" &&
		grep -q 'The maps were read after the call' "$tmp/r.html" &&
		grep -q 'victim (region): anonymous, made by mmap .*libc' \
			"$tmp/r.html" &&
		grep -q "caller: $p:do_shmat" "$tmp/r.html" &&
		! grep -q SYSV "$tmp/r.html"
	ok $? "--report-html: the clobber drawn with what it replaced"
}

# deny_corpus PROG LIB ARCH: the corpus under one --system --deny watcher
# scoped to PROG's name.  Each clobber refused by the kernel with EEXIST,
# the victim's bytes intact, but where the kernel cannot refuse it
# (mremap on a kernel whose system calls may not be made to fail, said in
# the start event): run, the bytes replaced.  Each reported once, as
# denied or as reported; nothing for the benign patterns, which run; the
# kernel's own EINVAL left to it.
deny_corpus() {
	p=$1 lib=$2 a=$3
	comm=$(basename "$p" | cut -c1-15)
	x32=x32
	no_x32 "$p" "$a" && x32=
	if ! start "$tmp/d" --deny --comm "$comm"; then
		ok 1 "$a --deny: start: $(cat "$tmp/err")"
		return
	fi
	mremap=denied
	grep -q '"refused":\[[^]]*"mremap"' "$tmp/d" || mremap=reported
	: >"$tmp/want"
	while read -r c cls; do
		[ "$c" = x32 ] && [ -z "$x32" ] && continue
		want=denied
		case $c in
		*mremap) want=$mremap ;;
		esac
		set -- "$c"
		[ "$c" = cache ] && set -- cache "$lib"
		"$p" "$@" >"$tmp/o" 2>&1
		r="$c: EEXIST intact"
		[ $want = denied ] || r="$c: ok replaced"
		[ "$(grep -E "^($c: |intact|replaced)" "$tmp/o" | head -n 2 |
		     tr '\n' ' ')" = "$r " ]
		ok $? "$a $c under --deny: $r"
		echo "$cls $want" >>"$tmp/want"
	done <<EOF
heap kernel-memory
stack kernel-memory
image kernel-memory
thread-stack thread-stack
many-threads thread-stack
library other-module
mremap kernel-memory
shmat kernel-memory
fork kernel-memory
vfork kernel-memory
thread kernel-memory
after-leader kernel-memory
huge kernel-memory
huge-mremap kernel-memory
malloc-mmap other-module
malloc-mremap other-module
malloc-shmat other-module
merged spans-regions
cache other-module
arena other-module
prot-none other-module
clone-parent other-module
x32 kernel-memory
EOF
	for c in reserve remap-own ring own-region own-stack jit at-break \
	    heap-end below-heap; do
		"$p" $c >"$tmp/o" 2>&1
		taken "$c" "$a $c under --deny" && continue
		grep -q "^$c: ok$" "$tmp/o"
		ok $? "$a $c under --deny: runs, not refused"
	done
	"$p" no-type >"$tmp/o" 2>&1
	grep -q "^no-type: EINVAL$" "$tmp/o"
	ok $? "$a no-type under --deny: the kernel's own EINVAL"
	stop && events "$tmp/d" \
		"sorted((e['class'], e['action']) for e in ev) == \
		 sorted(tuple(l.split()) for l in open('$tmp/want'))" \
		"all(e['event'] == 'clobber' for e in ev)" \
		"all((e['error'] or {}).get('errno') == \
		     ('EEXIST' if e['action'] == 'denied' else None) \
		     for e in ev)" \
		"all(e['program'] == '$comm' for e in ev)" \
		"unknown == []" \
		"all(balanced(s) for s in sums)" \
		"all(s['lost'] == 0 for s in sums) and not lost"
	ok $? "$a --deny: each clobber reported once, as denied or not"
}

# Whether --system --deny runs here; else why not ($deny_why): the
# kernel may let no BPF program refuse a call (the tool says so, and
# exits with 125), which skips the cases under --deny.
deny_why=
if start "$tmp/d" --deny --comm ncb-none-$$; then
	stop
	ok $? "--deny: a watcher with nothing in scope starts and ends (0)"
else
	deny_why=$(sed 's/^noclobber watch: //; s/^--system --deny: //' \
		"$tmp/err")
	case $deny_why in
	*"lets no BPF program refuse a call"*)
		status 125 "--deny where no program may refuse: status 125" \
			"$nc" watch --system --deny --comm ncb-none-$$
		skip "--deny: $deny_why" ;;
	*)
		ok 1 "--deny: $deny_why" ;;
	esac
fi

cc=${CC:-cc}
prog=$tmp/ncbsys$$
other=$tmp/ncbout$$
if $cc -O1 -o "$prog" "$top/tests/progs/clobber.c" -pthread &&
	$cc -O1 -shared -fPIC -o "$tmp/libncbcache.so" \
		"$top/tests/progs/cache.c"; then
	cp "$prog" "$other"
	corpus "$prog" "$tmp/libncbcache.so" x86_64 "" ""
	report_html "$prog"
	if [ -z "$deny_why" ]; then
		deny_corpus "$prog" "$tmp/libncbcache.so" x86_64
	else
		skip "x86_64 under --deny: $deny_why"
	fi
	# The watcher built with the sanitizers (the matrix's asan row).
	asan=$top/build/asan/noclobber
	native=$nc
	nc=$asan
	# In a VM row, under TCG, the native row's run of it is enough.
	if [ -n "${NCB_TEST_VM:-}" ]; then
		skip "the sanitizers' build: its run on the host covers it"
	elif [ -x "$asan" ] && start "$tmp/e" --comm ncb-none-$$ && stop
	then
		corpus "$prog" "$tmp/libncbcache.so" "x86_64 (ASan, UBSan)" \
			"" ""
	else
		skip "the sanitizers' build: no $asan with --system"
	fi
	nc=$native
	# The programs for a kernel without the task and VMA iterators
	# (before 6.7: the maple tree and the thread list read directly),
	# where this one has them too: the same reports.
	# A VM row of make check leaves them to 6.1's row, whose kernel
	# runs no others, and to the host (make check-vm runs them).
	if [ "${NCB_TEST_VM_SET:-}" = check ] &&
		grep -q bpf_iter_task_vma_new /sys/kernel/btf/vmlinux 2>/dev/null
	then
		skip "x86_64 (no iterators): 6.1's row and the host run them"
	elif grep -q bpf_iter_task_vma_new /sys/kernel/btf/vmlinux 2>/dev/null
	then
		export NCB_TEST_SYSTEM_TREE=1
		corpus "$prog" "$tmp/libncbcache.so" "x86_64 (no iterators)" \
			"" ""
		unset NCB_TEST_SYSTEM_TREE
	else
		skip "x86_64 (no iterators): the kernel has none, as above"
	fi
	# The BPF LSM programs that refuse where fmod_ret ones do not
	# attach: the same refusals, where the kernel takes both.
	export NCB_TEST_SYSTEM_LSM=1
	if [ -n "$deny_why" ]; then
		skip "x86_64 under --deny (BPF LSM): $deny_why"
	elif start "$tmp/d" --deny --comm ncb-none-$$ && stop; then
		deny_corpus "$prog" "$tmp/libncbcache.so" "x86_64 (BPF LSM)"
	else
		skip "x86_64 under --deny (BPF LSM): $(cat "$tmp/err")"
	fi
	unset NCB_TEST_SYSTEM_LSM
else
	ok 1 "build progs/clobber.c"
fi
. "$top/tests/targets.sh"
c32=$tmp/ncb32s$$
i386_dynamic "$top" "$c32" "$top/tests/progs/clobber.c" -pthread &&
	i386_dynamic "$top" "$tmp/libncbcache32.so" -shared -fPIC \
		"$top/tests/progs/cache.c"
case $? in
0)
	corpus "$c32" "$tmp/libncbcache32.so" i386 "" ""
	if [ -z "$deny_why" ]; then
		deny_corpus "$c32" "$tmp/libncbcache32.so" i386
	else
		skip "i386 under --deny: $deny_why"
	fi ;;
1) ok 1 "build progs/clobber.c for i386" ;;
*) skip "i386 programs: $t_why" ;;
esac

# ---- the scopes ----

comm=$(basename "$prog")
start "$tmp/e" --comm "$comm" && "$other" heap >/dev/null 2>&1 &&
	"$prog" heap >/dev/null 2>&1
stop && events "$tmp/e" "len(ev) == 1" "ev[0]['program'] == '$comm'" \
	"len(sums) == 1"
ok $? "--comm: the same program under another name is not watched"
if [ -z "$deny_why" ]; then
	start "$tmp/e" --deny --comm "$comm" &&
		{ "$other" heap >"$tmp/o2" 2>&1; "$prog" heap >"$tmp/o" 2>&1; }
	stop && grep -q "^heap: ok$" "$tmp/o2" &&
		grep -q "^heap: EEXIST$" "$tmp/o" &&
		events "$tmp/e" "len(ev) == 1" "ev[0]['program'] == '$comm'" \
			"ev[0]['action'] == 'denied'"
	ok $? "--deny --comm: another name is not refused"
else
	skip "--deny --comm: $deny_why"
fi

if mkfifo "$tmp/fifo"; then
	exec 3<>"$tmp/fifo"
	"$other" wait heap <&3 >/dev/null 2>&1 &
	pid=$!
	start "$tmp/e" -p "$pid" && "$other" heap >/dev/null 2>&1
	echo go >&3
	wait "$pid"
	stop && events "$tmp/e" "len(ev) == 1" "ev[0]['pid'] == $pid" \
		"len(sums) == 1"
	ok $? "-p: only that process is watched"
	exec 3>&-
else
	ok 1 "mkfifo"
fi

if have setpriv && id nobody >/dev/null 2>&1; then
	u=$(id -u nobody)
	start "$tmp/e" --uid nobody &&
		setpriv --reuid="$u" --regid="$(id -g nobody)" --clear-groups \
			"$other" heap >/dev/null 2>&1 &&
		"$other" heap >/dev/null 2>&1
	stop && events "$tmp/e" "len(ev) == 1" "len(sums) == 1"
	ok $? "--uid: only that user's processes are watched"
else
	skip "--uid: no setpriv or no user nobody to run a program as"
fi

# A cgroup of this test's own, in the cgroup v2 hierarchy.
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$cg2" ] && mkdir "$cg2/ncb-watch-$$" 2>/dev/null; then
	cg=$cg2/ncb-watch-$$
	# in_cg PROG ARGS...: PROG run in the cgroup.
	in_cg() {
		sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
	}
	start "$tmp/e" --cgroup "$cg" && in_cg "$other" heap >/dev/null 2>&1 &&
		"$other" heap >/dev/null 2>&1
	stop && events "$tmp/e" "len(ev) == 1" "len(sums) == 1"
	ok $? "--cgroup: only the processes in the cgroup are watched"
	if [ -z "$deny_why" ]; then
		start "$tmp/e" --deny --cgroup "$cg" &&
			{ in_cg "$other" heap >"$tmp/o" 2>&1
			  "$other" heap >"$tmp/o2" 2>&1; }
		stop && grep -q "^heap: EEXIST$" "$tmp/o" &&
			grep -q "^heap: ok$" "$tmp/o2" &&
			events "$tmp/e" "len(ev) == 1" \
				"ev[0]['action'] == 'denied'"
		ok $? "--deny --cgroup: only the cgroup's processes are refused"
	else
		skip "--deny --cgroup: $deny_why"
	fi
else
	skip "--cgroup: no cgroup v2 hierarchy this test may make a group in"
fi

# ---- real programs: nothing to report ----

small=$tmp/small.c
printf 'int f(int x)\n{\n\treturn x * 2;\n}\n' >"$small"
# real_programs [--deny]: each runs as without the watcher (--deny: none
# of its calls refused), and nothing is reported.
real_programs() {
	while read -r name cmd; do
		have "$name" || { skip "$name is not installed"; continue; }
		if [ -n "$cg" ]; then
			start "$tmp/e" "$@" --cgroup "$cg" &&
				in_cg sh -c "$cmd" >/dev/null 2>&1
		else
			start "$tmp/e" "$@" --comm "$name" &&
				sh -c "$cmd" >/dev/null 2>&1
		fi
		st=$?
		# On one CPU (a VM row's) a thread holding the mmap lock
		# cannot run while the kernel's program tries it: that call
		# is unjudged for want of what it would replace (class
		# "nothing"), said, never a clobber, and under --deny let
		# through.  One for want of a maker fails here.
		stop && [ $st -eq 0 ] && events "$tmp/e" \
			"all(e['event'] == 'unjudged' and \
			     e['class'] == 'nothing' for e in ev)" \
			"sum(s['fixed'] for s in sums) >= 1" \
			"all(balanced(s) for s in sums)" \
			"all(s['clobbers'] == 0 for s in sums)" \
			"sum(s['unjudged'] for s in sums) == len(ev)"
		ok $? "$name: runs, watched${1:+ with $1}, none judged wrongly"
		busy=$(grep -c '"event":"unjudged"' "$tmp/e")
		[ "$busy" = 0 ] ||
			echo "# $name: $busy calls unjudged, the mmap lock busy"
		# What it did that was benign, for the record.
		python3 - "$tmp/e" <<'EOF' 2>/dev/null
import collections, json, sys
n = collections.Counter()
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["event"] == "summary":
        n.update({k: v for k, v in j["benign"].items() if v})
        n["free"] += j["free"]
print("#   benign:", ", ".join("%s %d" % kv for kv in sorted(n.items())))
EOF
	done <<EOF
python3 python3 -c 'import json, sqlite3, ssl'
perl perl -e 1
java java -version
node node -e 1
gcc gcc -c -o $tmp/small.o $small
git git --version
make make --version
qemu-x86_64 qemu-x86_64 /bin/true
valgrind valgrind -q /bin/true
sort seq 1 1000 | sort -r | head -3
ldd ldd /bin/true
EOF
}
real_programs
if [ -z "$deny_why" ]; then
	real_programs --deny
else
	skip "real programs under --deny: $deny_why"
fi

# ---- a full ring buffer: counted and said ----

# The smallest ring buffer (64K: about twenty records), its reader
# stopped: the events of forty clobbers cannot all fit.
start "$tmp/e" --comm "$comm" --buffer 64K &&
	kill -STOP "$W" && for i in $(seq 40); do
		"$prog" heap >/dev/null 2>&1
	done
kill -CONT "$W"
stop && events "$tmp/e" "len(sums) == 40" \
	"all(balanced(s) for s in sums)" \
	"sum(s['clobbers'] for s in sums) == len(ev)" \
	"sum(s['lost'] for s in sums) >= 1" \
	"len(lost) >= 1 and lost[-1]['total'] == sum(s['lost'] for s in sums)"
ok $? "a full ring buffer: the events lost are counted, said, and summed"

status 125 "--system with a program: a usage error" \
	"$nc" watch --system true
status 125 "--system --upgrade: a usage error" "$nc" watch --system --upgrade
status 125 "--buffer not a power of two: a usage error" \
	"$nc" watch --system --buffer 12345
status 125 "--buffer under 64K: a usage error" \
	"$nc" watch --system --buffer 32K
status 125 "--buffer without --system: a usage error" \
	"$nc" watch --buffer 4096 true
status 125 "--cgroup that is no directory: the watcher's error" \
	"$nc" watch --system --cgroup "$tmp/none"
status 125 "--cgroup outside the cgroup v2 hierarchy: the watcher's error" \
	"$nc" watch --system --cgroup "$tmp"
status 125 "-O to a full device: the reports lost are an error" \
	"$nc" watch -O /dev/full sh -c 'exit 0'
status 125 "--uid of no user: a usage error" \
	"$nc" watch --system --uid no-such-user-$$
done_testing
