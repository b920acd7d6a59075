#!/bin/sh
# ncb_reach's figures against the assemblers and linkers (binutils for
# each machine, Debian's binutils-TRIPLE): the farthest target each way
# links, with the instruction naming it and no veneer in between, and one
# step farther does not (ld refuses, or routes the branch through a
# veneer).  The figures are the library's, printed by a program built
# against this build.
b=${1:?build directory}
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
case $b in
/*) ;;
*) b=$(pwd)/$b ;;
esac
[ -e "$b/libnoclobber.a" ] || skip_all "no $b/libnoclobber.a: run make"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The table, one line per machine and kind: machine kind min max page
# step from_next.
cat > "$tmp/table.c" <<'EOF'
#include <noclobber.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	struct ncb_reach r = NCB_INIT(ncb_reach);
	int i, k;

	for (i = 1; i < argc; i++)
		for (k = NCB_REACH_BRANCH; k <= NCB_REACH_PCREL; k++)
			if (!ncb_reach(atoi(argv[i]), k, &r))
				printf("%s %d %lld %lld %llu %u %d\n", argv[i],
				       k, (long long)r.min, (long long)r.max,
				       (unsigned long long)r.page, r.step,
				       r.from_next);
	return 0;
}
EOF
${CC:-cc} -I"$top/include" -o "$tmp/table" "$tmp/table.c" \
	"$b/libnoclobber.a" -lpthread ||
	skip_all "cannot build a program against $b/libnoclobber.a"
"$tmp/table" 62 3 183 40 21 243 22 > "$tmp/figures"

# The pairs: a 32-bit offset from PC, and AUIPC's high part and low.
movw='movw@r0,#:lower16:target-(_start+16);'\
'movt@r0,#:upper16:target-(_start+16);add@r0,pc,r0'
auipc='auipc@a0,%pcrel_hi(target);addi@a0,a0,%pcrel_lo(_start)'
# arch triple e_machine text-base branch pcrel (assembly; "-": none);
# text at 8 GiB for the 64-bit machines, so that 4 GiB down is there.
arches="x86_64 x86_64-linux-gnu 62 0x200000000 call@target lea@target(%rip),%rax
i386 i686-linux-gnu 3 0x10000000 call@target -
aarch64 aarch64-linux-gnu 183 0x200000000 bl@target adrp@x0,target
armhf arm-linux-gnueabihf 40 0x10000000 bl@target $movw
ppc64le powerpc64le-linux-gnu 21 0x200000000 bl@target -
riscv64 riscv64-linux-gnu 243 0x200000000 jal@ra,target $auipc
s390x s390x-linux-gnu 22 0x200000000 brasl@%r14,target larl@%r1,target"

# link NAME ASM TEXT TARGET [BRANCH]: 0 if it links, a branch naming
# TARGET in its first instruction, not a veneer or stub.
link() {
	printf '.globl _start\n.text\n%s\n%s\n_start:\n%s\n' "$arm" \
		"$norelax" "$2" | tr ';@' '\n ' > "$tmp/$1.s"
	"$tr-as" -o "$tmp/$1.o" "$tmp/$1.s" 2>"$tmp/$1.err" || return 2
	"$tr-ld" --no-relax -e _start -Ttext="$3" \
		--defsym=target="$4" -o "$tmp/$1" "$tmp/$1.o" \
		>>"$tmp/$1.err" 2>&1 || return 1
	"$tr-objdump" -d "$tmp/$1" > "$tmp/$1.d"
	[ -z "${5:-}" ] && return 0
	grep -A1 '<_start>:' "$tmp/$1.d" | tail -1 | grep -q '<target>'
}

# The base an instruction at _start counts from: its own address, or
# the next instruction's.
base_of() {
	"$tr-nm" "$tmp/$1" | awk -v s="$2" '$3 == s { print "0x" $1 }'
}

# try ARCH KIND ASM TEXT: the farthest target each way, and one step on.
try() {
	set -- "$@" $(awk -v m="$em" -v k="$2" '$1 == m && $2 == k {
		print $3, $4, $5, $6, $7 }' "$tmp/figures")
	arch=$1 kind=$2 asm=$3 text=$4 min=$5 max=$6 page=$7 step=$8 fn=$9
	if [ -z "$min" ]; then
		ok 1 "$arch kind $kind: ncb_reach has no figures"
		return
	fi
	# Where _start and the next instruction land, from a first link.
	link probe "$asm;next:" "$text" "$text"
	case $? in
	2) skip "$arch: $tr-as cannot assemble: $(head -1 "$tmp/probe.err")"
	   return ;;
	esac
	start=$(base_of probe _start)
	base=$start
	[ "$fn" = 1 ] && base=$(base_of probe next)
	# ADRP: the target's page against the instruction's page.
	if [ "$page" != 0 ]; then
		base=$((base & ~(page - 1)))
		hi=$((base + max + page - 1))
		one=1
	else
		hi=$((base + max))
		one=$step
	fi
	lo=$((base + min))
	# The linker's overflow check is loose for s390x's PC32DBL (a
	# bitfield: it wraps): the instruction must name the target.  ADRP
	# and AUIPC name only its page or high part: their checks are exact.
	br=
	case $kind.$arch in
	1.* | 2.s390x | 2.x86_64) br=1 ;;
	esac
	# A displacement that wraps in a 32-bit space: every address.
	if [ "$text" = 0x10000000 ] && [ $((max - min)) -ge $((1 << 32)) ]
	then
		for t in 0x1000 0xfffff000; do
			link far "$asm;next:" "$text" "$t" $br
			ok $? "$arch $asm: $t from $text links, direct"
		done
		return
	fi
	# Targets as offsets from _start, which stubs placed first move.
	for t in "$lo -$one" "$hi $one"; do
		set -- $t
		link far "$asm;next:" "$text" "_start+$(($1 - start))" $br
		ok $? "$arch $asm: target $(printf '%#x' "$1") from base\
 $(printf '%#x' "$base") links, direct"
		link farther "$asm;next:" "$text" \
			"_start+$(($1 + $2 - start))" $br
		[ $? -ne 0 ]
		ok $? "$arch $asm: $2 farther does not"
	done
}

echo "$arches" | while read -r arch tr em text branch pcrel; do
	arm= norelax=
	case $arch in
	armhf) arm=.arm ;;
	riscv64) norelax=.option\ norelax ;;
	esac
	if ! command -v "$tr-as" >/dev/null 2>&1 ||
	   ! command -v "$tr-ld" >/dev/null 2>&1 ||
	   ! command -v "$tr-objdump" >/dev/null 2>&1; then
		skip "$arch: $tr-as is not installed (binutils-$tr)"
		continue
	fi
	try "$arch" 1 "$branch" "$text"
	if [ "$pcrel" = - ]; then
		# None, by the figures too.
		grep -q "^$em 2 " "$tmp/figures"
		ok $((!$?)) "$arch: no PC-relative address, and no figures"
	else
		try "$arch" 2 "$pcrel" "$text"
	fi
done > "$tmp/out"
cat "$tmp/out"
# The counts come from the subshell's output.
n=$(grep -c '^\(not \)\{0,1\}ok' "$tmp/out")
fails=$(grep -c '^not ok' "$tmp/out")
done_testing
