#!/bin/sh
# make bench: run every benchmark; tables on stdout, CSV beside them.
#   NCB_BENCH_ONLY=b-resv      only the benchmarks whose name starts so
#   NCB_BENCH_RUN=qemu-x86_64  run each under a command (an emulator,
#                              valgrind); the CSV then says so in its name
#   NCB_BENCH_REPEATS=5        b-watch: fewer repetitions (15 by default)
#   NCB_BENCH_BASELINE=PATH    b-watch: another build's noclobber-watch
#                              measured beside this one (column "base")
set -eu
b=${1:-build/native}
only=${NCB_BENCH_ONLY:-}
run=${NCB_BENCH_RUN:-}
tag=${run:+-$(basename "${run%% *}")}
mkdir -p "$b/bench"
for x in "$b"/bench/b-*; do
	[ -x "$x" ] || continue
	n=$(basename "$x")
	case $n in "$only"*) ;; *) continue ;; esac
	echo "== $n${run:+ under $run}"
	$run "$x" "$b/bench/$n$tag.csv" "$b/bench/exit0"
	echo "(CSV: $b/bench/$n$tag.csv)"
done
# The model's cost against its size, as a plot, where gnuplot is present.
if [ -f "$b/bench/b-model.csv" ] && [ -z "$only$run" ]; then
	if command -v gnuplot >/dev/null 2>&1; then
		gnuplot -e "csv='$b/bench/b-model.csv'; out='$b/bench/model.svg'" \
			bench/plot-model.gp
		echo "(plot: $b/bench/model.svg)"
	else
		echo "SKIP plot: gnuplot is not installed (scripts/install-deps)"
	fi
fi
