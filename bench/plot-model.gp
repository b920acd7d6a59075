# The model's cost against the number of areas (make bench writes the CSV).
# gnuplot -e "csv='b-model.csv'; out='model.svg'" bench/plot-model.gp
set datafile separator ","
set terminal svg size 720,440 font "sans,11"
set output out
set logscale xy
set xlabel "areas"
set ylabel "ns per operation (median)"
set key top left
set grid
set xtics ("1,000" 1000, "65,000" 65000, "1,000,000" 1000000)
set title "Address-space model against the kernel and a sorted array"
plot csv using ($1):(strcol(2) eq "map" ? $3 : 1/0) with linespoints \
	title "model map+unmap", \
     csv using ($1):(strcol(2) eq "protect" ? $3 : 1/0) with linespoints \
	title "model protect x2", \
     csv using ($1):(strcol(2) eq "gap" ? $3 : 1/0) with linespoints \
	title "model gap search", \
     csv using ($1):(strcol(2) eq "map" && $4 > 0 ? $4 : 1/0) \
	with linespoints dt 2 title "kernel map+unmap", \
     csv using ($1):(strcol(2) eq "protect" && $4 > 0 ? $4 : 1/0) \
	with linespoints dt 2 title "kernel protect x2", \
     csv using ($1):(strcol(2) eq "map" ? $5 : 1/0) with linespoints \
	dt 3 title "array map+unmap"
