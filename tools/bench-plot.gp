# Clustered bar chart of tools/bench.sh figures, with min-max error bars.
#
#   gnuplot -e "data='F.dat'; out='F.png'; title='T'; ylabel='U'" \
#           -e "nseries=N; logy=0" tools/bench-plot.gp
#
# F.dat: a header line, then one line per cluster (a test, or an image):
# its label, then median, min and max of each of the N series (systems).

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 1100,600 noenhanced font "sans,10"
} else {
  set terminal png size 1100,600 noenhanced
}
set output out
set title title
set ylabel ylabel
set datafile missing "NA"
set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside right top vertical
set grid ytics
if (exists("logy") && logy) {
  set logscale y
  set yrange [*:*]
} else {
  set yrange [0:*]
}
set xtics nomirror rotate by 15 right
set ytics nomirror
set border 3

plot for [i=1:nseries] data \
  using (column(3*i-1)):(column(3*i)):(column(3*i+1)):xtic(1) \
  title columnheader(3*i-1)
