# SPDX-License-Identifier: GPL-2.0-or-later
# Clustered bar chart of tools/bench.sh figures, with min-max error bars.
#
#   gnuplot -e "data='F.dat'; out='F.png'; title='T'; ylabel='U'" \
#           -e "nseries=N; logy=0" tools/bench-plot.gp
#
# F.dat: a header line, then one line per cluster (a test, or an image):
# its label, then median, min and max of each of the N series (systems).
# The header names each series (the word before its min and max): the
# legend shows those names, so a series without a figure is best left
# out of F.dat.
#
# With marked=1 (tools/lab.d/lib.sh's lab_bars) each series has a fourth
# column, 1 where the host, not the device, limited the run behind the
# bar: such a bar is hatched and starred, and the legend explains the
# mark when nmarked (how many there are) is above 0.
#
# The cluster labels lie flat where they fit between two clusters, else
# at 45 degrees, the left margin making room for the first of them,
# else upright, the chart made wider if even so they would touch: no
# two labels overlap and none is cut off.  The chart is drawn twice,
# the first time to learn where gnuplot put the axes.

width_px = 1100; height_px = 600
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  term = 'pngcairo'; font = 'font "sans,10"'
} else {
  term = 'png'; font = ''
}
set terminal @term size width_px,height_px noenhanced @font
set output "/dev/null"         # the first drawing
set title title
set ylabel ylabel
set datafile missing "NA"
set datafile columnheaders     # the first line names the series
if (!exists("marked")) { marked = 0 }
if (!exists("nmarked")) { nmarked = 0 }
ncols = marked ? 4 : 3         # columns per series
marked_title = '* HOST-LIMITED (busy < 95 %)'

# ---- Where the bars go: cluster r (from 0) centred at x = r ----

gap = 2                         # empty bar widths between clusters
slot = 1.0 / (nseries + gap)    # one bar's share of a cluster, x units
barx(i) = column(0) + (i - (nseries + 1) / 2.0) * slot
bar_value(i) = column(ncols * (i - 1) + 2)
bar_low(i) = column(ncols * (i - 1) + 3)
bar_high(i) = column(ncols * (i - 1) + 4)
bar_host(i) = marked ? column(ncols * (i - 1) + 5) == 1 : 0

# ---- The rest of the frame ----

set style fill solid 0.8 border -1
set key outside right top vertical
set grid ytics
if (exists("logy") && logy) {
  set logscale y
  set yrange [*:*]
} else {
  set yrange [0:*]
}
set ytics nomirror
set xtics nomirror norotate center
if (nmarked > 0) { set offsets 0, 0, graph 0.08, 0 }   # room for the stars
set border 3
stats data using (strlen(strcol(1))) nooutput
nclusters = STATS_records
label_chars = STATS_max
set xrange [-0.5:nclusters - 0.5]

plot for [i=1:nseries] data \
       using (barx(i)):(bar_value(i)):(0.9 * slot) \
       with boxes lt i title columnheader(ncols * (i - 1) + 2), \
     for [i=1:nseries] data \
       using (barx(i)):(bar_low(i)):(0):(bar_high(i) - bar_low(i)) \
       with vectors heads size screen 0.004,90 lc rgb 'black' notitle, \
     for [i=1:(marked ? nseries : 0)] data \
       using (barx(i)):(bar_host(i) ? bar_value(i) : NaN):(0.9 * slot) \
       with boxes fs transparent pattern 4 border -1 lc rgb 'black' notitle, \
     for [i=1:(marked ? nseries : 0)] data \
       using (barx(i)):(bar_value(i)):(bar_host(i) ? "*" : "") \
       with labels offset 0,0.7 notitle, \
     data using 0:(NaN):xtic(1) notitle, \
     NaN with boxes fs transparent pattern 4 border -1 lc rgb 'black' \
       title (nmarked > 0 ? marked_title : '')

# ---- The cluster labels, measured against the first drawing ----

hchar = 1.0 * GPVAL_TERM_HCHAR / GPVAL_TERM_SCALE      # px, as gnuplot
vchar = 1.0 * GPVAL_TERM_VCHAR / GPVAL_TERM_SCALE      # estimates them
label_px = label_chars * hchar
left_px = GPVAL_TERM_XMIN                              # the y axis
pitch = (GPVAL_TERM_XMAX - left_px) / nclusters        # px per cluster
xtic_angle = 0
if (label_px + 2 * hchar > pitch) {
  # At 45 degrees the first label reaches 0.71 of its length left of
  # its cluster: the left margin may have to grow.
  need_px = label_px * 0.71 + hchar - pitch / 2
  pitch45 = pitch - (need_px > left_px ? (need_px - left_px) / nclusters : 0)
  if (pitch45 * 0.71 >= 1.5 * vchar) {
    xtic_angle = 45
    if (need_px > left_px) { set lmargin at screen need_px / width_px }
  } else {
    # Upright, a line and a half each: a wider chart if need be.
    xtic_angle = 90
    if (pitch < 1.5 * vchar) {
      width_px = width_px + nclusters * (1.5 * vchar - pitch)
      set terminal @term size width_px,height_px noenhanced @font
    }
  }
  set xtics rotate by xtic_angle right
}
set output out
replot
