#!/bin/sh
# noclobber exec runs real programs as execve does: the same stdout, stderr
# and exit status as run directly; programs built here as static,
# static-pie, PIE and non-PIE, for x86_64 and every architecture of
# tests/targets.sh; collisions refused with the occupant named; --plan.
# noclobber check has its own tests (check.sh).
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
nc=$b/noclobber
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }

# same NAME RUNNER NOCLOBBER PROG ARGS...: run directly and through
# noclobber exec (both under RUNNER, if any), compare everything.
same() {
	name=$1 runner=$2 ncb=$3
	shift 3
	NCB_HELLO=yes $runner "$@" >"$tmp/o1" 2>"$tmp/e1" </dev/null
	s1=$?
	NCB_HELLO=yes $runner "$ncb" exec "$@" >"$tmp/o2" 2>"$tmp/e2" \
		</dev/null
	s2=$?
	if [ $s1 -eq $s2 ] && cmp -s "$tmp/o1" "$tmp/o2" &&
		cmp -s "$tmp/e1" "$tmp/e2"; then
		ok 0 "$name"
		return
	fi
	echo "# exit status $s1 directly, $s2 through noclobber exec"
	diff "$tmp/o1" "$tmp/o2" | head -5 | sed 's/^/# /'
	diff "$tmp/e1" "$tmp/e2" | head -5 | sed 's/^/# /'
	ok 1 "$name"
}

# Debian's own programs.
same "true" "" "$nc" true
same "false: its status" "" "$nc" false
# A tree of the test's own: a listing of / changes as others work.
mkdir -p "$tmp/tree/dir"
printf 'data\n' >"$tmp/tree/file"
chmod 640 "$tmp/tree/file"
ln -s file "$tmp/tree/link"
mkfifo "$tmp/tree/fifo" 2>/dev/null
same "ls -la of a tree" "" "$nc" ls -la "$tmp/tree"
same "ls of nothing: stderr and status 2" "" "$nc" ls /nonexistent
same "sort /etc/passwd" "" "$nc" sort /etc/passwd
# Arguments and environment over several pages of the new stack.
NCB_BIG=$(head -c 40000 /dev/zero | tr '\0' x)
export NCB_BIG
same "a 40 kB environment and 20 kB of arguments" "" "$nc" sh -c \
	'echo ${#NCB_BIG} $#' "$NCB_BIG" $(seq 1 4000)
unset NCB_BIG
same "sha256sum of the tool" "" "$nc" sha256sum "$nc"
same "seq: 100000 lines" "" "$nc" seq 1 100000
same "date -u -d @0" "" "$nc" date -u -d @0
same "env" "" "$nc" env
same "sh -c" "" "$nc" sh -c 'echo "$0 $# $((6 * 7))"; exit 3' a b
same "a #! script" "" "$nc" "$top/tests/progs/script.sh" one two
if have busybox; then
	bb=$(command -v busybox)
	same "busybox echo" "" "$nc" "$bb" echo hello
	same "busybox sha256sum" "" "$nc" "$bb" sha256sum /etc/passwd
	same "busybox ls" "" "$nc" "$bb" ls /
	same "busybox sh" "" "$nc" "$bb" sh -c 'echo $((1 << 10)); exit 5'
else
	skip "busybox is not installed"
fi
if have python3; then
	same "python3 -c" "" "$nc" python3 -c \
		'import sys, json; print(json.dumps({"v": sys.version_info[0]}))'
	same "python3: status and stderr" "" "$nc" python3 -c \
		'import sys; sys.stderr.write("err\n"); sys.exit(3)'
else
	skip "python3 is not installed"
fi
same "perl -e" "" "$nc" perl -e 'print join(",", map { $_ * 2 } 1..5), "\n"'
same "perl: die" "" "$nc" perl -e 'die "boom\n"'
# More of Debian's programs, each asked for its version.
for p in grep sed tar gzip xz find diff cmp make git bash readelf objdump \
	ld gcc clang valgrind qemu-x86_64 gnuplot; do
	if have $p; then
		same "$p --version" "" "$nc" $p --version
	else
		skip "$p is not installed"
	fi
done

# "#!" as fs/binfmt_script.c reads it: five scripts nest, a sixth is
# ELOOP; an interpreter's name cut off at 256 bytes is ENOEXEC (the shell
# then runs the file, as env's execvp has it); the one
# argument is the rest of the line, blanks trimmed.
mkdir -p "$tmp/sc"
printf '#!/bin/sh\necho "$0 $*"\n' >"$tmp/sc/s1"
for i in 2 3 4 5 6; do
	printf '#!%s/sc/s%d\n' "$tmp" $((i - 1)) >"$tmp/sc/s$i"
done
printf '#!/%0300d\n' 0 >"$tmp/sc/long"
printf '#! /bin/echo  one  two \t \n' >"$tmp/sc/arg"
chmod +x "$tmp"/sc/*
same "five nested scripts" "" "$nc" "$tmp/sc/s5" a b
# A file with neither "#!" nor ELF runs through /bin/sh, as env(1) and
# execvp run it; --plan says so.  A "#!" interpreter that is not there is
# named by a run and by --plan, a CRLF line's name with its "\r" shown.
printf 'echo "no #! line: $0 $#"\nexit 4\n' >"$tmp/sc/plain"
printf '#!/nonexistent/interp\necho\n' >"$tmp/sc/gone"
printf '#!/bin/sh\r\necho\r\n' >"$tmp/sc/crlf"
chmod +x "$tmp/sc/plain" "$tmp/sc/gone" "$tmp/sc/crlf"
env "$tmp/sc/plain" a b >"$tmp/o1" 2>&1
s1=$?
"$nc" exec "$tmp/sc/plain" a b >"$tmp/o2" 2>&1
s2=$?
[ $s1 -eq 4 ] && [ $s2 -eq 4 ] && cmp -s "$tmp/o1" "$tmp/o2"
ok $? "no \"#!\" line: /bin/sh runs it, as under env (status $s2)"
"$nc" exec --plan "$tmp/sc/plain" | grep -q "^script .*plain: run by /bin/sh"
ok $? "--plan: /bin/sh runs a file without \"#!\""
for f in gone crlf; do
	[ $f = gone ] && name=/nonexistent/interp || name='/bin/sh\\r'
	for plan in "" --plan; do
		"$nc" exec $plan "$tmp/sc/$f" >/dev/null 2>"$tmp/e"
		s=$?
		[ $s -eq 127 ] && grep -q "exec: $name: No such file" "$tmp/e"
		ok $? "$f${plan:+ $plan}: the interpreter named (status $s)"
	done
done
same "a script's one argument, blanks trimmed" "" "$nc" "$tmp/sc/arg" x
"$nc" exec "$tmp/sc/s6" 2>"$tmp/e"
s=$?
[ $s -eq 126 ] && grep -q "nested more than 5 deep" "$tmp/e"
ok $? "six nested scripts: ELOOP, as execve (status $s)"
# ENOEXEC to execve, and env's execvp hands the file to the shell.
envsame() {
	name=$1
	shift
	env "$@" >"$tmp/o1" 2>&1
	s1=$?
	"$nc" exec "$@" >"$tmp/o2" 2>&1
	s2=$?
	[ $s1 -eq $s2 ] && cmp -s "$tmp/o1" "$tmp/o2"
	ok $? "$name (status $s1, $s2)"
}
envsame "an interpreter's name cut off: the shell runs it, as env's" \
	"$tmp/sc/long"
if have python3; then
	for f in s6 long; do
		python3 -c 'import os, sys
try:
	os.execv(sys.argv[1], [sys.argv[1]])
except OSError as e:
	print(e.errno)' "$tmp/sc/$f"
	done >"$tmp/o"
	[ "$(tr '\n' ' ' <"$tmp/o")" = "40 8 " ]
	ok $? "the kernel agrees: ELOOP and ENOEXEC ($(tr '\n' ' ' <"$tmp/o"))"
fi

# The auxiliary vector as the kernel builds it, entry for entry and in
# its order: raw values (AT_HWCAP as the kernel gave it, not libc's),
# zeros kept; only addresses differ.  The tool's own ld.so prints its
# vector first: the program's is the last lines.
norm='s/^\(AT_SYSINFO_EHDR\|AT_PHDR\|AT_BASE\|AT_ENTRY\|AT_RANDOM\):.*/\1/'
printf 'int main(void) { return 0; }\n' >"$tmp/zero.c"
# auxv NAME RUNNER TOOL: LD_SHOW_AUXV of a program that prints nothing,
# run directly and through the tool (RUNNER's own lines come first).
auxv() {
	if [ "$1" = x86_64 ]; then
		prog=/bin/true
	else
		prog=$tmp/$1-zero
		$gcc -o "$prog" "$tmp/zero.c" || { ok 1 "$1: build"; return; }
	fi
	LD_SHOW_AUXV=1 $2 "$prog" | sed "$norm" >"$tmp/a1"
	lines=$(wc -l <"$tmp/a1")
	LD_SHOW_AUXV=1 $2 "$3" exec "$prog" | tail -n "$lines" |
		sed "$norm" >"$tmp/a2"
	cmp -s "$tmp/a1" "$tmp/a2"
	ok $? "$1 auxv: what LD_SHOW_AUXV shows, entry for entry"
	diff "$tmp/a1" "$tmp/a2" | sed 's/^/# /'
}
auxv x86_64 "" "$nc"

# The stack as execve makes it (progs/stack.c): its size, the guard gap
# below it and room to grow to RLIMIT_STACK; an overflow ends in SIGSEGV
# before it reaches the heap's blocks; no limit, or --stack, lets it
# grow as far; its top and offset as randomized as execve's; with ASLR
# off where execve puts it; a small RLIMIT_AS is no obstacle.
if ${CC:-cc} -O1 -o "$tmp/stack" "$top/tests/progs/stack.c"; then
	st=$tmp/stack
	printf '#!/bin/sh\nulimit -Ss "$1" && shift && exec "$@"\n' \
		>"$tmp/lims"
	printf '#!/bin/sh\nulimit -Sv "$1" && shift && exec "$@"\n' \
		>"$tmp/limv"
	chmod +x "$tmp/lims" "$tmp/limv"
	same "stack: size, guard gap and room as execve's" "$tmp/lims 8192" \
		"$nc" "$st" shape
	same "stack: its size under a 64 KiB limit" "$tmp/lims 64" "$nc" \
		"$st" shape
	same "a stack overflow: SIGSEGV, the heap's blocks untouched" \
		"$tmp/lims 8192" "$nc" "$st" overflow
	same "ulimit -s unlimited: 100 MiB of recursion" \
		"$tmp/lims unlimited" "$nc" "$st" grow 100
	same "ulimit -s 102400: 90 MiB of recursion" "$tmp/lims 102400" \
		"$nc" "$st" grow 90
	out=$("$tmp/lims" 8192 "$nc" exec --stack 100M "$st" grow 90)
	[ "$out" = "grew 90 MiB" ]
	ok $? "--stack 100M: 90 MiB of recursion under an 8 MiB limit"
	out=$("$nc" exec --stack 100M sh -c 'ulimit -s')
	[ "$out" = 102400 ]
	ok $? "--stack 100M: the program's own limit ($out)"
	"$nc" exec --stack 1 true 2>"$tmp/e"
	s=$?
	[ $s -eq 125 ] && grep -q "a limit from a page" "$tmp/e"
	ok $? "--stack 1: refused (status $s)"
	sh -c 'ulimit -Hs 16384 && exec "$@"' sh "$nc" exec --stack 100M \
		true 2>"$tmp/e"
	s=$?
	[ $s -eq 125 ] && grep -q "hard limit" "$tmp/e"
	ok $? "--stack above the hard limit: refused (status $s)"
	# A quarter of the limit, at least 128 KiB (bprm_stack_limits).
	args=$(seq 1 12000)
	"$nc" exec --stack 16K "$st" where $args 2>"$tmp/e"
	s=$?
	[ $s -eq 126 ] && grep -q "arguments and environment take" "$tmp/e"
	ok $? "160 kB of arguments over a 16 KiB limit: E2BIG (status $s)"
	"$tmp/lims" 16 "$st" where $args 2>&1 | grep -q "too long"
	ok $? "the kernel agrees: execve under a 16 KiB limit fails so"
	same "the same under a 1 MiB limit" "$tmp/lims 1024" "$nc" "$st" \
		shape $args
	# A script's: the pointers counted are of the arguments execve was
	# given, not of those "#!" adds (bprm_stack_limits first).  The
	# kernel's largest last argument, found by halves, runs; one byte
	# more is E2BIG, each way.
	printf '#!/bin/true\n' >"$tmp/e2big.sh"
	chmod +x "$tmp/e2big.sh"
	big=$(printf '%0100000d' 0)
	lo=1 hi=120000
	while [ $((hi - lo)) -gt 1 ]; do
		mid=$(((lo + hi) / 2))
		env -i sh -c 'ulimit -s 1024; exec "$0" "$@"' "$tmp/e2big.sh" \
			"$big" "$big" "$(printf "%0${mid}d" 0)" 2>/dev/null &&
			lo=$mid || hi=$mid
	done
	env -i sh -c 'exec "$0" exec --stack 1M "$@"' "$nc" "$tmp/e2big.sh" \
		"$big" "$big" "$(printf "%0${lo}d" 0)" 2>/dev/null &&
		! env -i sh -c 'exec "$0" exec --stack 1M "$@"' "$nc" \
			"$tmp/e2big.sh" "$big" "$big" \
			"$(printf "%0$((lo + 1))d" 0)" 2>/dev/null
	ok $? "a script's arguments: E2BIG at the kernel's byte ($lo)"
	i=0
	while [ $i -lt 12 ]; do
		"$nc" exec "$st" where
		i=$((i + 1))
	done >"$tmp/where"
	for f in local AT_RANDOM; do
		for bit in 4 12; do
			vals=$(while read -r a r; do
				[ $f = local ] && v=$a || v=$r
				echo $(((v >> bit) & 255))
			done <"$tmp/where" | sort -u | wc -l)
			[ "$vals" -gt 1 ]
			ok $? "randomized: bits $bit-$((bit + 7)) of $f: $vals"
		done
	done
	same "setarch -R: the stack where execve puts it" "setarch -R" \
		"$nc" "$st" top
	same "ulimit -v 12000: /bin/echo runs" "$tmp/limv 12000" "$nc" \
		/bin/echo ok
	"$nc" exec --plan --stack 100M true | grep -qx "stack-limit 104857600"
	ok $? "--plan: the stack limit --stack gives"
	"$tmp/lims" unlimited "$nc" exec --plan --json true |
		grep -q '"stack":{[^}]*"limit":null'
	ok $? "--plan --json: no stack limit is null"
	# A script's stack holds its interpreter's arguments: the plan's is
	# the run's, whatever the arguments' length, across a page's end.
	printf '#!%s shape\n' "$st" >"$tmp/stk.sh"
	chmod +x "$tmp/stk.sh"
	pad= bad=
	while [ ${#pad} -lt 4160 ]; do
		run=$("$nc" exec "$tmp/stk.sh" $args "$pad" | sed -n \
			's/^stack \([0-9]*\) KiB$/\1/p')
		r=$("$nc" exec --plan "$tmp/stk.sh" $args "$pad" | sed -n \
			's/^stack  *\(0x[0-9a-f]*\)-\(0x[0-9a-f]*\)$/\2 - \1/p')
		plan=$(((${r:-0}) / 1024))
		[ "$run" = "$plan" ] || bad="$bad ${#pad}:$run/$plan"
		pad=$pad-------------------------------
	done
	[ -z "$bad" ]
	ok $? "a script's plan: its stack's size the run's${bad:+ (not$bad)}"
	end=$(setarch -R "$st" top)
	setarch -R "$nc" exec --plan "$st" top |
		grep -q "^stack  *0x[0-9a-f]*-$end\$"
	ok $? "setarch -R: --plan puts the stack's top where execve does ($end)"
else
	ok 1 "build progs/stack.c"
fi

# binfmt_misc, asked before any other format as the kernel asks it: by
# magic (flag P keeps argv[0]), by extension, and with flags OC the file
# open as AT_EXECFD, AT_FLAGS and the vector's order as execve gives them;
# with O, an interpreter that is a script refused (ENOEXEC: the shell
# then runs the file itself, both ways).
# In a user namespace of its own, where the kernel (6.7 and later) gives
# binfmt_misc an instance of its own: nothing of the machine's changes.
printf '%s\n' '#include <stdio.h>' '#include <sys/auxv.h>' \
	'#include <unistd.h>' 'int main(int c, char **v) {' \
	'	long fd = (long)getauxval(AT_EXECFD); char b[8];' \
	'	ssize_t n = fd ? pread((int)fd, b, sizeof(b), 0) : -1;' \
	'	printf("flags %lu execfd %zd:", getauxval(AT_FLAGS), n);' \
	'	for (int i = 0; i < c; i++) printf(" %s", v[i]);' \
	'	return !puts(""); }' >"$tmp/misc.c"
cat >"$tmp/misc.sh" <<MISC
set -e
m=/proc/sys/fs/binfmt_misc
mount -t binfmt_misc none \$m 2>/dev/null || { echo skip; exit 0; }
d=$tmp/misc
echo ":ncbP:M::NCBMAGIC::\$d/interp:P" >\$m/register
echo ":ncbE:E::ncbx::\$d/interp:" >\$m/register
echo ":ncbO:M:2:OPEN::\$d/aux:OC" >\$m/register
echo ":ncbS:M:2:SCRPT::\$d/interp:O" >\$m/register
for f in magic:"a b" file.ncbx:c open:"x y" scrpt:z; do
	s1=0 s2=0
	\$d/\${f%%:*} \${f#*:} >\$d/o1 2>&1 || s1=\$?
	"$nc" exec \$d/\${f%%:*} \${f#*:} >\$d/o2 2>&1 || s2=\$?
	cmp -s \$d/o1 \$d/o2 && [ \$s1 = \$s2 ] && echo "same \${f%%:*}" ||
		{ echo "differ \${f%%:*}"; cat \$d/o1 \$d/o2; }
done
"$nc" exec --plan \$d/magic | grep -q "^script  *\$d/magic: run by \$d/interp\$" &&
	echo "same plan" || echo "differ plan"
LD_SHOW_AUXV=1 \$d/open | sed "$norm" >\$d/a1
LD_SHOW_AUXV=1 "$nc" exec \$d/open | tail -n \$(wc -l <\$d/a1) |
	sed "$norm" >\$d/a2
cmp -s \$d/a1 \$d/a2 && echo "same auxv" || diff \$d/a1 \$d/a2
MISC
mkdir -p "$tmp/misc"
printf '#!/bin/sh\necho "$# args: $*"\n' >"$tmp/misc/interp"
printf 'NCBMAGIC\n' >"$tmp/misc/magic"
printf 'text\n' >"$tmp/misc/file.ncbx"
printf 'xxOPEN\n' >"$tmp/misc/open"
printf 'xxSCRPT\n' >"$tmp/misc/scrpt"
chmod -R a+rx "$tmp/misc"
if ! ${CC:-cc} -o "$tmp/misc/aux" "$tmp/misc.c"; then
	ok 1 "binfmt_misc: build the interpreter"
elif ! have unshare || ! unshare -Urm true 2>/dev/null ||
	[ "$(unshare -Urm sh "$tmp/misc.sh")" = skip ]; then
	for w in magic file.ncbx open scrpt plan auxv; do
		skip "binfmt_misc of a user namespace's own (Linux 6.7)"
	done
else
	unshare -Urm sh "$tmp/misc.sh" >"$tmp/o" 2>&1
	for w in magic file.ncbx open scrpt plan auxv; do
		grep -qx "same $w" "$tmp/o"
		ok $? "binfmt_misc: $w as execve runs it"
	done
	grep -v "^same" "$tmp/o" | sed 's/^/# /'
fi

# A program execve would run with privilege is refused (EPERM, 126), as
# an in-process exec cannot give it; --unprivileged runs it without, as
# the kernel does under no_new_privs, and so does no_new_privs itself.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp /bin/true "$tmp/suid"
	chown nobody "$tmp/suid"
	chmod 4755 "$tmp/suid"
	cp /bin/true "$tmp/sgid"
	chgrp "$(id -g nobody)" "$tmp/sgid"
	chmod 2755 "$tmp/sgid"
	for f in suid sgid; do
		"$nc" exec "$tmp/$f" 2>"$tmp/e"
		s=$?
		[ $s -eq 126 ] && grep -q "set-.*-ID" "$tmp/e"
		ok $? "$f: refused (status $s)"
		status 0 "$f: --unprivileged runs it" \
			"$nc" exec --unprivileged "$tmp/$f"
	done
	if have setpriv; then
		status 0 "under no_new_privs it runs, as execve would" \
			setpriv --no-new-privs "$nc" exec "$tmp/suid"
	else
		skip "setpriv is not installed"
	fi
	chmod 2745 "$tmp/sgid"
	status 0 "set-group-ID without group execute: no privilege" \
		"$nc" exec "$tmp/sgid"
	if have setcap && cp /bin/true "$tmp/caps" &&
		setcap cap_net_raw+ep "$tmp/caps" 2>/dev/null; then
		chmod 755 "$tmp"
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$nc" exec "$tmp/caps" 2>"$tmp/e"
		s=$?
		[ $s -eq 126 ] && grep -q "file capabilities" "$tmp/e"
		ok $? "file capabilities: refused for a user (status $s)"
	else
		skip "setcap is not installed, or this file system has no xattrs"
	fi
else
	for i in 1 2 3 4 5 6 7; do
		skip "making set-ID files of another user needs root"
	done
fi

# The identity execve gives: /proc/PID/cmdline, environ and comm name the
# program (PR_SET_MM_MAP and PR_SET_NAME), and its auxv is its own.
if "$nc" exec cat /proc/self/comm | grep -qx cat; then
	same "/proc/self/cmdline" "" "$nc" cat /proc/self/cmdline
	same "/proc/self/comm" "" "$nc" cat /proc/self/comm
	same "/proc/self/environ" "" "$nc" cat /proc/self/environ
	types='od -An -v -tx8 -w16 /proc/$$/auxv | cut -c1-17'
	same "/proc/PID/auxv: the program's, entry for entry" "" "$nc" \
		sh -c "$types"
	# The break starts at the end of the image (randomizing, the kernel
	# moves it up a page and then by less than 1 GiB, arch_randomize_brk
	# on x86_64): the program's own, not the tool's; and it grows.
	brk='brk=$(cut -d" " -f47 /proc/$$/stat)
end=$(awk -v p="$(readlink -f /bin/sh)" "\$6 == p { e = \$1; f = 1; next }
	f && \$6 == \"\" { e = \$1 } { f = 0 }
	END { sub(/.*-/, \"\", e); print e }" /proc/$$/maps)
e=$(printf %d 0x$end)
[ "$brk" -ge "$e" ] && [ "$brk" -lt $((e + 1073741824 + 4096)) ] && echo ok'
	same "the break after the program's image" "" "$nc" sh -c "$brk"
	# Without an interpreter it starts at ELF_ET_DYN_BASE, and --plan
	# says so.
	ldso=$(awk '$6 ~ /\/ld-linux/ { print $6; exit }' /proc/self/maps)
	heap='grep -m1 "\[heap\]" /proc/$$/maps | cut -d- -f1'
	same "setarch -R: the break of a program without an interpreter" \
		"setarch -R" "$nc" "$ldso" /bin/sh -c "$heap"
	want=$(setarch -R "$ldso" /bin/sh -c "$heap")
	setarch -R "$nc" exec --plan "$ldso" | grep -q "^brk  *0x$want\$"
	ok $? "setarch -R: --plan gives that break (0x$want)"
	heap='x=$(seq 1 30000); grep -c "\[heap\]" /proc/$$/maps'
	same "the break grows: a [heap] as under execve" "" "$nc" \
		sh -c "$heap"
	# The program's own mappings, the data page the file's as well.
	img='awk -v p="$(readlink -f /bin/sh)" \
"\$6 == p { print \$2, \$3, \$6 }" /proc/$$/maps'
	same "the program's mappings: perms, offsets, file" "" "$nc" \
		sh -c "$img"
else
	for i in 1 2 3 4 5 6 7 8 9; do
		skip "this kernel refuses PR_SET_MM_MAP or PR_SET_NAME"
	done
fi

# Unprivileged runners: an ordinary user, and (where user namespaces are
# allowed) one that is root in a namespace of its own, where
# CAP_SYS_ADMIN lets PR_SET_MM_MAP set the exe link.
chmod 755 "$tmp"
user=
if [ "$(id -u)" = 0 ] && have setpriv && id nobody >/dev/null 2>&1; then
	user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
elif [ "$(id -u)" != 0 ]; then
	user=env
fi
userns=
if have unshare && unshare -Ur true 2>/dev/null; then
	userns="unshare -Ur"
fi
# May this process set the exe link?  Root (CAP_SYS_ADMIN) may.
"$nc" exec --plan true | grep -q "^exe .*names the program" && setexe=1 ||
	setexe=

# /proc/self/exe names the program where the link can be set, as under
# execve; nothing of the tool stays mapped (its executable, libraries,
# heap or stack); --exe=set fails cleanly where the link cannot be set.
paths='awk "\$6 ~ /^\// { print \$6 }" /proc/$$/maps | sort -u'
for who in self userns user; do
	case $who in
	self) r= w="this process" e=$setexe ;;
	userns) r=$userns w="a user namespace" e=1 ;;
	user) r=$user w="an ordinary user" e= ;;
	esac
	[ "$who" != self ] && [ -z "$r" ] && continue
	if [ "$e" ]; then
		same "$w: /proc/self/exe names the program" "$r" "$nc" \
			readlink /proc/self/exe
	else
		$r "$nc" exec readlink /proc/self/exe >"$tmp/o" 2>&1
		grep -qx "$(readlink -f "$nc")" "$tmp/o"
		ok $? "$w: /proc/self/exe still names the tool"
		$r "$nc" exec --exe=set true 2>"$tmp/e"
		s=$?
		[ $s -eq 125 ] && grep -q "CAP_SYS_ADMIN" "$tmp/e"
		ok $? "$w: --exe=set refused (status $s)"
	fi
	same "$w: the files mapped are the program's alone" "$r" "$nc" \
		sh -c "$paths"
done
[ -n "$userns" ] || skip "user namespaces are not allowed here"
[ -n "$user" ] || skip "no ordinary user to run as (needs root, setpriv)"
# --userns: an ordinary user's program gets the exe link in a namespace
# of its own, so one that runs itself again through /proc/self/exe (node's
# process.execPath, perl's $^X) runs itself, not noclobber.
if [ -n "$user" ] && [ -n "$userns" ]; then
	out=$($user "$nc" exec --userns readlink /proc/self/exe)
	[ "$out" = "$(readlink -f "$(command -v readlink)")" ]
	ok $? "--userns: an ordinary user's program has the exe link ($out)"
	out=$($user "$nc" exec --userns perl -e 'print "$^X\n"')
	[ "$out" = "$(readlink -f "$(command -v perl)")" ]
	ok $? "--userns: perl's \$^X is perl ($out)"
else
	skip "--userns needs an ordinary user and user namespaces"
	skip "--userns needs an ordinary user and user namespaces"
fi

# $ORIGIN: a relocatable bundle, its library found through the program's
# own directory: through the exe link where it can be set, else through
# the interpreter run as the program ("ld.so --argv0 ARGV0 PROG"), which
# takes the origin from the path; the command line stays the program's.
# With --exe=off the link is left and the library is not found.
mkdir -p "$tmp/bundle/bin" "$tmp/bundle/lib"
printf 'int libf(void) { return 40; }\n' >"$tmp/lib.c"
printf '%s\n' '#include <stdio.h>' 'int libf(void);' \
	'int main(int c, char **v) {' \
	'	char b[4096]; size_t n, i; FILE *f;' \
	'	printf("%s %d\n", v[0], libf() + c);' \
	'	f = fopen("/proc/self/cmdline", "r");' \
	'	n = fread(b, 1, sizeof(b), f);' \
	'	for (i = 0; i < n; i++) putchar(b[i] ? b[i] : 32);' \
	'	return 0; }' >"$tmp/bundle.c"
if ${CC:-cc} -shared -fPIC -o "$tmp/bundle/lib/libb.so" "$tmp/lib.c" &&
	${CC:-cc} -o "$tmp/bundle/bin/prog" "$tmp/bundle.c" \
		-L"$tmp/bundle/lib" -lb -Wl,-rpath,'$ORIGIN/../lib'; then
	chmod -R a+rX "$tmp/bundle"
	same "\$ORIGIN: a relocatable bundle" "" "$nc" \
		"$tmp/bundle/bin/prog" x y
	ln -s bundle/bin/prog "$tmp/link"
	same "\$ORIGIN through a symbolic link" "" "$nc" "$tmp/link" x
	"$nc" exec --exe=off "$tmp/bundle/bin/prog" >/dev/null 2>"$tmp/e"
	s=$?
	[ $s -eq 127 ] && grep -q "libb.so" "$tmp/e"
	ok $? "--exe=off: \$ORIGIN names the tool's directory (status $s)"
	if [ -n "$user" ]; then
		same "an ordinary user: \$ORIGIN through the interpreter" \
			"$user" "$nc" "$tmp/bundle/bin/prog" x y
		$user "$nc" exec --plan "$tmp/bundle/bin/prog" |
			grep -q "^run .*interpreter"
		ok $? "an ordinary user: --plan says the interpreter runs it"
	else
		skip "no ordinary user to run as (needs root, setpriv)"
		skip "no ordinary user to run as (needs root, setpriv)"
	fi
	if [ "$setexe" ]; then
		"$nc" exec --plan "$tmp/bundle/bin/prog" >"$tmp/o"
		grep -q "^exe .*names the program" "$tmp/o" &&
			! grep -q "^run" "$tmp/o"
		ok $? "--plan says the exe link is set and the program runs"
	else
		skip "this process cannot set the exe link"
	fi
else
	for i in 1 2 3 4 5 6; do
		skip "${CC:-cc} cannot build a shared library"
	done
fi
# Under valgrind the caller's mappings stay (valgrind redirects the new
# program's malloc into the copy it preloaded first): the program runs.
if have valgrind; then
	out=$(valgrind -q "$nc" exec /bin/echo under valgrind 2>/dev/null)
	s=$?
	[ $s -eq 0 ] && [ "$out" = "under valgrind" ]
	ok $? "under valgrind: the program runs (status $s, \"$out\")"
else
	skip "valgrind is not installed"
fi
# Two descriptors free beyond stdio: the program's and its interpreter's
# or the maps' (execve needs none; ncb_exec(3) NOTES).
for mode in auto off; do
	out=$(sh -c 'ulimit -n 5 && exec "$@"' sh "$nc" exec --exe=$mode \
		/bin/echo few 2>&1)
	[ "$out" = few ]
	ok $? "ulimit -n 5, --exe=$mode: the program runs ($out)"
done
# --exe=interp: any program through its interpreter, as run directly.
cmd='echo "$0 $#"; tr "\0" " " </proc/$$/cmdline'
sh -c "$cmd" a b >"$tmp/o1" 2>&1
"$nc" exec --exe=interp sh -c "$cmd" a b >"$tmp/o2" 2>&1
cmp -s "$tmp/o1" "$tmp/o2"
ok $? "--exe=interp: a program run by its interpreter, as run directly"
"$nc" exec --exe=bad true 2>"$tmp/e"
s=$?
[ $s -eq 125 ] && grep -q "auto, set, interp or off" "$tmp/e"
ok $? "--exe with a bad mode: refused, every value named (status $s)"
# Runtimes that find their libraries through $ORIGIN or their own path.
if have java; then
	same "java -version" "" "$nc" java -version
	# Without the exe link: libjli.so through $ORIGIN, by the interpreter.
	if [ "$user" ]; then
		same "java -version as an ordinary user" "$user" "$nc" \
			java -version
	else
		skip "no ordinary user to run java as"
	fi
else
	skip "java is not installed"
	skip "java is not installed"
fi
# Where the exe link is set, their own path is what execve gives them.
if have node; then
	js='console.log(process.argv.length, [1, 2, 3].map(x => x * 2))'
	[ "$setexe" ] && js="$js; console.log(process.execPath)"
	same "node -e" "" "$nc" node -e "$js"
else
	skip "node is not installed"
fi
if [ -z "$setexe" ]; then
	skip "this process cannot set the exe link"
	skip "this process cannot set the exe link"
else
	same "perl: \$^X" "" "$nc" perl -e 'print "$^X\n"'
	if have python3; then
		same "python3: realpath(/proc/self/exe), sys.executable" "" \
			"$nc" python3 -c 'import os, sys
print(os.path.realpath("/proc/self/exe"), sys.executable)'
	else
		skip "python3 is not installed"
	fi
fi

# Signal actions as execve leaves them: handlers reset, flags and masks
# cleared, ignored signals still ignored (progs/sigs.c, a caller of the
# library: the tool itself starts from an execve).
if ${CC:-cc} -O1 -I"$top/include" -o "$tmp/sigs" "$top/tests/progs/sigs.c" \
	"$b/libnoclobber.a" -pthread; then
	"$tmp/sigs" execve "$tmp/sigs" show >"$tmp/o1" 2>&1
	"$tmp/sigs" ncb_exec "$tmp/sigs" show >"$tmp/o2" 2>&1
	cmp -s "$tmp/o1" "$tmp/o2" && grep -q "^12: ignored flags 0$" "$tmp/o2"
	ok $? "signal actions as execve leaves them"
	diff "$tmp/o1" "$tmp/o2" | sed 's/^/# /'
else
	ok 1 "build progs/sigs.c"
fi

# Threads are counted at the call: one started before the library was
# loaded (dlopen) is refused too.
if [ -e "$b/libnoclobber.so.0" ] &&
	${CC:-cc} -O1 -o "$tmp/late" "$top/tests/progs/late.c" -pthread \
		-ldl 2>/dev/null; then
	"$tmp/late" "$b/libnoclobber.so.0" >"$tmp/o1" 2>&1
	ok $? "a thread started before dlopen is refused"
	sed 's/^/# /' "$tmp/o1"
else
	skip "no shared library in $b, or progs/late.c does not build"
fi

# A sandbox that answers unshare(2) itself: gVisor's EINVAL to every
# unshare of CLONE_VM (the program runs), Docker's EPERM; a vfork child's
# call refused all the same (the parent goes on).
if ${CC:-cc} -O1 -I"$top/include" -o "$tmp/sandboxed" \
	"$top/tests/progs/sandboxed.c" "$b/libnoclobber.a" -lseccomp \
	-pthread 2>/dev/null; then
	for e in EINVAL EPERM; do
		"$tmp/sandboxed" $e plain /bin/true 2>"$tmp/e"
		ok $? "unshare answered $e: the program runs"
		sed 's/^/# /' "$tmp/e"
		"$tmp/sandboxed" $e vfork /bin/true >"$tmp/o" 2>&1
		ok $? "unshare answered $e: a vfork child refused"
		sed 's/^/# /' "$tmp/o"
	done
else
	for i in 1 2 3 4; do
		skip "progs/sandboxed.c does not build (libseccomp-dev?)"
	done
fi

# Programs built here, in every shape.
cc=${CC:-cc}
src=$top/tests/progs/hello.c
for kind in static static-pie pie no-pie; do
	case $kind in
	static) flags=-static ;;
	static-pie) flags=-static-pie ;;
	pie) flags="-fPIE -pie" ;;
	no-pie) flags="-fno-PIE -no-pie" ;;
	esac
	if $cc $flags -O1 -pthread -o "$tmp/hello-$kind" "$src" 2>/dev/null
	then
		same "x86_64 $kind program" "" "$nc" "$tmp/hello-$kind" a 4
	else
		skip "$cc cannot build a $kind program"
	fi
done

# other ARCH: that architecture's build of the tool runs its programs,
# natively or under qemu-user as this machine can (tests/targets.sh):
# static ones, static-pie where its libc has it, dynamic ones under qemu
# with its libc from the cross packages.  The tool is itself a static
# ET_EXEC at the default address: a program linked there is refused with
# the tool named, by a run and by --plan, nothing clobbered; one linked
# elsewhere runs.
other() {
	arch=$1 tool=$top/build/$1/noclobber
	target_how "$top" "$arch"
	if [ "$t_how" = skip ]; then
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
			skip "$arch: $t_why"
		done
		return
	fi
	if [ ! -x "$tool" ] && ! target_build "$top" "$arch" >/dev/null 2>&1
	then
		ok 1 "$arch: build the tool"
		return
	fi
	runner=$t_runner gcc="$t_gcc $t_cflags"
	$gcc -static -O1 -pthread -o "$tmp/$arch-clash" "$src" &&
		$gcc -static -O1 -pthread -Wl,-Ttext-segment=0x30000000 \
			-o "$tmp/$arch-static" "$src" || {
		ok 1 "$arch: build the programs"
		return
	}
	same "$arch static program ($t_how)" "$runner" "$tool" \
		"$tmp/$arch-static" c 6
	# The identity PR_SET_MM_MAP gives, in this architecture's layout
	# (a 32-bit process under a 64-bit kernel gives the 64-bit one).
	if [ "$t_how" != native ]; then
		skip "$arch: qemu-user passes no PR_SET_MM on"
	elif $gcc -static -O1 -Wl,-Ttext-segment=0x30000000 \
		-o "$tmp/$arch-ident" "$top/tests/progs/ident.c"; then
		same "$arch: cmdline, comm and auxv as execve's" "" "$tool" \
			"$tmp/$arch-ident" a b
	else
		ok 1 "$arch: build progs/ident.c"
	fi
	# A static PIE's break goes to ELF_ET_DYN_BASE: the kernel's, for a
	# 32-bit process the 64-bit kernel's compat one.
	if [ "$t_how" != native ]; then
		skip "$arch: qemu-user places the break its own way"
	elif $gcc -static-pie -O1 -o "$tmp/$arch-identpie" \
		"$top/tests/progs/ident.c" 2>/dev/null; then
		same "$arch: setarch -R, a static PIE's break" "setarch -R" \
			"$tool" "$tmp/$arch-identpie" heap
	else
		skip "$arch: $t_gcc cannot link static-pie (no rcrt1.o)"
	fi
	# Its stack where execve puts it with ASLR off (moved there: the
	# tool's own holds the place), and growing as far with no limit.
	if [ "$t_how" != native ]; then
		skip "$arch: qemu-user keeps the guest's stack its own way"
		skip "$arch: qemu-user keeps the guest's stack its own way"
	elif $gcc -static -O1 -o "$tmp/$arch-stack" \
		"$top/tests/progs/stack.c"; then
		same "$arch: setarch -R, the stack's top" "setarch -R" \
			"$tool" "$tmp/$arch-stack" top
		same "$arch: setarch -R, no stack limit, 1 GiB deep" \
			"setarch -R $tmp/lims unlimited" "$tool" \
			"$tmp/$arch-stack" grow 1024
	else
		ok 1 "$arch: build progs/stack.c"
	fi
	# A caller with mappings far apart: each unmapped alone (progs/far.c).
	if $gcc -static -O1 -pthread -I"$top/include" -o "$tmp/$arch-far" \
		"$top/tests/progs/far.c" "$top/build/$arch/libnoclobber.a"; then
		NCB_HELLO=yes $runner "$tmp/$arch-static" c 6 >"$tmp/o1" 2>&1
		NCB_HELLO=yes $runner "$tmp/$arch-far" "$tmp/$arch-static" c 6 \
			>"$tmp/o2" 2>&1
		s=$?
		[ $s -eq 6 ] && cmp -s "$tmp/o1" "$tmp/o2"
		ok $? "$arch: a caller with mappings far apart (status $s)"
		sed 's/^/# /' "$tmp/o2" | grep "far:"
	else
		ok 1 "$arch: build a caller of the library"
	fi
	if $gcc -static-pie -O1 -pthread -o "$tmp/$arch-spie" "$src" \
		2>/dev/null; then
		same "$arch static-pie program" "$runner" "$tool" \
			"$tmp/$arch-spie" b 5
	else
		skip "$arch: $t_gcc cannot link static-pie (no rcrt1.o)"
	fi
	libc=/usr/${t_gcc%-gcc}
	if [ "$arch" = i386 ]; then
		# Run directly too: its threads never start there.
		skip "$arch: qemu-i386 7.2 hangs in dynamic i386 hello"
		if [ "$t_how" = qemu ] && [ -d "$libc/lib" ]; then
			auxv "$arch" "env QEMU_LD_PREFIX=$libc $runner" \
				"$tool"
		else
			skip "$arch: dynamic programs run only under qemu"
		fi
	elif [ "$t_how" = qemu ] && [ -d "$libc/lib" ] &&
		$gcc -O1 -pthread -o "$tmp/$arch-dyn" "$src" 2>/dev/null; then
		same "$arch dynamic program, its libc from $libc" \
			"env QEMU_LD_PREFIX=$libc $runner" "$tool" \
			"$tmp/$arch-dyn" d 7
		auxv "$arch" "env QEMU_LD_PREFIX=$libc $runner" "$tool"
	else
		skip "$arch: dynamic programs run only under qemu with $libc"
		skip "$arch: dynamic programs run only under qemu with $libc"
	fi
	# The host's tool runs an i386 program through this build, beside
	# it as noclobber-i386 (else where libnoclobber0:i386 puts it); with
	# neither, it names what to install.
	if [ "$arch" = i386 ] && [ "$t_how" = native ] &&
		[ "$(uname -m)" = x86_64 ]; then
		compat "$tool" "$tmp/$arch-static" "$gcc"
	elif [ "$arch" = i386 ]; then
		for i in 1 2 3 4 5 6 7; do
			skip "$arch: the host's tool runs only what it runs"
		done
	fi
	# Natively the tool's own mappings go at the handover: the program
	# is loaded elsewhere and moved to its address then.  Under qemu-user
	# they stay: refused, the tool named.
	if [ "$t_how" = native ]; then
		same "$arch: an ET_EXEC where the tool lives runs there" "" \
			"$tool" "$tmp/$arch-clash" c 6
		# Through its interpreter too: its place held elsewhere and
		# moved there for the interpreter to map it.
		if $gcc -no-pie -O1 -o "$tmp/$arch-dynclash" "$src" \
			2>/dev/null && "$tmp/$arch-dynclash" >/dev/null 2>&1
		then
			NCB_HELLO=yes "$tmp/$arch-dynclash" c 6 >"$tmp/o1" 2>&1
			NCB_HELLO=yes "$tool" exec --exe=interp \
				"$tmp/$arch-dynclash" c 6 >"$tmp/o2" 2>&1
			s=$?
			[ $s -eq 6 ] && cmp -s "$tmp/o1" "$tmp/o2"
			ok $? "$arch: --exe=interp, a dynamic ET_EXEC where the \
tool lives (status $s)"
		else
			skip "$arch: no dynamic program runs here (its libc)"
		fi
		"$tool" exec --plan "$tmp/$arch-clash" >"$tmp/o" 2>&1
		s=$?
		[ $s -eq 0 ] && ! grep -q "^collision" "$tmp/o"
		ok $? "$arch: --plan: no collision with the tool (status $s)"
		grep -q "^program .*(ET_EXEC" "$tmp/o"
		ok $? "$arch: --plan places the ET_EXEC program"
		return
	fi
	$runner "$tool" exec "$tmp/$arch-clash" >"$tmp/o" 2>"$tmp/e"
	s=$?
	[ $s -eq 126 ] && grep -q "is taken: .*noclobber is there" "$tmp/e"
	ok $? "$arch: an ET_EXEC where the tool lives is refused, the tool named"
	sed 's/^/# /' "$tmp/e"
	$runner "$tool" exec --plan "$tmp/$arch-clash" >"$tmp/o" 2>&1
	s=$?
	[ $s -eq 1 ]
	ok $? "$arch: --plan of a program over the tool's place (status $s)"
	grep -q "^collision: program 0x[0-9a-f]*-.*noclobber" "$tmp/o"
	ok $? "$arch: --plan names the collision"
}
# compat TOOL STATIC GCC: the host's tool with an i386 build beside it.
compat() {
	mkdir -p "$tmp/pair"
	cp "$nc" "$tmp/pair/noclobber"
	installed=/usr/lib/i386-linux-gnu/noclobber/noclobber
	if [ -e "$installed" ]; then
		skip "i386: $installed is installed"
	else
		"$tmp/pair/noclobber" exec "$2" c 6 >"$tmp/o" 2>"$tmp/e"
		s=$?
		[ $s -eq 126 ] && grep -q "is an i386 program: its loader is \
the i386 build of noclobber, from libnoclobber0:i386 ($installed: No such \
file or directory)" "$tmp/e"
		ok $? "i386 program, no i386 build: what to install (status $s)"
		# A copy of this tool under the i386 build's name is no
		# loader of i386 programs: not run (it would run itself).
		ln -s noclobber "$tmp/pair/noclobber-i386"
		"$tmp/pair/noclobber" exec "$2" c 6 >"$tmp/o" 2>"$tmp/e"
		s=$?
		[ $s -eq 126 ] && grep -q "noclobber-i386: Exec format error" \
			"$tmp/e"
		ok $? "i386: this tool as noclobber-i386 is not run (status $s)"
		rm -f "$tmp/pair/noclobber-i386"
	fi
	cp "$1" "$tmp/pair/noclobber-i386"
	same "i386 static program through the host's tool" "" \
		"$tmp/pair/noclobber" "$2" c 6
	# Reached through "#!", and planned: the i386 build's too.
	printf '#!%s\n' "$2" >"$tmp/i386.sh"
	chmod +x "$tmp/i386.sh"
	same "i386 program as a script's interpreter" "" \
		"$tmp/pair/noclobber" "$tmp/i386.sh" c 6
	"$tmp/pair/noclobber" exec --plan "$tmp/i386.sh" c 6 >"$tmp/o" 2>&1
	s=$?
	[ $s -eq 0 ] && grep -q "^program .*$2 (ET_EXEC" "$tmp/o"
	ok $? "i386: --plan through the i386 build (status $s)"
	# Its options go along (--userns entered here already).
	NCB_HELLO=yes "$2" c 6 >"$tmp/o1" 2>&1 </dev/null
	NCB_HELLO=yes "$tmp/pair/noclobber" exec --stack 1M --userns "$2" c 6 \
		>"$tmp/o2" 2>&1 </dev/null
	s=$?
	[ $s -eq 6 ] && cmp -s "$tmp/o1" "$tmp/o2"
	ok $? "i386, the host's tool with --stack and --userns (status $s)"
	# shellcheck disable=SC2086
	if [ -e /lib/ld-linux.so.2 ] &&
		$3 -O1 -pthread -o "$tmp/i386-dyn" "$src" 2>/dev/null; then
		same "i386 dynamic program through the host's tool" "" \
			"$tmp/pair/noclobber" "$tmp/i386-dyn" d 7
	else
		skip "i386: no i386 libc here to run a dynamic program"
	fi
}
. "$top/tests/targets.sh"
for arch in $(echo "$ncb_targets" | awk '{ print $1 }'); do
	other "$arch"
done

# --base puts a position-independent program where asked; --stack sizes
# its stack.
if [ -x "$tmp/hello-pie" ]; then
	NCB_HELLO=yes "$tmp/hello-pie" a 4 >"$tmp/o1" 2>&1
	NCB_HELLO=yes "$nc" exec --base 0x200000000 --stack 256K \
		"$tmp/hello-pie" a 4 >"$tmp/o2" 2>&1
	s=$?
	[ $s -eq 4 ] && cmp -s "$tmp/o1" "$tmp/o2"
	ok $? "--base and --stack: the same run"
	"$nc" exec --plan --base 0x200000000 "$tmp/hello-pie" |
		grep -q "^program     0x200000000-"
	ok $? "--plan --base: the program at the base"
else
	skip "no PIE program built"
	skip "no PIE program built"
fi
status 125 "--base not page-aligned" "$nc" exec --base 0x200000001 true

# Errors, as env(1)'s: not found 127, cannot be run 126, its own 125.
status 127 "a program that is not there" "$nc" exec /nonexistent/prog
status 127 "a program not in PATH" "$nc" exec no-such-program-here
status 126 "a file that is not a program" "$nc" exec /etc/passwd
status 125 "--json without --plan" "$nc" exec --json true
status 125 "no program" "$nc" exec
status 125 "an unknown option" "$nc" exec --frobnicate true
status 125 "a bad number" "$nc" exec --stack 12Q true
# The search and the checks of a run, in a run and in a plan alike.
mkdir "$tmp/pathdir"
cp /bin/true "$tmp/pathdir/ncb-here"
abs=$(cd "$(dirname "$nc")" && pwd)/noclobber
(cd "$tmp/pathdir" && PATH=":/usr/bin:/bin" "$abs" exec ncb-here)
ok $? "an empty PATH entry is the current directory, as execvp's"
chmod 644 "$tmp/pathdir/ncb-here"
status 126 "a program found in PATH but not executable" \
	env PATH="$tmp/pathdir:/usr/bin:/bin" "$nc" exec ncb-here
status 126 "--plan: a program not executable" \
	"$nc" exec --plan "$tmp/pathdir/ncb-here"
status 127 "an empty program name" "$nc" exec ''
printf '#!/bin/sh\necho script\n' >"$tmp/s.sh"
printf '#!/nonexistent/sh\n' >"$tmp/noint.sh"
chmod +x "$tmp/s.sh" "$tmp/noint.sh"
"$nc" exec --plan "$tmp/s.sh" | grep -q "^script      $tmp/s.sh: run by /bin/sh\$"
ok $? "--plan of a script: its interpreter's plan"
status 127 "--plan of a script whose interpreter is missing" \
	"$nc" exec --plan "$tmp/noint.sh"
status 127 "and run" "$nc" exec "$tmp/noint.sh"
# A "#!" line naming nothing is ENOEXEC, and execvp's shell runs the file.
printf '#!  \necho ran "$@"\n' >"$tmp/empty.sh"
chmod +x "$tmp/empty.sh"
envsame "a \"#!\" line naming nothing: the shell runs it, as env's" \
	"$tmp/empty.sh" a b
"$nc" exec --plan "$tmp/empty.sh" |
	grep -q "^script      $tmp/empty.sh: run by /bin/sh\$"
ok $? "and its plan"
i=0
while [ $i -lt 6 ]; do
	printf '#!%s\n' "$tmp/chain$((i + 1))" >"$tmp/chain$i"
	chmod +x "$tmp/chain$i"
	i=$((i + 1))
done
cp /bin/true "$tmp/chain6"
status 0 "five scripts nested run" "$nc" exec "$tmp/chain1"
status 0 "and plan" "$nc" exec --plan "$tmp/chain1"
status 126 "six do not run (ELOOP)" "$nc" exec "$tmp/chain0"
status 126 "nor plan" "$nc" exec --plan "$tmp/chain0"
status 125 "--plan --base beyond the address space: no room" \
	"$nc" exec --plan --base 0xffffffffff000 /bin/true
status 127 "--plan: a program that is not there" \
	"$nc" exec --plan /nonexistent/prog
status 126 "--plan: a file that is not a program" \
	"$nc" exec --plan /etc/passwd
check "exec --help" "$nc" exec --help

# --plan maps nothing and says where everything would go.
status 0 "--plan of ls fits" "$nc" exec --plan ls
"$nc" exec --plan ls | grep -q '^interpreter '
ok $? "--plan shows the interpreter"
"$nc" exec --plan ls | grep -q '^stack '
ok $? "--plan shows the stack"
"$nc" exec --plan ls | grep -q '^identity    '
ok $? "--plan says what of its identity the program gets"
if have python3; then
	"$nc" exec --plan --json ls |
		python3 -c 'import json,sys; d = json.load(sys.stdin);
assert d["version"] == 1
assert d["program"]["segments"] and d["interpreter"]["entry"] == d["entry"]
assert int(d["entry"], 16) > 0 and d["collisions"] == []
i = d["identity"]
assert "mm_map" in i and (i["comm"] is None or i["comm"]["errno"])'
	ok $? "--plan --json is JSON, entry through the interpreter"
	# A program whose interpreter is missing: one error document only.
	ip=$("$nc" exec --plan --json /bin/true | python3 -c '
import json, sys; print(json.load(sys.stdin)["interpreter"]["path"])')
	python3 - /bin/true "$ip" "$tmp/nointerp" <<'EOF'
import sys
b = open(sys.argv[1], "rb").read()
p = sys.argv[2].encode()
assert b.count(p + b"\0") == 1
open(sys.argv[3], "wb").write(b.replace(p + b"\0", p[:-1] + b"X\0"))
EOF
	chmod +x "$tmp/nointerp"
	"$nc" exec --plan --json "$tmp/nointerp" >"$tmp/o" 2>"$tmp/e"
	s=$?
	python3 -c 'import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert len(d) == 1 and list(d[0]) == ["version", "error"], d
assert d[0]["error"]["errno"] == "ENOENT", d' "$tmp/o" &&
		[ $s -eq 127 ] && grep -q "noclobber exec: " "$tmp/e"
	ok $? "--plan --json, no interpreter: an error document (status $s)"
else
	skip "no python3"
	skip "no python3"
fi

done_testing
