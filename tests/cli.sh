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
for c in probe maps who map demo; do
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
sleep 30 &
pid=$!
# The child may not have become sleep yet: wait until it has.
i=0
while [ $i -lt 100 ] && ! grep -q /sleep "/proc/$pid/maps" 2>/dev/null; do
	sleep 0.05
	i=$((i + 1))
done
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
sleep 30 &
pid=$!
"$nc" maps --json "$pid" | grep -q '"path":"/usr/bin/sleep"\|"path":"/bin/sleep"'
ok $? "maps PID reads another process"
kill "$pid"
status 2 "maps: not a pid" "$nc" maps abc
status 2 "maps: no such process" "$nc" maps 2147483647
status 2 "maps: two pids" "$nc" maps 1 2

status 1 "map over the stack is refused" "$nc" map '[stack]' 4096
"$nc" map '[stack]' 4096 | grep -q 'EEXIST'
ok $? "map says EEXIST"
"$nc" map '[stack]' 4096 | grep -q '\[stack\]'
ok $? "map names the occupant"
status 0 "map at a free address" "$nc" map --prot rw 0x200000000 64K
"$nc" map --json '[stack]' 4096 | grep -q '"error":"EEXIST"'
ok $? "map --json reports EEXIST"
if [ $have_py = 1 ]; then
	"$nc" map --json '[stack]' 4096 | json
	ok $? "map --json is JSON"
fi
status 1 "map: unaligned address" "$nc" map 0x200000001 4096
status 2 "map: bad prot" "$nc" map --prot rwz 0x200000000 4096
status 2 "map: no length" "$nc" map 0x200000000

status 0 "demo" "$nc" demo
"$nc" demo | grep -q 'data is gone'
ok $? "demo shows MAP_FIXED clobbering"
done_testing
