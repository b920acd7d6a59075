#!/bin/sh
# make bench: run every benchmark; tables on stdout, CSV beside them.
set -eu
b=${1:-build/native}
mkdir -p "$b/bench"
for x in "$b"/bench/b-*; do
	[ -x "$x" ] || continue
	n=$(basename "$x")
	echo "== $n"
	"$x" "$b/bench/$n.csv"
	echo "(CSV: $b/bench/$n.csv)"
done
