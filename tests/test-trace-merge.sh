#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tools/dmcrypt-trace on hand-written traces that went through a block
# queue (I and M events) on a model clock: bios merged into one request
# all complete with that request's C, requests completing out of order
# each complete their own bios; the device busy fraction (the union of
# D..C intervals over the run's span), the queue depths and MB/s, to the
# digit; the < 95 % flag that says the host limited a run; --csv and
# --summary-csv write the columns docs/engine.md documents, and the
# summary appends a row per run under one header; --png's plot is
# titled (--title, else the trace, the run and its marker) with a last
# line on the busy time, HOST-LIMITED below 95 %, and its legend names
# only the directions the run dispatched (what gnuplot was told).
source "$(dirname "$0")/functions.sh"
analyser_built_or_fail
scratch

# accepted ARGS...: exit 0, nothing on stderr; the output in $tmp/out.
accepted ()
{
  "$analyser" "$@" > "$tmp/out" 2> "$tmp/err" \
    || fail "dmcrypt-trace $*: exit $?: $(cat "$tmp/err")"
  [ -s "$tmp/err" ] && fail "dmcrypt-trace $*: stderr: $(cat "$tmp/err")"
  return 0
}

# has LINE: the last output holds LINE exactly.
has () { grep -q -x -F -- "$1" "$tmp/out" || fail "no line '$1' in: $(cat "$tmp/out")"; }

# event N TIME ACTION RWBS TAIL: one line in blkparse's layout.
event ()
{
  printf '%3d,%-3d %2d %8d %15s %5d %2s %3s %s\n' 8 0 0 "$1" "$2" 100 \
    "$3" "$4" "$5"
}

marker ()
{
  printf '  8,0    0        0     0.000000000     0  m   N dmcrypt-run start=2026-12-01T10:00:00.000000Z pid=1 dev=8,0 file=%s\n' "$1"
}

# csv_field FILE ROW COLUMN: the field of COLUMN (by its header name) in
# ROW (from 1, after the header), as Python's csv module reads it.
csv_field ()
{
  "$PY" - "$@" <<'PYEOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
header, row = rows[0], rows[int(sys.argv[2])]
if len(row) != len(header):
    sys.exit("row %s has %d fields, the header %d" % (sys.argv[2], len(row), len(header)))
print(row[header.index(sys.argv[3])])
PYEOF
}

# The columns as docs/engine.md gives them (a text block's line).
doc_header ()  # doc_header FIRST-COLUMNS
{
  grep -x -E -- "$1,[a-z0-9_,]+" "$topdir/docs/engine.md" \
    || fail "docs/engine.md shows no CSV header starting $1"
}

echo "merged bios complete with their request:"
# Two requests of three 4 KiB bios each: A = I 0, M 8 (back), M 16
# (back); B = I 100, M 108 (back), M 92 (front).  B is dispatched after A
# and completes before it.  Times in ms.
{
  marker "/srv/a,b.img"
  event 1 0.000000000 Q W "0 + 8 [nbdkit]"
  event 2 0.000100000 Q W "8 + 8 [nbdkit]"
  event 3 0.000200000 Q W "16 + 8 [nbdkit]"
  event 4 0.000300000 Q W "100 + 8 [nbdkit]"
  event 5 0.000400000 Q W "108 + 8 [nbdkit]"
  event 6 0.000500000 Q W "92 + 8 [nbdkit]"
  event 7 0.001000000 I W "0 + 8 [dmcrypt_write]"
  event 8 0.001100000 M W "8 + 8 [dmcrypt_write]"
  event 9 0.001200000 M W "16 + 8 [dmcrypt_write]"
  event 10 0.001300000 I W "100 + 8 [dmcrypt_write]"
  event 11 0.001400000 M W "108 + 8 [dmcrypt_write]"
  event 12 0.001500000 M W "92 + 8 [dmcrypt_write]"
  event 13 0.002000000 D W "0 + 24 [sim]"
  event 14 0.003000000 D W "92 + 24 [sim]"
  event 15 0.005000000 C W "92 + 24 [0]"
  event 16 0.006000000 C W "0 + 24 [0]"
  event 17 0.010000000 Q R "500 + 8 [nbdkit]"
} > "$tmp/merge"
accepted --csv "$tmp/events.csv" --summary-csv "$tmp/summary.csv" "$tmp/merge"
cat "$tmp/out"
has '  events: 17 (Q 7, I 2, M 4, D 2, C 2) over 0.010000 s'
# Q2I 1 ms each; I2D 1.0, 0.9, 0.8 ms (A) and 1.7, 1.6, 1.5 ms (B);
# D2C 4 ms (A) and 2 ms (B); Q2C 6.0, 5.9, 5.8 ms (A), 4.7, 4.6, 4.5 (B).
has '  queue to block queue (Q2I, Q2M): 6 IOs matched, p50 1000.0 us, p90 1000.0 us, p99 1000.0 us, max 1000.0 us'
has '  block queue to dispatch (I2D, M2D): 6 IOs matched, p50 1500.0 us, p90 1700.0 us, p99 1700.0 us, max 1700.0 us'
has '  dispatch to completion (D2C): 6 IOs matched, p50 4000.0 us, p90 4000.0 us, p99 4000.0 us, max 4000.0 us'
has '  queue to completion (Q2C): 6 IOs matched, p50 5800.0 us, p90 6000.0 us, p99 6000.0 us, max 6000.0 us'
has '  block queue: 6 bios dispatched in 2 requests, 3.00 bios per request'
# Requests queued 1.0 + 1.7 ms, bios 2.7 + 4.8 ms, at the device 4 + 2
# ms, over 10 ms; the device busy from 2 to 6 ms.
has '  block queue depth (I/M to D): mean 0.27, max 2 requests; mean 0.75, max 6 bios'
has '  device queue depth (D to C): mean 0.60, max 2 requests'
has '  throughput over the run'"'"'s 0.010000 s: writes 2.5 MB/s'
has '  device busy: 40.0 % of the run'"'"'s 0.010000 s (0.004000 s with IO at the device)'
has '  device busy 40.0 %: the host, not the device, limited this run'

# The event rows: each C completes the three bios of its own request.
expect_equal "--csv header" "$(doc_header time_s)" "$(head -n 1 "$tmp/events.csv")"
expect_equal "--csv rows" 17 $(( $(wc -l < "$tmp/events.csv") - 1 ))
expect_equal "--csv D and C rows" \
"0.002000000,D,W,0,24,3,1,3,1,0.001000000
0.003000000,D,W,92,24,3,0,0,2,0.001700000
0.005000000,C,W,92,24,3,0,0,1,0.002000000
0.006000000,C,W,0,24,3,0,0,0,0.004000000" "$(grep -E '^[^,]+,[DC],' "$tmp/events.csv")"
expect_equal "--csv I row of B" "0.001300000,I,W,100,8,,2,4,0,0.001000000" \
  "$(sed -n 11p "$tmp/events.csv")"

# The summary row: the file name quoted for its comma, the figures.
expect_equal "--summary-csv header" "$(doc_header trace,run)" \
  "$(head -n 1 "$tmp/summary.csv")"
expect_equal "--summary-csv rows" 2 "$(wc -l < "$tmp/summary.csv")"
for kv in file=/srv/a,b.img run=1 i_events=2 m_events=4 span_s=0.010000000 \
          write_bytes=24576 write_mb_s=2.458 read_dispatches=0 \
          read_sequential= bios_dispatched=6 requests_dispatched=2 \
          queue_requests_mean=0.270000 queue_bios_max=6 \
          device_requests_mean=0.600000 device_requests_max=2 \
          busy_s=0.004000000 busy_fraction=0.400000 limited_by=host \
          d2c_n=6 d2c_max_us=4000.000 q2c_p50_us=5800.000 \
          i2d_max_us=1700.000 q2d_p50_us=2500.000; do
  expect_equal "summary ${kv%%=*}" "${kv#*=}" \
    "$(csv_field "$tmp/summary.csv" 1 "${kv%%=*}")"
done

echo "busy time: the union of D..C, open ones to the run's end:"
# Over 10 s: [1, 3] and [2, 4] overlap, [5.5, 5.7] inside [5, 6], the
# D at 9 s never completes (open to 10 s): 3 + 1 + 1 = 5 s busy.
{
  marker /img
  event 1 0.000000000 Q R "0 + 8 [nbdkit]"
  event 2 1.000000000 D R "0 + 8 [sim]"
  event 3 2.000000000 D R "64 + 8 [sim]"
  event 4 3.000000000 C R "0 + 8 [0]"
  event 5 4.000000000 C R "64 + 8 [0]"
  event 6 5.000000000 D W "128 + 8 [sim]"
  event 7 5.500000000 D W "256 + 8 [sim]"
  event 8 5.700000000 C W "256 + 8 [0]"
  event 9 6.000000000 C W "128 + 8 [0]"
  event 10 9.000000000 D W "512 + 8 [sim]"
  event 11 10.000000000 Q W "1024 + 8 [nbdkit]"
} > "$tmp/busy"
accepted "$tmp/busy"
cat "$tmp/out"
has '  events: 11 (Q 2, D 5, C 4) over 10.000000 s'
has '  queue to dispatch (Q2D): 1 IO matched, p50 1000000.0 us, p90 1000000.0 us, p99 1000000.0 us, max 1000000.0 us'
has '  device queue depth (D to C): mean 0.62, max 2 requests'
has '  device busy: 50.0 % of the run'"'"'s 10.000000 s (5.000000 s with IO at the device)'
has '  device busy 50.0 %: the host, not the device, limited this run'
grep -q -E '^  block queue' "$tmp/out" && fail "a block queue shown without I or M"

echo "the 95 % line:"
# busy_trace D C: a run from 0 to 1 s, the device busy from D to C.
busy_trace ()
{
  marker /img
  event 1 0.000000000 Q W "0 + 8 [nbdkit]"
  event 2 0.000000000 I W "0 + 8 [nbdkit]"
  event 3 "$1" D W "0 + 8 [sim]"
  event 4 "$2" C W "0 + 8 [0]"
  event 5 1.000000000 Q W "8 + 8 [nbdkit]"
}
for case in "0.060000000 1.000000000 94.0 host" \
            "0.050000000 1.000000000 95.0 device" \
            "0.000000000 0.960000000 96.0 device"; do
  set -- $case
  busy_trace "$1" "$2" > "$tmp/edge"
  accepted --summary-csv "$tmp/edges.csv" "$tmp/edge"
  if [ "$4" = host ]; then
    has "  device busy $3 %: the host, not the device, limited this run"
  else
    has "  device busy $3 %: the device limited this run"
  fi
  grep -q 'limited this run' "$tmp/out" || fail "no limit line"
  echo "  busy $3 %: $4"
done
# Three runs of three traces: one header, three rows.
expect_equal "--summary-csv appended" 4 "$(wc -l < "$tmp/edges.csv")"
expect_equal "its header" 1 "$(grep -c '^trace,run,' "$tmp/edges.csv")"
expect_equal "limited_by of the three" "host device device" \
  "$(for r in 1 2 3; do csv_field "$tmp/edges.csv" $r limited_by; done | tr '\n' ' ' | sed 's/ $//')"
expect_equal "busy_fraction of the first" 0.940000 \
  "$(csv_field "$tmp/edges.csv" 1 busy_fraction)"

echo "runs and files:"
# Two runs: --summary-csv writes a row each; --csv needs one run.
cat "$tmp/merge" "$tmp/busy" > "$tmp/two"
accepted --summary-csv "$tmp/two.csv" "$tmp/two"
expect_equal "rows of two runs" "1 2" \
  "$(csv_field "$tmp/two.csv" 1 run) $(csv_field "$tmp/two.csv" 2 run)"
expect_equal "run 2's busy_s" 5.000000000 "$(csv_field "$tmp/two.csv" 2 busy_s)"
"$analyser" --csv "$tmp/x.csv" "$tmp/two" > "$tmp/out" 2> "$tmp/err" \
  && fail "--csv on two runs: exit 0"
grep -q -x -F "dmcrypt-trace: $tmp/two: 2 runs in this trace: choose one with --run N (1 to 2) or --run last" \
  "$tmp/err" || fail "--csv on two runs: $(cat "$tmp/err")"
[ -e "$tmp/x.csv" ] && fail "--csv wrote a file for a refused trace"
accepted --run 2 --csv "$tmp/x.csv" "$tmp/two"
expect_equal "--run 2 --csv rows" 11 $(( $(wc -l < "$tmp/x.csv") - 1 ))
echo "not a summary" > "$tmp/other.csv"
"$analyser" --summary-csv "$tmp/other.csv" "$tmp/merge" > "$tmp/out" 2> "$tmp/err" \
  && fail "--summary-csv onto another file: exit 0"
expect_equal "the refusal" "dmcrypt-trace: $tmp/other.csv: its first line is not this version's --summary-csv header: not appending to it" \
  "$(cat "$tmp/err")"
expect_equal "the other file" "not a summary" "$(cat "$tmp/other.csv")"

"$analyser" --title T "$tmp/merge" > "$tmp/out" 2> "$tmp/err"
expect_equal "--title without --png: exit status" 2 $?
expect_equal "--title without --png" \
  "dmcrypt-trace: --title: it titles --png's plot: give --png FILE too" \
  "$(cat "$tmp/err")"

if ! command -v gnuplot > /dev/null; then
  echo "  gnuplot is not installed: --png not tried"
  echo PASS
  exit 0
fi
accepted --png "$tmp/merge.png" "$tmp/merge"
[ "$(head -c 8 "$tmp/merge.png" | od -An -tx1 | tr -d ' \n')" = \
  89504e470d0a1a0a ] || fail "--png drew no PNG of an I/M trace"
echo "  --png of an I/M trace: a PNG"

echo "--png's title and legend:"
# What gnuplot is told: the title's lines, the legend's entries.
gnuplot_recorder "$tmp/gp"
png_keys () { gnuplot_keys "$1" | tr '\n' ' ' | sed 's/ $//'; }
# The default: the trace and its run, the marker, the busy line.
accepted --png "$tmp/default.png" "$tmp/merge"
expect_equal "the default title" "dmcrypt backend IO: $tmp/merge, run 1 of 1
start=2026-12-01T10:00:00.000000Z pid=1 dev=8,0 file=/srv/a,b.img
device busy 40.0 % of the run: HOST-LIMITED (below 95 %: the host, not the device, limited it)" \
  "$(gnuplot_title "$tmp/default.png")"
expect_equal "a run of writes: its legend" "write" "$(png_keys "$tmp/default.png")"
# --title: quotes, a backslash, a newline and \n as line breaks; the
# second of two runs; reads and writes.
accepted --run 2 --png "$tmp/two.png" \
  --title "$(printf 'A "quoted" back\\slash\nsecond\\nthird')" "$tmp/two"
expect_equal "--title" 'A "quoted" back\slash
second
third
device busy 50.0 % of the run: HOST-LIMITED (below 95 %: the host, not the device, limited it)' \
  "$(gnuplot_title "$tmp/two.png")"
expect_equal "reads and writes: the legend" "write read" \
  "$(png_keys "$tmp/two.png")"
# A long line is broken between words, within 110 characters.
words=$(printf 'word%02d ' {1..30} | sed 's/ $//')
accepted --png "$tmp/long.png" --title "$words" "$tmp/merge"
expect_equal "a long title" "$(printf 'word%02d ' {1..15} | sed 's/ $//')
$(printf 'word%02d ' {16..30} | sed 's/ $//')" \
  "$(gnuplot_title "$tmp/long.png" | head -n 2)"
accepted --run 1 --png "$tmp/one.png" "$tmp/two"
expect_equal "the first of two runs" "dmcrypt backend IO: $tmp/two, run 1 of 2" \
  "$(gnuplot_title "$tmp/one.png" | head -n 1)"
# Either side of the 95 % line: D, C, busy %, what the line says.
for edge in "0.060000000 1.000000000 94.0|HOST-LIMITED (below 95 %: the host, not the device, limited it)" \
            "0.000000000 0.960000000 96.0|the device limited it"; do
  IFS='|' read -r times says <<< "$edge"
  read -r d c pct <<< "$times"
  busy_trace "$d" "$c" > "$tmp/edge"
  accepted --png "$tmp/edge-$pct.png" --title "edge" "$tmp/edge"
  expect_equal "the busy line at $pct %" \
    "device busy $pct % of the run: $says" \
    "$(gnuplot_title "$tmp/edge-$pct.png" | tail -n 1)"
done
echo PASS
