#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The lab's plot helpers (tools/lab.d/lib.sh, tools/bench-plot.gp) on
# hand-made data, without a server: lab_bars leaves out a series with
# no figure and marks exactly the bars whose runs the host limited
# (limited_by "host", else busy_pct below 95, as the tables' *);
# bench-plot.gp lays its cluster labels flat, at 45 degrees or upright
# as they fit, so that none overlaps the next or leaves the canvas,
# and still draws tools/bench.sh's data; titles reach gnuplot intact,
# quotes and all, broken into lines; a run's set-up names no image and
# its table by the cipher; the zoom plot marks a host-limited run in its
# legend and has no entry for a run without dispatches; the line after
# the targets names a section that docs/scheduling.md has.  The plots'
# titles and legends are read in what gnuplot was told
# (gnuplot_recorder), not in pixels.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
scratch

exp=test out=$tmp/out work=$tmp/work have_gnuplot=0 quick=0
mkdir -p "$out" "$work"
# shellcheck source=tools/lab.d/lib.sh
source "$topdir/tools/lab.d/lib.sh"

echo "a run's set-up:"
echo "0 2048 crypt aes-xts-plain64 00 0 image 0" > "$tmp/table"
expect_equal "lab_setup_of" \
  "aes-xts-plain64 device=usb device-speed=0.5 workers=4" \
  "$(lab_setup_of file=/dev/shm/x.img table=+"$tmp/table" device=usb \
       device-speed=0.5 workers=4)"

echo "lab_bars' data:"
# Clusters c1, c2; series s1 (c1 host-limited), s2 (c2 host-limited, c1
# a failed run), s3 failed in both: left out.
csv=$tmp/runs.csv
cat > "$csv" <<'EOF'
run,model,cluster,series,mb_s,busy_pct,limited_by
r1,usb,c1,s1,10.5,80.0,host
r2,usb,c1,s2,NA,99.0,device
r3,usb,c1,s3,NA,NA,NA
r4,usb,c2,s1,12,99.5,device
r5,usb,c2,s2,7,60.2,host
r6,usb,c2,s3,,NA,NA
r7,ssd,c1,s1,99,10.0,host
EOF
lab_bars bars "T" "MB/s" cluster series mb_s 'v("model") == "usb"' \
  || fail "lab_bars failed"
expect_equal "test-bars.dat" "cluster s1 min max host_limited s2 min max host_limited
c1 10.5 10.5 10.5 1 NA NA NA 0
c2 12 12 12 0 7 7 7 1" "$(cat "$out/test-bars.dat")"
# Without limited_by, busy_pct below 95 marks a bar (not at 95).
cut -d, -f1-6 "$csv" | sed 's/^r4,usb,c2,s1,12,99.5$/r4,usb,c2,s1,12,95.0/' \
  > "$tmp/busy.csv"
csv=$tmp/busy.csv
lab_bars busy "T" "MB/s" cluster series mb_s 'v("model") == "usb"' \
  || fail "lab_bars on busy_pct failed"
expect_equal "marks from busy_pct" "1 0 0 1" \
  "$(awk 'NR > 1 { printf "%s%s %s", sep, $5, $9; sep = " " }' \
       "$out/test-busy.dat")"
# Neither column: no marks; no figure at all: no chart, an error.
cut -d, -f1-5 "$tmp/runs.csv" > "$tmp/plain.csv"
csv=$tmp/plain.csv
lab_bars plain "T" "MB/s" cluster series mb_s || fail "lab_bars plain failed"
expect_equal "no marks without a busy column" 0 \
  "$(awk 'NR > 1 { n += $5 + $9 + $13 } END { print n + 0 }' \
       "$out/test-plain.dat")"
lab_bars none "T" "MB/s" cluster series mb_s 'v("series") == "s3"' \
  2> "$tmp/err" && fail "lab_bars drew a chart without figures"
grep -q 'test-none: no data to draw' "$tmp/err" || fail "no reason: $(cat "$tmp/err")"

echo "the line after the targets:"
for e in reorder randread starvation seeds nosuch; do
  exp=$e lab_notes=()
  lab_findings_note
  section=$(sed -n 's/.*docs\/scheduling.md, "\([^"]*\)".*/\1/p' \
              <<< "${lab_notes[0]}")
  [[ ${lab_notes[0]} == "A MISSED target is a finding of the model, not an error of the run: "* ]] \
    || fail "$e: ${lab_notes[0]}"
  grep -q -x -F -e "### $section" -e "## $section" "$topdir/docs/scheduling.md" \
    || fail "$e: docs/scheduling.md has no section '$section'"
  case $e in nosuch) ;; *) [[ $section == [0-9]". $e: "* ]] \
    || fail "$e: '$section' is not its own section" ;; esac
  echo "  $e: \"$section\""
done
exp=test

if ! command -v gnuplot > /dev/null; then
  echo "gnuplot is not installed: the drawing is not checked"
  echo PASS
  exit 0
fi
gnuplot_recorder "$tmp/gp"
have_gnuplot=1

echo "titles reach gnuplot as given:"
# Broken between words into lines of at most 30 characters.
title='3.16'"'"'s "sorted" \ write-out: one two three four five six seven eight'
printf 'print %s\n' "$(lab_gp_string "$title" 30)" > "$tmp/print.gp"
expect_equal "a title, back from gnuplot" \
  '3.16'"'"'s "sorted" \ write-out:
one two three four five six
seven eight' "$(gnuplot "$tmp/print.gp" 2>&1)"

echo "cluster labels:"
# bench-plot.gp's choice for N clusters of labels of L characters, and
# where gnuplot drew them: the angle, the px between clusters, the
# label's px, the y axis' px from the left edge, a line's px.
layout ()  # layout N L
{
  awk -v n="$1" -v l="$2" 'BEGIN {
    print "cluster a min max host_limited"
    for (i = 1; i <= n; i++) {
      s = sprintf("%d", i); while (length(s) < l) s = s "x"
      print s, i, i, i, i % 2 } }' > "$tmp/l.dat"
  echo 'print xtic_angle, (GPVAL_TERM_XMAX - GPVAL_TERM_XMIN) / nclusters,' \
       'label_px, GPVAL_TERM_XMIN, vchar' > "$tmp/show.gp"
  gnuplot -e "data='$tmp/l.dat'; out='$tmp/l.png'; title='T'; ylabel='Y'" \
    -e "logy=0; nseries=1; marked=1; nmarked=1" \
    "$topdir/tools/bench-plot.gp" "$tmp/show.gp" 2>&1
}
for c in "3 12 0" "18 22 45" "70 22 90"; do
  read -r n l want <<< "$c"
  read -r angle pitch label left vchar <<< "$(layout "$n" "$l")"
  expect_equal "$n labels of $l characters: angle" "$want" "$angle"
  awk -v a="$angle" -v p="$pitch" -v w="$label" -v y="$left" -v v="$vchar" \
    'BEGIN {
       if (a == 0) exit !(w + 16 <= p)            # side by side
       if (a == 90) exit !(p >= v)                # one line each
       exit !(p * 0.71 >= 1.5 * v && y + p / 2 >= w * 0.71) }' \
    || fail "$n labels at $angle: pitch $pitch px, label $label px, axis at $left px"
  echo "  $n labels of $l characters: $angle degrees, $pitch px apart"
done
# tools/bench.sh's data: three columns a series, no marks.
printf 'cluster plain min max dmcrypt min max\nqd1 100 90 110 80 70 85\n' \
  > "$tmp/bench.dat"
gnuplot -e "data='$tmp/bench.dat'; out='$tmp/bench.png'; title='T'" \
  -e "ylabel='MB/s'; logy=0; nseries=2" "$topdir/tools/bench-plot.gp" \
  || fail "bench-plot.gp on tools/bench.sh's data"
[ "$(head -c 4 "$tmp/bench.png" | od -An -c | tr -d ' ')" = "211PNG" ] \
  || fail "bench-plot.gp drew no PNG"
# One cluster whose series are none, or some, host-limited (the policies
# experiment on one model): gnuplot 5.4 crashes on a labels plot whose
# every point is undefined in a one-line file, so no series may give it
# one.
for marks in "0 0 0" "1 0 1"; do
  read -r m1 m2 n <<< "$marks"
  printf 'cluster a min max host_limited b min max host_limited
' \
    > "$tmp/one.dat"
  printf 'usb 150 150 150 %s 149 149 149 %s\n' "$m1" "$m2" >> "$tmp/one.dat"
  gnuplot -e "data='$tmp/one.dat'; out='$tmp/one.png'; title='T'" \
    -e "ylabel='MB/s'; logy=0; nseries=2; marked=1; nmarked=$n" \
    "$topdir/tools/bench-plot.gp" \
    || fail "bench-plot.gp on one cluster, host-limited marks $m1 $m2"
done

echo "lab_bars' drawing:"
csv=$tmp/runs.csv
lab_bars drawn "A \"quoted\" title" "MB/s:log" cluster series mb_s \
  'v("model") == "usb"' || fail "lab_bars drew nothing"
log=$(gnuplot_log "$out/test-drawn.png")
[ -n "$log" ] || fail "no gnuplot call for test-drawn.png"
grep -q -F 'title="A \"quoted\" title"' "$log" || fail "the title: $(head -n 3 "$log")"
grep -q -F 'nseries=2; marked=1; nmarked=2' "$log" \
  || fail "lab_bars gave gnuplot other counts: $(head -n 3 "$log")"

echo "the zoom plot:"
# Three runs: one host-limited, one not, one without dispatches.
for r in a b c; do
  {
    echo "time_s,action,rwbs,sector,sectors"
    [ $r = c ] || printf '0.001,D,W,0,8\n0.002,D,W,2048,8\n'
    echo "0.003,C,W,0,8"
  } > "$work/$r.events.csv"
done
echo "80.5 host" > "$work/a.limited"
echo "99.0 device" > "$work/b.limited"
echo "10.0 host" > "$work/c.limited"
lab_sector_zoom zoom "Zoom 'title'" 0.25 "fifo:a" "sorted:b" "none:c" \
  || fail "lab_sector_zoom failed"
expect_equal "the zoom's legend" "fifo, HOST-LIMITED (busy 80.5 %)
sorted" "$(gnuplot_keys "$out/test-zoom.png")"
expect_equal "the zoom's title" "Zoom 'title'" \
  "$(gnuplot_title "$out/test-zoom.png")"
echo PASS
