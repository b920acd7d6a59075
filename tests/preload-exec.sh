#!/bin/sh
# noclobber watch --preload and the programs a watched one runs: what
# the library cannot see (a static program, a Go program, one run
# without it in LD_PRELOAD) said, naming it, by every way a program
# starts another; the exec family and fexecve, which the library makes
# itself, as the C library makes them (each case's output, error and
# status compared); hostile ELF headers in a program run; and real
# programs, their output and status unchanged.
. "$(dirname "$0")/preload-setup.sh"
$cc -O1 -o "$tmp/run-by" "$top/tests/progs/run-by.c" -pthread ||
	skip_all "the test programs do not build"

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

how=--preload real_programs
done_testing
