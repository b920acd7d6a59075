#!/bin/sh
# make bench: run every benchmark; tables on stdout, CSV beside them.
set -eu
b=${1:-build/native}
mkdir -p "$b/bench"
for x in "$b"/bench/b-*; do
	[ -x "$x" ] || continue
	n=$(basename "$x")
	echo "== $n"
	"$x" "$b/bench/$n.csv" "$b/bench/exit0"
	echo "(CSV: $b/bench/$n.csv)"
done
# The model's cost against its size, as a plot, where gnuplot is present.
if [ -f "$b/bench/b-model.csv" ]; then
	if command -v gnuplot >/dev/null 2>&1; then
		gnuplot -e "csv='$b/bench/b-model.csv'; out='$b/bench/model.svg'" \
			bench/plot-model.gp
		echo "(plot: $b/bench/model.svg)"
	else
		echo "SKIP plot: gnuplot is not installed (scripts/install-deps)"
	fi
fi
