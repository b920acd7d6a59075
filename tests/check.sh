#!/bin/sh
# noclobber check: programs and libraries of every class, byte order and
# machine checked by their own rules; in a directory, what is no program or
# library skipped and counted by kind; named, refused with what it is; the
# text, --json, --quiet, --strict and --elf-only forms; this machine's
# programs and libraries, and the cross toolchains' files, without a false
# failure.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
nc=$b/noclobber
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp"; rm -rf "$tmp"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }
[ -x "$b/tests/mkelf" ] || skip_all "no $b/tests/mkelf: run make tests"
"$b/tests/mkelf" "$tmp/t" || skip_all "mkelf could not write its images"
t=$tmp/t

check "--help" "$nc" check --help
status 2 "no file" "$nc" check
status 2 "unknown option" "$nc" check --frobnicate "$t/good"
status 2 "a file that is not there" "$nc" check "$t/good" "$tmp/nothing"

# A program's interpreter, as the loader takes it: there, a shared object,
# with no interpreter of its own; another machine's program keeps its note.
printf 'int main(void) { return 0; }\n' >"$tmp/m.c"
if ${CC:-cc} -o "$tmp/gone" "$tmp/m.c" \
	-Wl,--dynamic-linker=/nonexistent/ld.so &&
	${CC:-cc} -o "$tmp/nested" "$tmp/m.c" -Wl,--dynamic-linker=/bin/true &&
	${CC:-cc} -static -o "$tmp/static" "$tmp/m.c" 2>/dev/null &&
	${CC:-cc} -o "$tmp/exec" "$tmp/m.c" \
		-Wl,--dynamic-linker="$tmp/static"; then
	for c in "gone:/nonexistent/ld.so: No such file or directory" \
		 "nested:/bin/true: has an interpreter of its own" \
		 "exec:$tmp/static: not a shared object (ET_DYN)"; do
		f=${c%%:*}
		"$nc" check "$tmp/$f" >"$tmp/o" 2>/dev/null
		s=$?
		w="$tmp/$f: error: its interpreter ${c#*:}"
		[ $s -eq 1 ] && grep -qxF "$w" "$tmp/o"
		ok $? "$f: its interpreter refused (status $s)"
		sed 's/^/# /' "$tmp/o"
	done
	status 0 "a program whose interpreter is sound passes" \
		"$nc" check "$tmp/static" /bin/true
else
	for i in 1 2 3 4; do
		skip "${CC:-cc} cannot link these programs"
	done
fi

# A directory: each program checked, everything else skipped and counted.
status 0 "programs and libraries of every machine pass" "$nc" check "$t/good"
"$nc" check "$t/good" "$t/skip" >"$tmp/o" 2>"$tmp/e"
ok $? "files of every other kind beside them are skipped"
sed 's/^/# /' "$tmp/e"
grep -q "^7 files checked, 0 failed, 1 with notes" "$tmp/e"
ok $? "the summary counts the files checked and noted"
w="; skipped 3 not ELF, 1 relocatable object, 1 core dump,"
w="$w 2 separate debug files, 1 other ELF type"
grep -q "$w\$" "$tmp/e"
ok $? "the summary counts each kind skipped"
w="note: for powerpc (32-bit, big-endian): checked by its own rules"
grep -q "^$t/good/ppc32: $w (4 KiB pages), cannot run here\$" "$tmp/o"
ok $? "another machine's program: checked, noted as such"
w="note: laid out for pages of at most 4 KiB: aarch64 kernels with larger"
grep -q "^$t/good/aarch64-4k: $w pages (up to 64 KiB) cannot load it\$" \
	"$tmp/o"
ok $? "its machine's largest page is its rule"
grep -q "^$t/good/library.so: ok, a library$" "$tmp/o"
ok $? "a library is no finding"
grep -q "/skip/" "$tmp/o"
[ $? -ne 0 ]
ok $? "nothing skipped is listed"
"$nc" check --quiet "$t/good" "$t/skip" >"$tmp/o" 2>/dev/null
[ $? -eq 0 ] && [ ! -s "$tmp/o" ]
ok $? "--quiet prints nothing when all pass"
status 1 "--strict fails the notes" "$nc" check --strict "$t/good"
"$nc" check --strict --quiet "$t/good" 2>/dev/null |
	grep -q "aarch64-4k: error: laid out for pages .* \[--strict\]\$"
ok $? "--strict --quiet lists the notes that fail, as errors"
status 0 "--strict: another machine, a library are no findings" \
	"$nc" check --strict "$t/good/ppc32" "$t/good/library.so"

# Broken programs: each rejected, with the reason.
nbad=$(ls "$t/bad" | wc -l)
"$nc" check --quiet "$t/bad" >"$tmp/o" 2>"$tmp/e"
[ $? -eq 1 ]
ok $? "broken programs fail"
[ "$(grep -c ': error: ' "$tmp/o")" -eq "$nbad" ]
ok $? "each of the $nbad is listed with why"
grep -q "^$nbad files checked, $nbad failed$" "$tmp/e"
ok $? "and counted"
grep -q "/bad/too-short: error: 10 bytes: too short for an ELF header" \
	"$tmp/o"
ok $? "an ELF file cut short is no skipped tiny file"

# Named: a verdict whatever the file is.
verdict() {
	name=$1 file=$2 want=$3
	"$nc" check "$file" >"$tmp/o" 2>/dev/null
	s=$?
	[ $s -eq 1 ] && grep -q "^$file: error: $want" "$tmp/o"
	ok $? "named, $name: \"$want\" (status $s)"
}
verdict "a script" "$t/skip/script" "not an ELF file$"
verdict "an empty file" "$t/skip/empty" "not an ELF file$"
verdict "two bytes" "$t/skip/tiny" "not an ELF file$"
w="not a program or library\$"
verdict "an object" "$t/skip/object.o" "relocatable object (ET_REL): $w"
verdict "a core dump" "$t/skip/core" "core dump (ET_CORE): $w"
verdict "ET_NONE" "$t/skip/none" "ELF file of another type"
verdict "a debug file" "$t/skip/program.debug" "separate debug file"
verdict "another machine's debug file" "$t/skip/ppc64.debug" \
	"separate debug file"
status 0 "--elf-only skips them as a directory would" \
	"$nc" check --elf-only "$t/skip/script" "$t/skip/program.debug"
w="0 files checked, 0 failed; skipped 1 not ELF, 1 relocatable object"
"$nc" check --elf-only "$t/skip/script" "$t/skip/object.o" 2>&1 >/dev/null |
	grep -q "^$w\$"
ok $? "and counts them"
mkfifo "$tmp/fifo"
if have timeout; then
	status 1 "a FIFO is refused, not waited on" \
		timeout 10 "$nc" check "$tmp/fifo"
else
	skip "no timeout(1) to guard a FIFO"
fi
status 1 "a device is refused" "$nc" check /dev/null

# What cannot be read is an error, not a pass.
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$tmp/locked"
	cp "$t/good/program" "$tmp/locked/"
	chmod 000 "$tmp/locked/program"
	status 2 "an unreadable file is an error" "$nc" check "$tmp/locked"
	"$nc" check "$tmp/locked" 2>&1 >/dev/null | grep -q "1 unreadable"
	ok $? "and counted"
else
	skip "root reads every file"
	skip "root reads every file"
fi

# --json: a line per file checked, then the summary's (NDJSON).
"$nc" check --json "$t/good" "$t/skip" "$t/bad/overlap" >"$tmp/j" 2>"$tmp/e"
[ $? -eq 1 ] && [ ! -s "$tmp/e" ]
ok $? "--json: one failure, nothing on standard error"
if have python3; then
	python3 - "$tmp/j" "$t" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
t = sys.argv[2]
assert all(x["version"] == 1 for x in d), d
assert [x["type"] for x in d].count("summary") == 1, d
assert d[-1]["type"] == "summary", d[-1]
s = d[-1]
assert s["checked"] == 8 and s["failed"] == 1, s
assert s["with_notes"] == 1 and s["unreadable"] == 0, s
assert s["skipped"] == {"not_elf": 3, "object": 1, "core": 1, "debug": 2,
			"other": 1, "special": 0}, s["skipped"]
f = {x["file"]: x for x in d if x["type"] == "file"}
assert len(f) == 8 and len(d) == 9
p = f[t + "/good/ppc32"]
assert p["ok"] and p["kind"] == "program" and p["machine"] == "powerpc"
assert p["class"] == 32 and p["byte_order"] == "big" and not p["native"]
assert p["e_machine"] == 20 and p["page_size"] == "0x1000"
assert p["error"] is None
assert not p["library"] and f[t + "/good/library.so"]["library"]
a = f[t + "/good/aarch64-4k"]
assert any("at most 4 KiB" in n for n in a["notes"]), a
o = f[t + "/bad/overlap"]
e = o["error"]
assert not o["ok"] and e["errno"] == "ENOEXEC" and e["code"] == 8, o
assert "overlaps" in e["message"], o
EOF
	ok $? "--json: the files, their machines, notes and the counts"
	"$nc" check --json "$t/skip/object.o" | python3 -c '
import json, sys
f, s = [json.loads(l) for l in sys.stdin]
assert f["kind"] == "object" and not f["ok"] and f["error"]["code"] == 8
assert "relocatable object" in f["error"]["message"]
assert s["type"] == "summary" and s["failed"] == 1'
	ok $? "--json: a named object's verdict"
else
	grep -q '"debug":2' "$tmp/j"
	ok $? "--json: the summary counts debug files"
	skip "python3 is not installed"
fi

# A directory named by a link is walked; links, FIFOs in one are counted;
# a name with a newline stays on its line; --quiet --json only failures.
mkdir "$tmp/walk"
cp "$t/good/library.so" "$tmp/walk/"
cp "$t/good/library.so" "$tmp/walk/new
line"
ln -s library.so "$tmp/walk/link"
mkfifo "$tmp/walk/fifo"
ln -s "$tmp/walk" "$tmp/walklink"
"$nc" check "$tmp/walklink" >"$tmp/o" 2>"$tmp/e"
s=$?
w="2 files checked, 0 failed; skipped 2 symbolic links or special files"
[ $s -eq 0 ] && grep -q "^$w\$" "$tmp/e"
ok $? "a directory named by a link: walked, its link and FIFO counted"
grep -q '/new\\012line: ok, a library$' "$tmp/o" &&
	[ "$(wc -l <"$tmp/o")" -eq 2 ]
ok $? "a name with a newline: one line, the newline as \\012"
"$nc" check --json --quiet "$t/good" "$t/bad/overlap" >"$tmp/j"
[ "$(grep -c '"type":"file"' "$tmp/j")" -eq 1 ]
ok $? "--json --quiet: only the failure"
if have python3; then
	bad=$(printf 'odd\377name')
	cp "$t/good/library.so" "$tmp/walk/$bad"
	"$nc" check --json "$tmp/walk/$bad" | python3 -c '
import json, sys
f = json.loads(sys.stdin.readline())
assert bytes.fromhex(f["file_hex"]).endswith(b"/odd\xffname"), f
assert f["file"].endswith("/odd\ufffdname"), f'
	ok $? "--json: a name that is not UTF-8 has its bytes in file_hex"
else
	skip "python3 is not installed"
fi

# This machine's files, and those of the cross toolchains, if any.
printf '\177ELF\002\001\001' >"$tmp/short"
status 1 "check rejects a cut-short ELF file" "$nc" check "$tmp/short"
"$nc" check "$tmp/short" 2>/dev/null | grep -q "error: .*too short"
ok $? "check says why"
status 0 "check passes ls" "$nc" check --quiet /bin/ls
dirs=
for d in /usr/lib/gcc-cross /usr/lib/debug /usr/lib/gcc \
	 /usr/*-linux-gnu*/lib; do
	[ -d "$d" ] && dirs="$dirs $d"
done
if [ -n "$dirs" ]; then
	# shellcheck disable=SC2086
	"$nc" check --quiet $dirs >"$tmp/o" 2>"$tmp/e"
	s=$?
	sed 's/^/# /' "$tmp/o" "$tmp/e"
	[ $s -eq 0 ]
	ok $? "compilers, debug files and cross libraries: no failure"
else
	skip "no compiler, debug or cross directories here"
fi
"$nc" check --quiet /usr/bin /usr/lib >"$tmp/o" 2>"$tmp/e"
s=$?
[ $s -le 1 ]
ok $? "check gets through /usr/bin and /usr/lib (status $s)"
sed 's/^/# /' "$tmp/e"
head -20 "$tmp/o" | sed 's/^/# /'
done_testing
