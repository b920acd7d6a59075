# Sourced by the watchers' suites (watch.sh, watch-system.sh,
# preload.sh and preload-exec.sh, by preload-setup.sh), after tap.sh,
# with top and tmp set.

# schema FILE: every line of the NDJSON report of the shape noclobber(1)
# gives (an empty report has none to check).
schema() {
	if [ -s "$1" ] && ! python3 "$top/tests/json-schema.py" \
		"$top/man/man1/noclobber.1" watch "$1" >"$tmp/why"; then
		sed 's/^/# /' "$tmp/why"
		return 1
	fi
}

# events FILE CHECK...: python3 over the NDJSON report, the checks as
# expressions over ev (the clobber events), sums (the summaries) and warns
# (the warnings).
events() {
	f=$1
	shift
	schema "$f" || return 1
	python3 - "$f" "$@" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ev = [l for l in lines if l["event"] not in ("summary", "warning")]
sums = [l for l in lines if l["event"] == "summary"]
warns = [l for l in lines if l["event"] == "warning"]
for c in sys.argv[2:]:
    if not eval(c):
        print("# failed: %s\n# events: %s" % (c, json.dumps(lines)[:600]))
        sys.exit(1)
EOF
}

# taken CASE LABEL: the corpus could not make CASE (its output in
# $tmp/o says its page was taken), said as a skip.
taken() {
	grep -q "^$1: taken$" "$tmp/o" || return 1
	skip "$2: its page is the program's here (no address randomisation)"
}

# benign PROG LABEL CASE CLASS: the corpus's CASE, one of the benign
# patterns, in every mode, watched as $how says: it runs, nothing is
# reported, and it is counted as CLASS.
benign() {
	for m in "" --deny --upgrade; do
		"$nc" watch $how $m --json -O "$tmp/e" "$1" "$3" >"$tmp/o" 2>&1
		taken "$3" "$2$3 ${m:-(report)}" && continue
		grep -q "^$3: ok$" "$tmp/o" &&
			events "$tmp/e" "len(ev) == 0" \
				"sums[0]['clobbers'] == 0" \
				"sums[0]['unjudged'] == 0" \
				"sums[0]['benign']['$4'] >= 1"
		ok $? "$2$3 ${m:-(report)}: $4, nothing reported"
	done
}

# real NAME COMMAND...: no clobber, and the same output and status as
# without, watched as $how says (nothing: a run's watcher).
real() {
	name=$1
	shift
	if ! have "$1"; then
		skip "$name: $1 is not installed"
		return
	fi
	"$@" >"$tmp/want" 2>&1
	want=$?
	"$nc" watch $how --json -O "$tmp/e" "$@" >"$tmp/got" 2>&1
	got=$?
	[ "$got" = "$want" ] && cmp -s "$tmp/want" "$tmp/got" &&
		events "$tmp/e" "len(ev) == 0" \
			"all(s['clobbers'] == 0 for s in sums)"
	ok $? "$name: no clobber, same output and status ($want)"
}
# real_programs: the real programs, each as real says.
real_programs() {
	printf 'int main(void) { return 0; }\n' >"$tmp/m.c"
	real "python3 importing json, sqlite3, ssl" python3 -c \
		'import json, sqlite3, ssl; print(json.dumps([1]))'
	real perl perl -e 'print "perl\n"'
	real "java -version" java -version
	real node node -e 'console.log(1)'
	real "gcc compiling a file" gcc -c -o "$tmp/m.o" "$tmp/m.c"
	real git git --version
	real make make --version
	real "a shell pipeline" sh -c 'seq 1 1000 | sort -r | head -3'
	if have qemu-x86_64; then
		real "qemu-x86_64 running a program" qemu-x86_64 /bin/echo qemu
	else
		skip "qemu-x86_64 is not installed"
	fi
	real "valgrind running a program" valgrind -q /bin/echo valgrind
}
