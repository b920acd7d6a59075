#!/bin/sh
# The noclobber tool: every subcommand, its JSON, its exit statuses.
b=${1:?build directory}
. "$(dirname "$0")/tap.sh"
nc=$b/noclobber
json() { python3 -c 'import json,sys; json.load(sys.stdin)'; }
have_py=0
command -v python3 >/dev/null 2>&1 && have_py=1

check "--help" "$nc" --help
status 2 "no command" "$nc"
status 2 "unknown command" "$nc" frobnicate
check "--version" "$nc" --version
for c in probe maps who map free demo; do
	check "$c --help" "$nc" "$c" --help
done
check "probe" "$nc" probe
# The matrix says what this kernel does (from its version); alone, any.
want=${NCB_EXPECT_NOREPLACE:-honoured|ignored|partial|rejected|replaces}
"$nc" probe --json | grep -Eq "\"noreplace\":\"($want)\""
ok $? "probe --json names the behaviour (${NCB_EXPECT_NOREPLACE:-any})"
if [ $have_py = 1 ]; then
	"$nc" probe --json | json
	ok $? "probe --json is JSON"
fi
status 2 "probe with an argument" "$nc" probe extra

status 1 "who: the stack is occupied" "$nc" who '[stack]'
"$nc" who '[stack]' | grep -q '\[stack\]'
ok $? "who names the stack"
status 0 "who: page 0x1000 is free" "$nc" who 0x1000
"$nc" who 0x1000 | grep -q free
ok $? "who says free"
if [ $have_py = 1 ]; then
	"$nc" who --json '[stack]' 64K | json
	ok $? "who --json is JSON"
fi
status 2 "who: no address" "$nc" who
status 2 "who: not an address" "$nc" who no-such-mapping-here
status 2 "who: bad length" "$nc" who 0x1000 12Q
status 2 "who: bad pid" "$nc" who --pid x 0x1000
# sleeper: start sleep 30 in the background, its pid in $pid, and wait
# until the child has become sleep (a fork may not have run execve yet)
# with its C library mapped (the program is, from execve on; the library
# only once ld.so has run).
sleeper() {
	sleep 30 &
	pid=$!
	i=0
	while [ $i -lt 600 ] &&
		! { grep -q /sleep "/proc/$pid/maps" &&
		    grep -q '/libc[.-]' "/proc/$pid/maps"; } 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
}
sleeper
"$nc" who --pid "$pid" /sleep | grep -q "process $pid"
ok $? "who --pid reads another process"
kill "$pid"

check "maps" "$nc" maps
"$nc" maps | grep -q '\[stack\]'
ok $? "maps lists the stack"
"$nc" maps | grep -q ' gap '
ok $? "maps shows gaps"
"$nc" maps | tail -1 | grep -q 'mappings, .* mapped'
ok $? "maps sums up"
if [ $have_py = 1 ]; then
	"$nc" maps --json | json
	ok $? "maps --json is JSON"
fi
sleeper
"$nc" maps --json "$pid" |
	grep -q '"path":"/usr/bin/sleep"\|"path":"/bin/sleep"'
ok $? "maps PID reads another process"
kill "$pid"
status 2 "maps: not a pid" "$nc" maps abc
status 2 "maps: a pid is decimal" "$nc" maps 0x10
status 2 "maps: a pid has no sign" "$nc" maps +1
status 2 "who: a pid is decimal" "$nc" who --pid 0x10 0x1000
status 2 "maps: no such process" "$nc" maps 2147483647
"$nc" maps 2147483647 2>&1 | grep -q 'no such process'
ok $? "maps says there is no such process"
status 2 "who: no such process" "$nc" who --pid 2147483647 '[stack]'
"$nc" who --pid 2147483647 '[stack]' 2>&1 | grep -q 'no such process'
ok $? "who says there is no such process"
"$nc" who --pid 2147483647 0x1000 2>&1 | grep -q 'no such process'
ok $? "who says so for an address too"
status 2 "maps: two pids" "$nc" maps 1 2

if grep -q '\[vsyscall\]' /proc/$$/maps; then
	status 1 "who: the vsyscall page is occupied" \
		"$nc" who 0xffffffffff600000
	"$nc" who 0xffffffffff600000 | grep -q '\[vsyscall\]'
	ok $? "who names [vsyscall]"
	"$nc" maps | grep -q '\[vsyscall\]'
	ok $? "maps lists [vsyscall]"
else
	skip "no [vsyscall] here"
	skip "no [vsyscall] here"
	skip "no [vsyscall] here"
fi

# A process of our own, started by python3, that waits: one of its paths
# is 5000 bytes long, another not UTF-8.
holder='
import mmap, os, signal, sys
top = os.fsencode(sys.argv[1])
fd = dfd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
path, name = top, b"d" * 200
while len(path) < 5000:
    os.mkdir(name, dir_fd=dfd)
    dfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dfd)
    path += b"/" + name
keep = []
for d, f in ((dfd, b"ncb-long-file"),
             (fd, b"odd \xff\xfe \xc0\xaf \xed\xa0\x80 \xe2\x82 \xc3\xa9 "
                  b"\"q\" b\\s \t n\nl")):
    f = os.open(f, os.O_RDWR | os.O_CREAT, 0o600, dir_fd=d)
    os.ftruncate(f, 4096)
    keep.append(mmap.mmap(f, 4096))
print(os.getpid(), flush=True)
signal.pause()
'
# A zombie of our own: its parent, which waits, has not reaped it.
zombie='
import os, signal
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
print(pid, flush=True)
signal.pause()
'
# Each line of /proc/PID/maps against the JSON (on stdin): the same fields;
# the path, with the kernel escaping only newlines, from path_hex where
# the path is not UTF-8, and then "path" as Python decodes it.
compare='
import json, sys
raw = open("/proc/%s/maps" % sys.argv[1], "rb").read().split(b"\n")[:-1]
doc = json.loads(sys.stdin.buffer.read().decode("utf-8"))
json.dumps(doc, ensure_ascii=False).encode("utf-8")
maps = [e for e in doc["entries"] if e["type"] == "mapping"]
assert len(raw) == len(maps), (len(raw), len(maps))
seen = set()
for line, m in zip(raw, maps):
    f = line.split(b" ", 5)
    start, end = f[0].split(b"-")
    path = f[5].lstrip(b" ") if len(f) > 5 else b""
    if "path_hex" in m:
        got = bytes.fromhex(m["path_hex"])
        try:
            got.decode("utf-8")
            assert False, "path_hex for UTF-8"
        except UnicodeDecodeError:
            pass
        seen.add("odd")
    else:
        got = m["path"].encode("utf-8")
    assert m["path"] == got.decode("utf-8", "replace"), m["path"]
    assert got.replace(b"\n", b"\\012") == path, (got, path)
    assert (int(start, 16), int(end, 16)) == \
        (int(m["start"], 16), int(m["end"], 16)), line
    assert f[1].decode() == m["perms"], line
    assert int(f[2], 16) == int(m["offset"], 16), line
    assert int(m["size"], 16) == int(end, 16) - int(start, 16), line
    assert [int(x, 16) for x in f[3].split(b":")] == \
        [int(x, 16) for x in m["dev"].split(":")], line
    assert int(f[4]) == m["inode"], line
    if len(got) > 5000:
        seen.add("long")
    if got == b"[vsyscall]":
        seen.add("gate")
want = {"odd", "long"}
if any(line.endswith(b" [vsyscall]") for line in raw):
    want.add("gate")
assert seen == want, seen
'
if [ $have_py = 1 ]; then
	d=$(mktemp -d)
	mkfifo "$d/ready"
	python3 -c "$holder" "$d" > "$d/ready" &
	read -r hp < "$d/ready"
	"$nc" maps --json "$hp" | python3 -c "$compare" "$hp"
	ok $? "maps --json lists the lines of /proc/PID/maps, odd paths too"
	"$nc" maps "$hp" | grep -q 'n\\012l$'
	ok $? "maps shows a newline in a path as the kernel does"
	status 1 "who finds a long path" "$nc" who --pid "$hp" ncb-long-file
	"$nc" who --json --pid "$hp" ncb-long-file | python3 -c '
import json, sys
m = json.load(sys.stdin)["occupants"][0]
assert m["path"].endswith("/ncb-long-file") and len(m["path"]) > 5000'
	ok $? "who --json gives the long path"
	kill "$hp"
	wait "$hp" 2>/dev/null

	python3 -c "$zombie" > "$d/ready" &
	zp=$!
	read -r z < "$d/ready"
	status 1 "maps: a zombie has no address space" "$nc" maps "$z"
	"$nc" maps "$z" 2>&1 | grep -q 'no user address space'
	ok $? "maps says so"
	status 2 "who: a zombie has no address space" \
		"$nc" who --pid "$z" 0x1000
	"$nc" who --pid "$z" '[stack]' 2>&1 | grep -q 'no user address space'
	ok $? "who says so"
	kill "$zp"
	wait "$zp" 2>/dev/null
	rm -rf "$d"
else
	for i in 1 2 3 4 5 6 7 8 9; do
		skip "no python3"
	done
fi
if [ "$(cat /proc/2/comm 2>/dev/null)" = kthreadd ]; then
	status 1 "maps: a kernel thread has no address space" "$nc" maps 2
	"$nc" maps 2 2>&1 | grep -q 'no user address space'
	ok $? "maps says so"
else
	skip "PID 2 is no kthreadd here"
	skip "PID 2 is no kthreadd here"
fi

# Another user's process: permission denied, said as such.
if [ "$(id -u)" != 0 ]; then
	skip "not root: cannot become another user"
	skip "not root: cannot become another user"
	skip "not root: cannot become another user"
elif ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1 ||
     ! setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" \
	--clear-groups "$nc" --version >/dev/null 2>&1; then
	skip "cannot run $nc as nobody with setpriv"
	skip "cannot run $nc as nobody with setpriv"
	skip "cannot run $nc as nobody with setpriv"
else
	as_nobody() {
		setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" \
			--clear-groups "$@"
	}
	sleep 30 &
	rp=$!
	status 2 "who as nobody in a process of root's" \
		as_nobody "$nc" who --pid "$rp" '[stack]'
	as_nobody "$nc" who --pid "$rp" 0x1000 2>&1 |
		grep -q 'permission denied'
	ok $? "who says permission denied"
	as_nobody "$nc" maps "$rp" 2>&1 | grep -q 'permission denied'
	ok $? "maps says permission denied"
	kill "$rp"
fi

status 1 "map over the stack is refused" "$nc" map '[stack]' 4096
"$nc" map '[stack]' 4096 | grep -q 'EEXIST'
ok $? "map says EEXIST"
"$nc" map '[stack]' 4096 | grep -q '\[stack\]'
ok $? "map names the occupant"
status 0 "map at a free address" "$nc" map --prot rw 0x200000000 64K
"$nc" map --json '[stack]' 4096 | grep -q '"error":{"errno":"EEXIST"'
ok $? "map --json reports EEXIST"
if [ $have_py = 1 ]; then
	"$nc" map --json '[stack]' 4096 | json
	ok $? "map --json is JSON"
fi
status 1 "map: unaligned address" "$nc" map 0x200000001 4096
status 2 "map: bad prot" "$nc" map --prot rwz 0x200000000 4096
status 2 "map: no length" "$nc" map 0x200000000

# The conventions every command shares (noclobber(1), JSON): each
# document of the shape the manual gives, a failure as one error
# document, -p for a process, no short option with two meanings.
top=$(cd "$(dirname "$0")/.." && pwd)
man1=$top/man/man1/noclobber.1
# shape NAME COMMAND...: the command's standard output is a NAME document.
shape() {
	name=$1
	shift
	if [ $have_py = 0 ]; then
		skip "no python3 to read the JSON"
		return
	fi
	"$@" >"$tmp/doc" 2>/dev/null
	python3 "$top/tests/json-schema.py" "$man1" "$name" "$tmp/doc" \
		>"$tmp/why"
	s=$?
	sed 's/^/# /' "$tmp/why"
	ok $s "$* prints a $name document"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shape probe "$nc" probe --json
shape maps "$nc" maps --json
shape maps "$nc" maps --json -o rss,pss,dirty,swap
shape who "$nc" who --json '[stack]' 64K
shape who "$nc" who --json 0x1000
shape map "$nc" map --json '[stack]' 4K
shape map "$nc" map --json 0x200000000 4K
shape map "$nc" map --json 0x200000001 4K
shape plan "$nc" exec --plan --json ls
shape check "$nc" check --json /bin/true /etc/hostname /dev/null
shape failure "$nc" maps --json 2147483647
shape failure "$nc" who --json -p 2147483647 0x1000
shape failure "$nc" who --json no-such-mapping-here
shape failure "$nc" exec --plan --json /nonexistent/prog
shape check "$nc" check --json /nonexistent/file /bin/true
if [ $have_py = 0 ] || ! "$nc" watch true >/dev/null 2>&1; then
	skip "no python3, or the watcher cannot trace here"
else
	"$nc" watch --json -O "$tmp/w" /nonexistent/prog 2>/dev/null
	s=$?
	python3 "$top/tests/json-schema.py" "$man1" failure "$tmp/w" &&
		[ $s -eq 127 ]
	ok $? "watch --json, no program: a failure document in its reports"
fi
status 2 "maps --json, no such process: status 2" \
	"$nc" maps --json 2147483647
"$nc" maps --json 2147483647 2>&1 >/dev/null | grep -q 'no such process'
ok $? "and the message on standard error too"

# The schema checker itself finds what differs.
if [ $have_py = 1 ]; then
	e='{"errno":"EIO","code":"5","message":""}'
	for bad in '{"version":2,"error":null}' '{"error":null}' \
		   '{"error":null,"version":1}' \
		   '{"version":1,"version":1,"error":null}' \
		   '{"version":1,"error":null,"more":1}' \
		   "{\"version\":1,\"error\":$e}"
	do
		echo "$bad" | python3 "$top/tests/json-schema.py" "$man1" \
			failure >/dev/null
		[ $? -eq 1 ]
		ok $? "json-schema.py refuses $bad"
	done
	"$nc" maps --json | sed 's/"size":"0x/"size":"0X/' |
		python3 "$top/tests/json-schema.py" "$man1" maps >/dev/null
	[ $? -eq 1 ]
	ok $? "json-schema.py refuses a size that is no lowercase hex string"
fi

check "-V" "$nc" -V
[ "$("$nc" -V)" = "$("$nc" --version)" ]
ok $? "-V is --version"
sleeper
a=$("$nc" maps -p "$pid" | grep -c /sleep)
b=$("$nc" maps --pid "$pid" | grep -c /sleep)
c=$("$nc" maps "$pid" | grep -c /sleep)
[ "$a" -gt 0 ] && [ "$a" = "$b" ] && [ "$b" = "$c" ]
ok $? "maps: -p PID, --pid PID and PID name the same process ($a $b $c)"
status 2 "maps: -p and a PID" "$nc" maps -p "$pid" "$pid"
"$nc" who -p "$pid" /sleep | grep -q "process $pid"
ok $? "who -p PID"
kill "$pid"

# maps -o: columns as asked, with a heading; smaps' counts summed.
"$nc" maps -o start,size,rss,dirty,path >"$tmp/o"
ok $? "maps -o start,size,rss,dirty,path"
head -1 "$tmp/o" | grep -Eq '^ *START +SIZE +RSS +DIRTY PATH$'
ok $? "maps -o: a heading"
size='[0-9.]+ [KMG]?i?B'
grep -Eq "^[0-9a-f]{12} +$size +$size +$size \\[stack\\]\$" "$tmp/o"
ok $? "maps -o: the stack's row"
tail -1 "$tmp/o" | grep -q 'mappings, .* mapped, rss .*, dirty '
ok $? "maps -o: the last line sums rss and dirty"
"$nc" maps --bytes -o size,rss,path | grep -Eq '^ +[0-9]+ +[0-9]+ \[stack\]$'
ok $? "maps --bytes: sizes in bytes"
status 2 "maps -o: an unknown column" "$nc" maps -o start,colour
status 2 "maps -o: nothing" "$nc" maps -o ''
status 2 "maps -o: an empty column" "$nc" maps -o start,,end
if [ $have_py = 1 ]; then
	# Our own counts against smaps: each mapping's rss as the kernel's.
	"$nc" maps --json -o rss,dirty --bytes | python3 -c '
import json, sys
d = json.load(sys.stdin)
m = [e for e in d["entries"] if e["type"] == "mapping"]
assert all(e["rss"] is None or e["rss"] % 1024 == 0 for e in m)
assert sum(e["rss"] or 0 for e in m) == d["rss"] > 0, d["rss"]
assert d["dirty"] <= d["rss"]
assert all(e["rss"] is None or e["rss"] <= int(e["size"], 16) for e in m)
assert "pss" not in d and all("pss" not in e for e in m)'
	ok $? "maps --json -o rss,dirty: per mapping and in all, bounded"
	"$nc" maps --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "rss" not in d and all("rss" not in e for e in d["entries"])'
	ok $? "maps --json: no smaps members unless asked"
fi

# No short option means two things across the commands.
if [ $have_py = 1 ] && [ -d "$top/tools" ]; then
	python3 - "$top"/tools/cmd-*.c <<'PY'
import re, sys
seen = {}
for f in sys.argv[1:]:
    src = open(f).read()
    table = dict((v, k) for k, v in re.findall(
        r'\{ "([a-z-]+)", \w+_argument, NULL, \'(.)\' \}', src))
    for shorts in re.findall(r'getopt_long\(argc, argv, "\+?([^"]*)"', src):
        for c in shorts.replace(":", ""):
            long = table.get(c)
            if long is None:
                continue
            if seen.setdefault(c, long) != long:
                print("# -%s: --%s and --%s" % (c, seen[c], long))
                sys.exit(1)
PY
	ok $? "no short option with two meanings"
fi

# free: where N bytes go within reach of an anchor.
shape free "$nc" free --json -n '[stack]' --size 1M
shape free "$nc" free --json -n 0x40000000 -w 64K --size 1M
shape free "$nc" free --json -n libc.so --size 1M
shape failure "$nc" free --json -n no-such-anchor-here
status 2 "free: an empty anchor names nothing" "$nc" free -n ''
status 2 "free: no such process, whatever the window" \
	"$nc" free -p 2147483647 -n 0xffff800000000000 -w 4096
shape failure "$nc" free --json -p 2147483647 -n 0x40000000
status 0 "free near the stack" "$nc" free -n '[stack]' --size 1M
"$nc" free -n '[stack]' --size 1M | grep -q '^placed at 0x'
ok $? "free says where"
"$nc" free -n '[stack]' | grep -q '^window \[0x[0-9a-f]*, 0x[0-9a-f]*): '
ok $? "free names the window"
status 1 "free: a window shorter than the block" \
	"$nc" free -n 0x40000000 -w 64K --size 1M
"$nc" free -n 0x40000000 -w 64K --size 1M | grep -q 'no room: the window'
ok $? "free says why not"
status 2 "free: no anchor" "$nc" free --size 1M
status 2 "free: size 0" "$nc" free -n '[stack]' --size 0
status 2 "free: align not a power of two" "$nc" free -n '[stack]' -a 12K
status 2 "free: align below a page" "$nc" free -n '[stack]' -a 1
status 2 "free: within 0" "$nc" free -n '[stack]' -w 0
status 2 "free: bad pid" "$nc" free -p x -n '[stack]'
status 2 "free: an argument too many" "$nc" free -n '[stack]' extra
# --reach: each machine's instructions by kind or name.
shape free "$nc" free --json -n '[stack]' -r branch
shape free "$nc" free --json -n '[stack]' -r aarch64:adrp -w 1G
"$nc" free -n 0x40000000 -r aarch64:bl |
	grep -q '^window \[0x38001000, 0x48000000): '
ok $? "free --reach aarch64:bl: 128 MiB either way of one byte, B at 4 bytes"
"$nc" free -n 0x40000000 -r aarch64:b -w 1M |
	grep -q '^window \[0x3ff01000, 0x40100000): '
ok $? "free --reach with -w: the narrower"
"$nc" free --json -n 0x40000000 -r riscv64:jal | grep -q \
	'"reach":{"kind":"branch","arch":"riscv64","instruction":"jal",'\
'"min":-1048576,"max":1048574}'
ok $? "free --json names the instruction and its figures"
"$nc" free --json -n 0x40000000 | grep -q '"reach":null'
ok $? "free --json without --reach: reach null"
status 2 "free: --reach of an unknown kind" "$nc" free -n '[stack]' -r far
status 2 "free: --reach on an unknown machine" "$nc" free -n '[stack]' \
	-r sparc:branch
status 2 "free: --reach of a kind the machine has not" "$nc" free \
	-n '[stack]' -r i386:pcrel
status 2 "free: --reach with an empty kind" "$nc" free -n '[stack]' -r ''
shape failure "$nc" free --json -n '[stack]' -r ppc64le:pcrel
status 2 "free: names nothing" "$nc" free -n no_such_thing_anywhere_here
status 1 "free: a window past 2^64 is outside" "$nc" free -n 0xffffffffffff0000
status 2 "free: no such process" "$nc" free -p 2147483647 -n 0x1000
"$nc" free -p 2147483647 -n 0x1000 2>&1 | grep -q 'no such process'
ok $? "free says there is no such process"
sleeper
"$nc" free -p "$pid" -n malloc | grep -q "^process $pid: .* malloc in .*libc"
ok $? "free -p finds malloc in a sleeping process's libc"
"$nc" free -p "$pid" -n libc.so | grep -q "^process $pid: .*libc.so"
ok $? "free -p takes a library"
kill "$pid"
# A process of our own that says where its malloc and a 64 MiB mapping
# of its own are, and waits.  The C library's malloc: in a program that
# is not position-independent (Debian'"'"'s python3) the global name is
# the program's PLT entry.
near_holder='
import ctypes, mmap, signal
m = mmap.mmap(-1, 64 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
a = ctypes.addressof(ctypes.c_char.from_buffer(m))
f = ctypes.cast(ctypes.CDLL("libc.so.6").malloc, ctypes.c_void_p).value
print(f, a, flush=True)
signal.pause()
'
# The document of free --json on stdin against what the holder said.
near_check='
import json, sys
kind, want, mine = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = json.load(sys.stdin)
assert list(d)[0] == "version" and d["version"] == 1, d
assert d["pid"] == int(sys.argv[4]), d["pid"]
hexes = [d["anchor"]["start"], d["anchor"]["end"], d["within"], d["size"],
         d["align"], d["window"]["start"], d["window"]["end"], d["free"]]
hexes += [g[k] for g in d["largest"] for k in ("start", "end", "size")]
hexes += [o["bytes"] for o in d["occupants"]] + [d["others"]["bytes"]]
for h in hexes + ([d["address"]] if d["address"] else []):
    assert h.startswith("0x") and h == h.lower(), h
    int(h, 16)
a = d["anchor"]
lo, hi = int(a["start"], 16), int(a["end"], 16)
w = (int(d["window"]["start"], 16), int(d["window"]["end"], 16))
assert a["kind"] == kind, a
if kind == "symbol":
    assert lo == want and a["symbol"].endswith("malloc"), (hex(lo), a)
    assert "libc" in a["path"], a
    assert d["reason"] == "placed" and d["error"] is None, d
    at, size = int(d["address"], 16), int(d["size"], 16)
    assert w[0] <= at and at + size <= w[1], d
    assert at + size - 1 - lo < 1 << 31 and hi - 1 - at < 1 << 31, d
elif kind == "library":
    assert "libc" in a["path"] and lo <= want < hi, (a, hex(want))
else:
    assert d["reason"] == "full" and d["address"] is None, d
    assert d["error"]["errno"] == "ENOMEM" and d["error"]["code"] == 12
    anon = [o for o in d["occupants"] if o["path"] == ""]
    assert int(anon[0]["bytes"], 16) == w[1] - w[0], (anon, w)
    assert d["free"] == "0x0" and d["largest"] == [], d
'
if [ $have_py = 1 ]; then
	d=$(mktemp -d)
	mkfifo "$d/ready"
	python3 -c "$near_holder" > "$d/ready" &
	hp=$!
	read -r fn mine < "$d/ready"
	"$nc" free --json -p "$hp" -n malloc --size 16M |
		python3 -c "$near_check" symbol "$fn" "$mine" "$hp"
	ok $? "free --json: malloc where the process has it, placed in reach"
	"$nc" free --json -p "$hp" -n libc.so:malloc |
		python3 -c "$near_check" symbol "$fn" "$mine" "$hp"
	ok $? "free --json: LIBRARY:SYMBOL"
	"$nc" free --json -p "$hp" -n libc.so |
		python3 -c "$near_check" library "$fn" "$mine" "$hp"
	ok $? "free --json: a library's whole span"
	at=$(printf '%#x' $((mine + (32 << 20))))
	status 1 "free: no room inside a mapping" \
		"$nc" free -p "$hp" -n "$at" -w 16M
	"$nc" free --json -p "$hp" -n "$at" -w 16M |
		python3 -c "$near_check" address "$fn" "$mine" "$hp"
	ok $? "free --json: no room, and what is in the way"
	"$nc" free -p "$hp" -n "$at" -w 16M | grep -q 'no room: no free gap'
	ok $? "free says no gap is long enough"
	kill "$hp"
	wait "$hp" 2>/dev/null
	rm -rf "$d"
	"$nc" free --json -p 2147483647 -n 0x1000 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert list(d) == ["version", "error"] and d["version"] == 1, d
assert d["error"]["errno"] == "ENOENT" and d["error"]["code"] == 2, d
assert d["error"]["message"], d'
	ok $? "free --json: a failure is one error object"
	for c in "ENOENT -n no_such_thing_anywhere_here" \
		 "EINVAL -n 0x1000 -a 3"; do
		# shellcheck disable=SC2086
		"$nc" free --json ${c#* } 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert list(d) == ["version", "error"], d
assert d["error"]["errno"] == sys.argv[1], d' "${c%% *}"
		ok $? "free --json: ${c%% *} as one error object"
	done
else
	for i in 1 2 3 4 5 6 7 8 9; do
		skip "no python3"
	done
fi

# What a hostile review found: every operand checked and the summary
# given though one is missing; an empty name names no mapping; an anchor
# whose window passes 2^64 lies outside; a full device is ENOSPC, not
# EIO; a bad PID under --json is a JSON error.
"$nc" check /bin/true /nonexistent/x /bin/ls >"$tmp/o" 2>"$tmp/e"
s=$?
[ $s -eq 2 ] && grep -q "^/bin/ls: ok" "$tmp/o" &&
	grep -q "2 files checked, 0 failed; 1 unreadable" "$tmp/e"
ok $? "check: a missing operand is counted, the rest checked (status $s)"
status 2 "who '': no mapping is named by nothing" "$nc" who ''
"$nc" free -n '[vsyscall]' >"$tmp/o" 2>&1
s=$?
if grep -q vsyscall /proc/self/maps; then
	[ $s -eq 1 ] && grep -q "outside the user address space" "$tmp/o"
	ok $? "free -n [vsyscall]: the window lies outside (status $s)"
else
	skip "this kernel maps no [vsyscall]"
fi
for r in "" "-r branch"; do
	# shellcheck disable=SC2086
	"$nc" free -n 0xffffffffffffffff $r >"$tmp/o" 2>&1
	s=$?
	[ $s -eq 2 ] && grep -q "anchor at 2^64 - 1" "$tmp/o"
	ok $? "free -n 2^64-1 $r: said to end past 2^64 (status $s)"
done
"$nc" check /bin/true >/dev/full 2>"$tmp/e"
s=$?
[ $s -eq 2 ] && grep -q "No space left on device" "$tmp/e"
ok $? "check >/dev/full: ENOSPC, status 2 ($s)"
for args in "--json -p abc" "-p abc --json" "--json abc"; do
	# shellcheck disable=SC2086
	out=$("$nc" maps $args 2>/dev/null)
	s=$?
	[ $s -eq 2 ] && echo "$out" | grep -q '"errno":"EINVAL"'
	ok $? "maps $args: a JSON error (status $s)"
done

# watch runs the watchers' program beside the tool, else the installed
# one; with neither, it says which it wanted and fails as env(1) does.
if [ -x "${nc%/*}/noclobber-watch" ]; then
	! ldd "$nc" 2>/dev/null | grep -Eq 'libseccomp|libbpf|libelf'
	ok $? "the tool loads no watcher's library"
	mkdir "$tmp/alone"
	cp "$nc" "$tmp/alone/noclobber"
	want=$(strings "$nc" | grep -m1 '/noclobber/noclobber-watch$')
	if [ -n "$want" ] && [ ! -e "$want" ]; then
		"$tmp/alone/noclobber" watch -- true 2>"$tmp/e"
		s=$?
		[ $s -eq 125 ] && grep -qF "cannot run the watcher $want" \
			"$tmp/e"
		ok $? "watch without its program: names $want, 125 ($s)"
		# This tool under the watchers' name, linked or copied:
		# never run again and again.
		ln -s noclobber "$tmp/alone/noclobber-watch"
		"$tmp/alone/noclobber" watch -- true 2>"$tmp/e"
		s=$?
		[ $s -eq 125 ] && grep -q "noclobber-watch: this tool itself" \
			"$tmp/e"
		ok $? "watch: this tool linked as noclobber-watch ($s)"
		rm "$tmp/alone/noclobber-watch"
		cp "$nc" "$tmp/alone/noclobber-watch"
		"$tmp/alone/noclobber" watch -- true 2>"$tmp/e"
		s=$?
		[ $s -eq 125 ] && grep -q "is this tool again" "$tmp/e"
		ok $? "watch: this tool copied as noclobber-watch ($s)"
	else
		for i in 1 2 3; do
			skip "the watcher is installed at ${want:-?}"
		done
	fi
fi

status 0 "demo" "$nc" demo
"$nc" demo | grep -q 'data is gone'
ok $? "demo shows MAP_FIXED clobbering"
done_testing
