#!/bin/sh
# The manual.  Every page of man3 that is not a .so link: the sections of
# man-pages(7), each function of its SYNOPSIS as noclobber.h (or
# noclobber_core.h) declares it and in its NAME and ATTRIBUTES, each struct
# and enum of its SYNOPSIS field for field as the header has it, errno
# names that exist, and its EXAMPLES program compiled against the build
# with -Wall -Wextra -Werror, run, and exiting 0.  Every .so link names a
# function of the page it points to.  Every page of man1, man3 and man7:
# its .TH names the file and this version, and groff finds nothing to
# warn about.
b=${1:?build directory}
export LC_ALL=C
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
cc=${CC:-cc}
lib=$b/libnoclobber.a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ver=$(awk '/^VERSION :=/ { print $3 }' "$top/Makefile")
run=
command -v timeout >/dev/null 2>&1 && run="timeout 60"

# The text of a groff page as C: \e is a backslash, \- a minus, \(aq and
# \(dq quotes, \& nothing, font changes dropped.  \e goes through a
# control character so that the backslash it leaves is not read as the
# start of another escape.
soh=$(printf '\001')
unescape() {
	sed -e "s/\\\\e/$soh/g" -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" \
		-e 's/\\(dq/"/g' -e 's/\\(ga/`/g' -e 's/\\(ti/~/g' \
		-e 's/\\(ha/^/g' -e "s/\\\\(rs/$soh/g" -e 's/\\&//g' \
		-e 's/\\f[BIRP]//g' -e 's/\\f(CW//g' -e "s/$soh/\\\\/g"
}

# section FILE NAME: the lines of section NAME, without its .SH line.
section() {
	awk -v want="$2" '
		/^\.SH / {
			s = substr($0, 5)
			gsub(/"/, "", s)
			on = (s == want)
			next
		}
		on' "$1"
}

# The lines between .EX and .EE, each block ended by a line "@@".
ex_blocks() {
	awk '/^\.EE/ { if (on) print "@@"; on = 0; next }
	     on
	     /^\.EX/ { on = 1 }'
}

# C declarations in one line each, spaces only where two words meet:
# "void*ncb_mmap(void*addr,size_t len,...);".  From a header, those
# after NCB_API or NCB_CORE_DEF; from a SYNOPSIS (macros and quotes
# taken out first), those of a function named ncb_*.
squeeze() {
	tr '\t' ' ' | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//' \
		-e 's/ *\([][(){},*;=]\) */\1/g'
}
header_decls() {
	awk '/^(NCB_API|NCB_CORE_DEF) / { on = 1; d = "" }
	     on { d = d " " $0 }
	     on && /;/ { on = 0; sub(/^ *(NCB_API|NCB_CORE_DEF) /, "", d)
			 print d }' "$@" | squeeze
}
synopsis_decls() {
	section "$1" SYNOPSIS | awk '/^\.EX/ { ex = 1 } /^\.EE/ { ex = 0; next }
		!ex' | unescape |
		sed -e 's/^\.[A-Z][A-Z]* //' -e 's/^\.[A-Z][A-Z]*$//' \
			-e 's/"//g' |
		awk '!on && /[ *]ncb_[a-z0-9_]+ *\(/ && !/typedef/ {
			on = 1; d = "" }
		     on { d = d " " $0 }
		     on && /;/ { on = 0; print d }' | squeeze
}
# The name of each declaration read from stdin.
decl_names() {
	sed 's/^[^(]*[ *]\(ncb_[A-Za-z0-9_]*\)(.*/\1/'
}

# struct and enum bodies, comments out, one "struct x{...};" a line.
bodies() {
	awk '{ t = t $0 "\n" }
	     END {
		gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", t)
		gsub(/\n/, " ", t)
		while (match(t, /(struct|enum) [a-z_0-9]+ *\{[^}]*\} *;/)) {
			print substr(t, RSTART, RLENGTH)
			t = substr(t, RSTART + RLENGTH)
		}
	     }' | squeeze
}

printf '#include <errno.h>\n' | $cc -E -dM -x c - 2>/dev/null |
	awk '$2 ~ /^E[A-Z0-9]+$/ { print $2 }' | sort -u >"$tmp/errnos"
header_decls "$top/include/noclobber.h" "$top/include/noclobber_core.h" \
	>"$tmp/decls"
: >"$tmp/documented"
cat "$top/include/noclobber.h" "$top/include/noclobber_core.h" | bodies \
	>"$tmp/bodies"

[ -f "$lib" ]
ok $? "the static library is built ($lib)"

for page in "$top"/man/man3/*.3; do
	f=$(basename "$page" .3)
	if head -n 1 "$page" | grep -q '^\.so '; then
		target=$(head -n 1 "$page" | sed 's/^\.so *//')
		tfile=$top/man/$target
		[ -f "$tfile" ] && synopsis_decls "$tfile" | decl_names |
			grep -qx "$f"
		ok $? "$f.3 links to $target, whose SYNOPSIS declares $f()"
		continue
	fi

	# The sections of man-pages(7), as far as they apply.
	missing=
	synopsis_decls "$page" >"$tmp/syn"
	for s in NAME SYNOPSIS DESCRIPTION "RETURN VALUE" ERRORS ATTRIBUTES \
		VERSIONS EXAMPLES "SEE ALSO"; do
		case $s in
		"RETURN VALUE")
			# Not needed where every function returns void.
			grep -qv '^void [a-z]' "$tmp/syn" || continue ;;
		ERRORS)
			# Not needed where nothing can fail.
			section "$page" "RETURN VALUE" |
				grep -q 'always succeeds' && continue ;;
		esac
		grep -Eq "^\\.SH \"?$s\"?\$" "$page" || missing="$missing, $s"
	done
	[ -z "$missing" ]
	ok $? "$f.3 has its sections${missing:+ (missing:${missing#,})}"

	# Each function as the header declares it, named and attributed.
	decl_names <"$tmp/syn" >>"$tmp/documented"
	[ -s "$tmp/syn" ]
	ok $? "$f.3: its SYNOPSIS declares functions"
	section "$page" NAME >"$tmp/name"
	section "$page" ATTRIBUTES >"$tmp/attr"
	bad= unnamed= unattributed=
	while read -r d; do
		fn=$(echo "$d" | decl_names)
		grep -qxF "$d" "$tmp/decls" || bad="$bad $fn"
		grep -q "\\b$fn\\b" "$tmp/name" || unnamed="$unnamed $fn"
		grep -q "^\\.BR $fn ()" "$tmp/attr" ||
			unattributed="$unattributed $fn"
	done <"$tmp/syn"
	[ -z "$bad" ]
	ok $? "$f.3: the SYNOPSIS declares as the header does${bad:+ (not:$bad)}"
	[ -z "$unnamed$unattributed" ]
	ok $? "$f.3: each function in NAME and ATTRIBUTES${unnamed:+ (not \
named:$unnamed)}${unattributed:+ (not attributed:$unattributed)}"

	# Structs and enums shown in the SYNOPSIS: the header's, field for
	# field.
	section "$page" SYNOPSIS | ex_blocks | grep -v '^@@$' | unescape |
		bodies >"$tmp/shown"
	bad=
	while read -r body; do
		grep -qxF "$body" "$tmp/bodies" ||
			bad="$bad $(echo "$body" | cut -d'{' -f1)"
	done <"$tmp/shown"
	[ -z "$bad" ]
	ok $? "$f.3: structs and enums as the header has them${bad:+ (not:$bad)}"

	# Error names that exist, in the tags of ERRORS.
	bad=
	for e in $(section "$page" ERRORS | awk 'tag { print } { tag = /^\.TP/ }' |
		grep -o '\bE[A-Z0-9][A-Z0-9]*\b' | sort -u); do
		grep -qx "$e" "$tmp/errnos" || bad="$bad $e"
	done
	[ -z "$bad" ]
	ok $? "$f.3: ERRORS names real errno values${bad:+ (not:$bad)}"

	# The program of EXAMPLES: the block that has a main().
	section "$page" EXAMPLES | ex_blocks | unescape |
		awk '$0 == "@@" { if (b ~ /main\(/) { printf "%s", b; exit }
				  b = ""; next }
		     { b = b $0 "\n" }' >"$tmp/$f.c"
	if ! [ -s "$tmp/$f.c" ]; then
		ok 1 "$f.3: EXAMPLES has a program"
		continue
	fi
	if ! $cc -Wall -Wextra -Werror -I"$top/include" -o "$tmp/$f" \
		"$tmp/$f.c" "$lib" -pthread >"$tmp/cc.log" 2>&1; then
		sed 's/^/# /' "$tmp/cc.log" | head -20
		ok 1 "$f.3: the example compiles with -Wall -Wextra -Werror"
		continue
	fi
	ok 0 "$f.3: the example compiles with -Wall -Wextra -Werror"
	(cd "$tmp" && $run "./$f" </dev/null >"$tmp/$f.out" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/$f.out" | head -20
	[ $rc -eq 0 ] && [ -s "$tmp/$f.out" ]
	ok $? "$f.3: the example runs, prints and exits 0 (status $rc)"
done

# Every function of the headers in the SYNOPSIS of a page.
decl_names <"$tmp/decls" | sort -u >"$tmp/declared"
sort -u "$tmp/documented" >"$tmp/documented.sorted"
missing=$(comm -23 "$tmp/declared" "$tmp/documented.sorted" | tr '\n' ' ')
[ -z "$missing" ]
ok $? "every function of the headers is in a SYNOPSIS${missing:+ (not: $missing)}"

# Every page: its header line, and nothing for groff to warn about.
have_groff=1
if ! command -v groff >/dev/null 2>&1; then
	have_groff=
	skip "groff is not installed: the pages are not formatted"
fi
for page in "$top"/man/man[137]/*.[137]; do
	sec=${page##*.}
	f=$(basename "$page" ".$sec")
	rel=man$sec/$f.$sec
	if ! head -n 1 "$page" | grep -q '^\.so '; then
		want=$(echo "$f" | tr '[:lower:]' '[:upper:]')
		th="^\\.TH $want $sec [0-9-]* \"noclobber $ver\" \"noclobber manual\"\$"
		head -n 1 "$page" | grep -q "$th"
		ok $? "$rel: .TH $want $sec, noclobber $ver"
	fi
	[ -n "$have_groff" ] || continue
	out=$(cd "$top/man" && groff -t -man -ww -z "$rel" 2>&1)
	[ -z "$out" ] || echo "$out" | sed 's/^/# /' | head -10
	[ -z "$out" ]
	ok $? "$rel: groff -man -ww formats it without a warning"
done
done_testing
