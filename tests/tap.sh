# Sourced by the shell tests: TAP output with a plan at the end.
n=0
fails=0
ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fails=$((fails + 1))
	fi
}
# check NAME COMMAND...: the command must succeed.
check() {
	name=$1
	shift
	"$@" >/dev/null 2>&1
	ok $? "$name"
}
# status WANT NAME COMMAND...: the command must exit with WANT.
status() {
	want=$1 name=$2
	shift 2
	"$@" >/dev/null 2>&1
	got=$?
	[ "$got" -eq "$want" ] || echo "# exit status $got, wanted $want"
	[ "$got" -eq "$want" ]
	ok $? "$name"
}
done_testing() {
	echo "1..$n"
	[ "$fails" -eq 0 ]
}
skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}
# skip REASON: one test that could not run here.
skip() {
	n=$((n + 1))
	echo "ok $n # SKIP $1"
}
