#!/bin/sh
# The pictures: maps --svg over recorded maps (tiny, typical, 32-bit, odd
# names, 60,000 mappings made here) and live processes, free --svg, exec
# --plan --svg, and the watchers' HTML report (tests/mkreport over
# recorded clobbers): well-formed SVG in its namespace, labels apart,
# the same bytes twice, the stored expectations of tests/data/pictures
# (NCB_UPDATE_PICTURES=1 writes them again, to be looked at), and each
# rendered by headless Chromium to a PNG of the right size that is not
# blank.
b=${1:?build directory}
. "$(dirname "$0")/tap.sh"
b=$(cd "$b" && pwd)
nc=$b/noclobber
here=$(cd "$(dirname "$0")" && pwd)
data=$here/data
py="python3 $here/pictures.py"
command -v python3 >/dev/null 2>&1 ||
	skip_all "python3 is not installed (it reads the pictures)"
[ -x "$b/tests/mkreport" ] || skip_all "no $b/tests/mkreport: run make tests"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chrome=
for c in chromium chromium-browser; do
	command -v $c >/dev/null 2>&1 && chrome=$c && break
done

# render FILE W H: a screenshot by headless Chromium, checked.
render() {
	if [ -z "$chrome" ]; then
		skip "chromium is not installed (scripts/install-deps)"
		return
	fi
	# A profile of its own; no sandbox, which needs privilege to set up
	# in a container (these are the test's own files).
	timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
		--hide-scrollbars --user-data-dir="$tmp/chrome" \
		--screenshot="$1.png" --window-size="$2,$3" \
		"file://$1" >/dev/null 2>&1 && $py png "$1.png" "$2" "$3"
	ok $? "$(basename "$1") renders to a $2x$3 PNG that is not blank"
}

# picture NAME COMMAND...: the SVG is well-formed, its checks hold, and
# it renders.
picture() {
	name=$1
	shift
	"$@" > "$tmp/$name.svg" 2> "$tmp/err"
	s=$?
	[ $s -eq 0 ] || [ $s -eq 1 ] || cat "$tmp/err" | sed 's/^/# /'
	$py svg "$tmp/$name.svg"
	ok $? "$name: well-formed SVG, labels apart (status $s)"
	render "$tmp/$name.svg" $($py size "$tmp/$name.svg")
}

# The file's name is in the picture: given as it is beside the maps.
cd "$data/maps" || exit 1
for m in tiny typical i386 odd; do
	picture "$m" "$nc" maps --svg --maps "$m.maps"
	"$nc" maps --svg --maps "$m.maps" | cmp -s - "$tmp/$m.svg"
	ok $? "$m: the same picture twice"
	if [ "${NCB_UPDATE_PICTURES:-}" = 1 ]; then
		cp "$tmp/$m.svg" "$data/pictures/$m.svg"
	fi
	cmp -s "$tmp/$m.svg" "$data/pictures/$m.svg"
	ok $? "$m: as tests/data/pictures/$m.svg"
done

# The pictures of README.md and docs/ (make docs) are what their maps give.
cd "$here/../docs/pictures" || exit 1
for m in *.maps; do
	"$nc" maps --svg --maps "$m" | cmp -s - "${m%.maps}.svg"
	ok $? "docs/pictures/${m%.maps}.svg regenerates without change"
done
cd "$data/maps" || exit 1

# A title longer than the width cut to fit, whole in the SVG's <title>.
long=$tmp/$(printf 'a-long-name-%.0s' 1 2 3 4 5 6 7 8 9 10).maps
cp tiny.maps "$long"
"$nc" maps --svg --maps "$long" > "$tmp/long.svg"
t=$(sed -n 's/^<text x="10" y="24"[^>]*>\(.*\)<\/text>$/\1/p' "$tmp/long.svg")
case $t in "address space of $tmp/a-long-name-"*...) ;; *) t= ;; esac
[ -n "$t" ] && [ ${#t} -le 93 ] && grep -q "<title>address space of $long" \
	"$tmp/long.svg"
ok $? "a long title cut to the picture's width"

# What the recorded maps hold, as the pictures must say it.
grep -q 'user address space: 4.0 GiB (4 GiB: all below it' "$tmp/i386.svg"
ok $? "i386: a 32-bit space of 4 GiB"
grep -q '128 TiB less a page, x86_64' "$tmp/typical.svg"
ok $? "typical: x86_64's space"
grep -q '>thread stack · 8.0 MiB<' "$tmp/typical.svg" &&
	grep -q '>python3.11 · 6.5 MiB<' "$tmp/typical.svg" &&
	grep -q '>\[heap\] · 788 KiB<' "$tmp/typical.svg" &&
	grep -q 'fill="url(#hatch0)"' "$tmp/typical.svg"
ok $? "typical: the program, heap, a thread stack, a reservation"
grep -q '>128 TiB free<' "$tmp/typical.svg"
ok $? "typical: a gap of 128 TiB drawn with its size"
# Markup as entities; a newline, controls, bytes that are no UTF-8 and
# the bidirectional override as visible escapes; nothing raw.
grep -q 'odd &lt;prog&gt; &amp; co' "$tmp/odd.svg" &&
	grep -q 'new\\012line.so' "$tmp/odd.svg" &&
	grep -q 'bad\\xff\\xfe bytes\\x80.so' "$tmp/odd.svg" &&
	grep -q 'ctrl\\001\\033\[31mred\\177.so' "$tmp/odd.svg" &&
	grep -q '\\xe2\\x80\\xae-rtl' "$tmp/odd.svg" &&
	grep -q 'é &quot;quoted&quot; &apos;single&apos;' "$tmp/odd.svg"
ok $? "odd: every name escaped and visible"
LC_ALL=C grep -q "$(printf '[\001-\010\016-\037\177]')" "$tmp/odd.svg"
[ $? -eq 1 ]
ok $? "odd: no control byte in the picture"
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' \
	"$tmp/odd.svg"
ok $? "odd: the picture is UTF-8"

# 60,000 mappings (and as many gaps) high in a 64-bit space.
python3 -c '
import sys
out = []
for i in range(60000):
    s = 0x7f0000000000 + i * 0x3000
    p = ("r--p", "r-xp", "rw-p", "---p")[i % 4]
    path = "/usr/lib/lib%d.so" % (i // 3) if i % 3 else ""
    out.append("%x-%x %s 00000000 00:00 0 %s\n" %
               (s, s + (0x2000 if i % 5 == 0 else 0x1000), p, path))
out.append("7ffe00000000-7ffe00021000 rw-p 00000000 00:00 0 [stack]\n")
sys.stdout.write("".join(out))' > "$tmp/60k.maps"
picture 60k "$nc" maps --svg --maps "$tmp/60k.maps"
[ "$(wc -c < "$tmp/60k.svg")" -lt 5000000 ]
ok $? "60k: under 5 MB ($(wc -c < "$tmp/60k.svg") bytes)"
grep -q "60000 mappings and [0-9]* gaps, each under a pixel at this scale, \
are drawn as [0-9]* aggregate marks" "$tmp/60k.svg"
ok $? "60k: says what it aggregated"
"$nc" maps --svg --maps "$tmp/60k.maps" | cmp -s - "$tmp/60k.svg"
ok $? "60k: the same picture twice"

# The options and bad input.
"$nc" maps --svg --maps - < "$data/maps/tiny.maps" | cmp -s - "$tmp/tiny.svg"
[ $? -eq 1 ] && "$nc" maps --svg --maps - < "$data/maps/tiny.maps" |
	grep -q 'address space of -'
ok $? "maps --maps - reads standard input"
"$nc" maps --maps "$data/maps/odd.maps" | grep -q 'odd <prog> & co'
ok $? "maps --maps lists a recorded file as text"
"$nc" maps --json --maps tiny.maps > "$tmp/tiny.json" &&
	python3 "$here/json-schema.py" "$here/../man/man1/noclobber.1" maps \
		"$tmp/tiny.json" && grep -q '"pid":null' "$tmp/tiny.json"
ok $? "maps --maps --json: a maps document, of no PID"
status 2 "maps --maps of a missing file" "$nc" maps --maps "$tmp/none"
printf 'not a maps file\n' > "$tmp/bad.maps"
status 2 "maps --maps of a file that is no maps" "$nc" maps --svg \
	--maps "$tmp/bad.maps"
"$nc" maps --svg --maps "$tmp/bad.maps" 2>&1 >/dev/null |
	grep -q 'not a maps text'
ok $? "maps --maps says why a file is refused"
[ ! -s "$tmp/bad.svg" ] || rm "$tmp/bad.svg"
"$nc" maps --svg --maps "$tmp/bad.maps" > "$tmp/bad.svg" 2>/dev/null
[ ! -s "$tmp/bad.svg" ]
ok $? "maps --svg prints nothing for bad input"
picture empty "$nc" maps --svg --maps /dev/null
grep -q '>128 TiB free<\|>4.0 GiB free<' "$tmp/empty.svg"
ok $? "maps --svg of no mappings: one free gap"
head -c 3000 /dev/urandom > "$tmp/random.maps"
status 2 "maps --maps of random bytes" "$nc" maps --svg --maps \
	"$tmp/random.maps"
head -c 100 "$data/maps/tiny.maps" > "$tmp/cut.maps"
status 2 "maps --maps of a line cut short" "$nc" maps --maps "$tmp/cut.maps"
{ sed -n 2p "$data/maps/tiny.maps"; sed -n 1p "$data/maps/tiny.maps"; } \
	> "$tmp/order.maps"
status 2 "maps --maps of lines out of order" "$nc" maps --maps \
	"$tmp/order.maps"
status 2 "maps --svg --json" "$nc" maps --svg --json
status 2 "maps --svg -o" "$nc" maps --svg -o start
status 2 "maps --maps with a PID" "$nc" maps --maps "$data/maps/tiny.maps" 1
status 2 "maps --maps with -o rss" "$nc" maps -o rss --maps \
	"$data/maps/tiny.maps"

if [ -w /dev/full ]; then
	status 2 "maps --svg to a full disk" sh -c \
		"\"$nc\" maps --svg --maps tiny.maps > /dev/full"
	"$nc" maps --svg --maps tiny.maps 2>&1 >/dev/full |
		grep -q 'cannot write the output'
	ok $? "maps --svg says it cannot write"
	status 2 "free --svg to a full disk" sh -c \
		"\"$nc\" free -n malloc --svg > /dev/full"
	status 125 "exec --plan --svg to a full disk" sh -c \
		"\"$nc\" exec --plan --svg /bin/true > /dev/full"
else
	skip "no /dev/full to write to"
	skip "no /dev/full to write to"
	skip "no /dev/full to write to"
	skip "no /dev/full to write to"
fi

# Live: this tool, another process, free's window and exec's plan.
picture self "$nc" maps --svg
grep -q 'address space of noclobber (PID [0-9]*)' "$tmp/self.svg" &&
	grep -q 'at [0-9-]* [0-9:]* UTC' "$tmp/self.svg"
ok $? "maps --svg: the process's name, PID and time"
SOURCE_DATE_EPOCH=0 "$nc" maps --svg | grep -q 'at 1970-01-01 00:00:00 UTC'
ok $? "maps --svg: SOURCE_DATE_EPOCH's time"
sleep 30 &
pid=$!
i=0
# Once it is sleep: the shell's child before its exec has libc too.
while [ $i -lt 600 ] &&
	! { [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = sleep ] &&
	grep -q '/libc[.-]' "/proc/$pid/maps" 2>/dev/null; }
do
	sleep 0.05
	i=$((i + 1))
done
picture sleep "$nc" maps --svg -p "$pid"
# Named in its marks' titles: a label may give way to others, as the
# layout of a process (its gaps, by ASLR) leaves room.
grep -q "address space of sleep (PID $pid)" "$tmp/sleep.svg" &&
	grep -q '<title>[^<]* library [^<]*/libc\.so\.6</title>' \
		"$tmp/sleep.svg"
ok $? "maps --svg -p: another process, its libraries named"
picture free "$nc" free -n malloc --size 64M --svg -p "$pid"
grep -q 'room for 64 MiB near malloc in sleep' "$tmp/free.svg" &&
	grep -q 'anchor: malloc in libc.so.6' "$tmp/free.svg" &&
	grep -q 'the block · 64 MiB (planned)' "$tmp/free.svg" &&
	grep -q 'window: 2.0 GiB each side' "$tmp/free.svg"
ok $? "free --svg: the window, the anchor and the block"
kill "$pid"
picture free-none "$nc" free -n '[stack]' --size 3G -w 1G --svg
grep -q 'no room: the window is shorter than 3.0 GiB' "$tmp/free-none.svg"
ok $? "free --svg: why there is no room"
status 2 "free --svg --json" "$nc" free -n malloc --svg --json
picture plan "$nc" exec --plan --svg /bin/true
grep -q 'exec plan of /bin/true\|exec plan of /usr/bin/true' \
	"$tmp/plan.svg" &&
	grep -q '>program · [0-9.]* KiB (planned)<' "$tmp/plan.svg" &&
	grep -q '>interpreter · ' "$tmp/plan.svg" &&
	grep -q '>stack · ' "$tmp/plan.svg" &&
	grep -q 'brk: the heap starts here' "$tmp/plan.svg"
ok $? "exec --plan --svg: the program, its interpreter, stack and break"
status 125 "exec --svg without --plan" "$nc" exec --svg /bin/true
status 125 "exec --plan --svg --json" "$nc" exec --plan --svg --json \
	/bin/true

# The report of recorded clobbers.
"$b/tests/mkreport" "$data/report/clobbers.rec" > "$tmp/report.html"
ok $? "mkreport writes the report"
pics=$($py html "$tmp/report.html")
ok $? "report: a page whose pictures are well-formed SVG"
[ "$pics" = 5 ]
ok $? "report: a picture for each clobber with maps (5: $pics)"
[ "$(grep -c 'replaces this</text>' "$tmp/report.html")" = 5 ]
ok $? "report: each replaced range named once"
grep -q 'The maps were read after the call' "$tmp/report.html" &&
	grep -q 'victim (region): anonymous, made by (not known)' \
		"$tmp/report.html" &&
	grep -q '<p>Not judged: ' "$tmp/report.html" &&
	grep -q '5 clobbers: .*; 1 placement not judged' "$tmp/report.html"
ok $? "report: maps read after a call drawn with its victims; not judged"
grep -q '<h1>Clobbers: python3 jit.py --warm &lt;cache&gt; &amp; more</h1>' \
	"$tmp/report.html" &&
	grep -q 'ld.so&lt;&amp;&gt;' "$tmp/report.html" &&
	grep -q 'No maps were recorded before this call' "$tmp/report.html" &&
	grep -q 'victim (heap): \[heap\], made by libc.so.6:malloc' \
		"$tmp/report.html" &&
	grep -q 'caller: /tmp/libjit.so:jit_grow' "$tmp/report.html"
ok $? "report: names escaped, victims with their maker, the caller"
"$b/tests/mkreport" "$data/report/clobbers.rec" | cmp -s - "$tmp/report.html"
ok $? "report: the same page twice"
"$b/tests/mkreport" "$data/report/many.rec" > "$tmp/many.html" &&
	[ "$(grep -c '<section' "$tmp/many.html")" = 1000 ] &&
	grep -q '<p>5 more were reported and are not shown' "$tmp/many.html"
ok $? "report: 1000 records kept, the rest counted"
# A victim between neighbours of its kind and size is the one named.
"$b/tests/mkreport" "$data/report/heap-page.rec" > "$tmp/heap-page.html" &&
	[ "$($py html "$tmp/heap-page.html")" = 1 ] &&
	grep -q '>victim (heap): \[heap\], made by the kernel · 4.0 KiB<' \
		"$tmp/heap-page.html"
ok $? "report: a page of the heap replaced, its victim named"
render "$tmp/report.html" 1000 1600
done_testing
