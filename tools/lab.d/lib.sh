# SPDX-License-Identifier: GPL-2.0-or-later
# What the scheduling lab's experiments share; tools/lab sources it,
# then one experiment file, in a subshell per experiment.
#
# tools/lab sets, before an experiment runs:
#   topdir        the source tree
#   plugin        a copy of the built plugin (a rebuild meanwhile cannot
#                 mix two versions in one table)
#   trace_tool    tools/dmcrypt-trace;  seeker  tools/seeker
#   out           LAB_OUT, where CSV, PNG and tables go
#   work          this experiment's scratch directory (removed after it)
#   exp           the experiment's name (its file name without NN- and .sh)
#   quick         1 under QUICK=1, else 0
#   have_gnuplot  1 when gnuplot is installed (no PNG without it)
#
# An experiment calls lab_begin with its CSV header, then per run
# lab_run (which starts the server with a trace, runs a client and
# reads the trace's summary into the array T), lab_row and lab_result;
# then lab_note (its targets), lab_findings_note (what a missed target
# means), lab_table, lab_bars and lab_end.  Every figure is in the
# model's time: a wall-clock figure of a client is scaled by the run's
# device-speed (lab_model_rate, lab_model_ms).
#
# Every plot names what it shows: a run's plot its set-up (lab_run's
# run_label and run_setup), a bar chart's legend only the series that
# have a figure; a run the host limited (busy below BUSY_LIMIT, the
# tables' *) is marked HOST-LIMITED, its bar hatched and starred.

PY=/usr/bin/python3
BUSY_LIMIT=95            # %: below it the host, not the device, limited a run
NBDKIT_OPTS=()           # nbdkit's options before the plugin, every run

lab_die () { echo "lab: $exp: $*" >&2; exit 1; }

# ---- Sizes, times and speeds: full, QUICK=1, or the LAB_* overrides ----

lab_size ()  # lab_size FULL-BYTES QUICK-BYTES: LAB_SIZE wins
{
  local s=${LAB_SIZE:-}
  if [ -n "$s" ]; then
    s=$(numfmt --from=iec "${s%iB}" 2>/dev/null) \
      || lab_die "bad LAB_SIZE $LAB_SIZE"
    echo $(( s / 1048576 * 1048576 ))
  elif [ "$quick" = 1 ]; then echo "$2"
  else echo "$1"
  fi
}

lab_seconds ()  # lab_seconds FULL QUICK: LAB_SECONDS wins
{
  if [ -n "${LAB_SECONDS:-}" ]; then echo "$LAB_SECONDS"
  elif [ "$quick" = 1 ]; then echo "$2"
  else echo "$1"
  fi
}

# The device-speed of a model in an experiment, times LAB_SPEEDUP (a
# smoke test's knob: its figures are then the host's, not the model's).
lab_speed ()  # lab_speed BASE
{
  awk -v b="$1" -v u="${LAB_SPEEDUP:-1}" 'BEGIN { printf "%.6g\n", b * u }'
}

# Wall-clock client figures on the model's clock.
lab_model_rate () { awk -v v="$1" -v s="$2" 'BEGIN { printf "%.6g", v / s }'; }
lab_model_ms () { awk -v v="$1" -v s="$2" 'BEGIN { printf "%.6g", v * s }'; }

lab_mib () { echo "$(( $1 >> 20 )) MiB"; }
lab_count () { echo $#; }

# Seconds allowed to a run whose client runs SECONDS: start-up, the
# analysis and a loaded machine besides.
lab_timeout () { awk -v s="$1" 'BEGIN { printf "%d", 60 + 3 * s }'; }

# ---- Images and tables ----

# BYTES pseudo-random bytes (AES-CTR of zeros) into FILE: no zero blocks
# for nbdcopy to skip, no holes in the image.
lab_random_file ()  # lab_random_file FILE BYTES
{
  openssl enc -aes-128-ctr -nosalt -K "$(openssl rand -hex 16)" \
    -iv "$(openssl rand -hex 16)" -in /dev/zero 2>/dev/null \
    | head -c "$2" > "$1"
  [ "$(stat -c %s "$1")" -eq "$2" ] || lab_die "cannot write $1"
}

# A plain dm-crypt table over a whole image of BYTES, in a file; the
# image is the plugin's file=, so the table's device is a placeholder.
lab_table_file ()  # lab_table_file FILE BYTES CIPHER KEY-BITS
{
  local key=-
  [ "$4" -gt 0 ] && key=$(openssl rand -hex $(( $4 / 8 )))
  echo "0 $(( $2 / 512 )) crypt $3 $key 0 image 0" > "$1"
}

# A sparse image as large as the hdd model's disk (its capacity
# default, 1000 GB), so that random IO seeks over the whole stroke; reads
# of its holes cost the host nothing.  $work/disk.img, of disk_bytes.
lab_disk_image ()
{
  disk_bytes=1000000000000
  truncate -s $disk_bytes "$work/disk.img" || lab_die "no sparse image"
}

# ---- Runs ----

# Calls FUNC once per combination of a word of each LIST, the first
# list outermost: FUNC A B C.  lab_matrix_size: how many calls.
lab_matrix ()  # lab_matrix FUNC LIST1 LIST2 LIST3
{
  local a b c
  for a in $2; do
    for b in $3; do
      for c in $4; do "$1" "$a" "$b" "$c"; done
    done
  done
}
lab_matrix_size () { echo $(( $(lab_count $1) * $(lab_count $2) * $(lab_count $3) )); }

# Starts an experiment: its CSV (header HEADER) and trace summaries
# ($out/$exp-trace.csv: dmcrypt-trace --summary-csv, a row per run, its
# trace column the run's id) begin afresh; TOTAL runs are planned.
lab_begin ()  # lab_begin TOTAL HEADER
{
  lab_total=$1 lab_runs=0 lab_failures=0 lab_notes=() lab_start_s=$SECONDS
  csv=$out/$exp.csv
  echo "$2" > "$csv"
  rm -f "$out/$exp-trace.csv" "$out/$exp".txt "$out/$exp"-*.png \
    "$out/$exp"-*.dat
  lab_traces=$work/traces
  [ "${LAB_KEEP_TRACES:-0}" = 1 ] && lab_traces=$out/traces
  mkdir -p "$lab_traces" || lab_die "cannot make $lab_traces"
  rm -f "$lab_traces/$exp"-*.trace
  lab_load_start=$(cut -d' ' -f1 /proc/loadavg)
}

# One run: nbdkit with the plugin, PLUGIN-ARGS and a trace, around
# CLIENT (a shell command with "$uri", run by nbdkit --run, that writes
# its figures into files of its own).  Prints "[i/N] exp: LABEL: " (the
# result follows on the same line: lab_result).  Sets run_id, run_label
# (LABEL), run_setup (lab_setup_of PLUGIN-ARGS), run_wall_s and T (the
# run's trace summary, by column); returns non-zero, after
# printing why, when the client or the analysis failed.  NBDKIT_OPTS
# (an array, may be empty) goes to nbdkit before the plugin.
lab_run ()  # lab_run LABEL TIMEOUT-S PLUGIN-ARGS... -- CLIENT
{
  local label=$1 limit=$2 args=() t0 rc
  shift 2
  while [ $# -gt 1 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  [ "${1:-}" = -- ] || lab_die "lab_run: no client"
  unset T
  declare -gA T
  lab_runs=$((lab_runs + 1))
  run_id=$(printf '%s-%02d' "$exp" "$lab_runs")
  run_label=$label run_setup=$(lab_setup_of "${args[@]}")
  run_trace=$lab_traces/$run_id.trace
  printf '[%d/%d] %s: %s: ' "$lab_runs" "$lab_total" "$exp" "$label"
  t0=$EPOCHREALTIME
  timeout "$limit" nbdkit -U - "${NBDKIT_OPTS[@]}" "$plugin" "${args[@]}" \
    trace="$run_trace" --run "$2" > "$work/run.log" 2>&1 < /dev/null
  rc=$?
  run_wall_s=$(awk -v a="$t0" -v b="$EPOCHREALTIME" \
                 'BEGIN { printf "%.1f", b - a }')
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && echo "timed out after $limit s" >> "$work/run.log"
    lab_failed "the run exited with $rc"
    return 1
  fi
  lab_summary || { lab_failed "dmcrypt-trace could not read the trace"
                   return 1; }
}

# The run's trace summary into T; its row goes to $out/$exp-trace.csv.
lab_summary ()
{
  local one=$work/summary.csv
  rm -f "$one"
  (cd "$lab_traces" && "$trace_tool" --summary-csv "$one" \
     "$run_id.trace") > "$work/analysis.log" 2>&1 || return 1
  [ -s "$out/$exp-trace.csv" ] || head -n 1 "$one" > "$out/$exp-trace.csv"
  tail -n +2 "$one" >> "$out/$exp-trace.csv"
  unset T
  declare -gA T
  # Paths in start and file hold no comma here (tools/lab refuses such
  # a work directory), so a plain split is the CSV's.
  eval "$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[i] = $i; next }
                   NR == 2 { for (i = 1; i <= NF; i++)
                               if ($i ~ /^[-0-9.a-z]*$/)
                                 printf "T[%s]=%s\n", h[i], $i }' "$one")"
  [ -n "${T[busy_fraction]:-}" ]
}

# A run's plugin arguments as its plots name its set-up: no image
# (file=), a table file (table=+FILE) by its cipher.
lab_setup_of ()  # lab_setup_of PLUGIN-ARGS...
{
  local a words=()
  for a in "$@"; do
    case $a in
      file=*|trace=*) ;;
      table=+*) a=$(awk '{ print $4; exit }' "${a#table=+}" 2> /dev/null)
                [ -z "$a" ] || words+=("$a") ;;
      *) words+=("$a") ;;
    esac
  done
  echo "${words[*]}"
}

# The device's busy time as a percentage of the run, and whether the
# host limited the run (below BUSY_LIMIT).
# NA, and not limited, when the run has no summary.
lab_busy_pct ()
{
  awk -v f="${T[busy_fraction]:-NA}" \
    'BEGIN { if (f == "NA") print f; else printf "%.1f", 100 * f }'
}
lab_host_limited ()
{
  awk -v f="${T[busy_fraction]:-NA}" -v l=$BUSY_LIMIT \
    'BEGIN { exit !(f != "NA" && 100 * f < l) }'
}

# Ends the progress line of a run with its figures (TEXT).
lab_result ()  # lab_result TEXT
{
  local mark=
  lab_host_limited && mark=", host-limited"
  echo "$1, busy $(lab_busy_pct) %$mark (${run_wall_s} s)"
}

# lab_result for a run whose device may idle by the model's design (a
# read waiting in a plugged queue): LIMITED, from lab_client_gap_pct,
# is device, model or host.
lab_result_by ()  # lab_result_by TEXT LIMITED
{
  local mark=
  case $2 in
    host) mark=", host-limited" ;;
    model) mark=", the modelled path idles the device" ;;
  esac
  echo "$1, busy $(lab_busy_pct) %$mark (${run_wall_s} s)"
}

lab_failed ()  # lab_failed WHY
{
  local f
  lab_failures=$((lab_failures + 1))
  echo "FAILED: $1"
  for f in "$work/run.log" "$work/analysis.log" "$@"; do
    [ -s "$f" ] && tail -n 5 "$f" | sed 's/^/    | /'
  done
  return 0
}

# Appends a CSV row of the arguments (none may hold a comma).
lab_row () { local IFS=,; echo "$*" >> "$csv"; }

# A line for the end of the table: targets and what they show.
lab_note () { lab_notes+=("$*"); }

# The line after an experiment's targets: a MISSED target is a finding
# of the model, not an error of the run, and the section of
# docs/scheduling.md on the experiment ("### N. EXP: ...") tells what
# each target shows, or WHAT.
lab_findings_note ()  # lab_findings_note [WHAT]
{
  local section
  section=$(sed -n "s/^### \([0-9]*\. $exp:.*\)/\1/p" \
              "$topdir/docs/scheduling.md" 2> /dev/null | head -n 1)
  lab_note "A MISSED target is a finding of the model, not an error of the\
 run: docs/scheduling.md, \"${section:-The experiments and their latest\
 results}\", ${1:-explains each target and what its miss shows}."
}

# ---- Results ----

# Prints the CSV as a table and keeps it in $out/$exp.txt, headed by
# TITLE, the date, the machine and the load, and followed by the
# notes.  SPEC: "column:heading:format" per column shown, the format a
# printf one or "busy" (the value, with * when below BUSY_LIMIT).
lab_table ()  # lab_table TITLE SPEC...
{
  local title=$1 txt=$out/$exp.txt n
  shift
  {
    echo "$title"
    echo "$(date -u '+%F %H:%M UTC'), $(nproc) CPUs, load average" \
         "$lab_load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at" \
         "the end; git $(git -C "$topdir" describe --always --dirty \
         2>/dev/null || echo -); $((SECONDS - lab_start_s)) s"
    echo
    awk -F, -v spec="$*" -v limit=$BUSY_LIMIT '
      function cell(v, f) {
        if (v == "" || v == "NA") return "-"
        if (f == "busy") return sprintf("%.1f%s", v, v + 0 < limit ? "*" : "")
        return sprintf(f, v) }
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i
                nc = split(spec, s, " ")
                for (c = 1; c <= nc; c++) {
                  split(s[c], p, ":"); key[c] = p[1]; fmt[c] = p[3]
                  cells[0, c] = p[2]; gsub(/_/, " ", cells[0, c])
                  if (!(p[1] in col)) { print "no column " p[1] > "/dev/stderr"; exit 1 } }
                next }
      { for (c = 1; c <= nc; c++) {
          cells[NR - 1, c] = cell($col[key[c]], fmt[c])
          if (fmt[c] == "busy" && $col[key[c]] != "" && $col[key[c]] + 0 < limit) marked = 1 }
        rows = NR - 1 }
      END {
        for (c = 1; c <= nc; c++)
          for (r = 0; r <= rows; r++)
            if (length(cells[r, c]) > w[c]) w[c] = length(cells[r, c])
        for (r = 0; r <= rows; r++) {
          line = ""
          for (c = 1; c <= nc; c++)
            line = line sprintf(c == 1 ? "%-*s" : "  %*s", w[c], cells[r, c])
          print line }
        if (marked)
          printf "\n* device busy below %d %%: the host, not the device, limited the run\n", limit
      }' "$csv"
    if [ ${#lab_notes[@]} -gt 0 ]; then
      echo
      printf '%s\n' "${lab_notes[@]}"
    fi
    [ $lab_failures -eq 0 ] || echo "$lab_failures run(s) FAILED: their rows hold NA"
  } > "$txt"
  echo
  cat "$txt"
}

# A bar chart of the CSV by tools/bench-plot.gp: one cluster per value
# of CLUSTER, one bar per value of SERIES, the height VALUE (column
# names); only rows where the awk condition WHERE holds, in which
# v("column") is the row's value of a column.  A series with no value
# in any cluster is left out (no legend entry for it); a bar whose row
# the host limited (lab_bars_host) is hatched and starred.
# $out/$exp-NAME.png, its data in .dat: per series its value, min, max
# (the value) and host_limited (1 or 0).
lab_bars ()  # lab_bars NAME TITLE YLABEL[:log] CLUSTER SERIES VALUE [WHERE]
{
  local name=$exp-$1 ylabel=${3%:log} logy=0 dat counts
  [[ $3 == *:log ]] && logy=1
  dat=$out/$name.dat
  counts=$(awk -F, -v cf="$4" -v sf="$5" -v vf="$6" -v dat="$dat" \
             -v limit=$BUSY_LIMIT "$(lab_bars_host)"'
    function v(name) { return $col[name] }
    function keep() { return '"${7:-1}"' }
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    { if (!keep()) next
      c = $col[cf]; s = $col[sf]; x = $col[vf]
      if (!(c in sc)) { sc[c] = 1; cl[++ncl] = c }
      if (x == "" || x == "NA") next
      if (!(s in ss)) { ss[s] = 1; se[++nse] = s }
      val[c, s] = x; host[c, s] = host_limited() }
    END {
      if (nse == 0) exit 1
      printf "cluster" > dat
      for (j = 1; j <= nse; j++) printf " %s min max host_limited", se[j] > dat
      printf "\n" > dat
      for (k = 1; k <= ncl; k++) {
        printf "%s", cl[k] > dat
        for (j = 1; j <= nse; j++) {
          x = ((cl[k], se[j]) in val) ? val[cl[k], se[j]] : "NA"
          h = ((cl[k], se[j]) in host) ? host[cl[k], se[j]] : 0
          marked += h
          printf " %s %s %s %d", x, x, x, h > dat }
        printf "\n" > dat }
      print nse, marked + 0 }' "$csv") \
    || { echo "lab: $name: no data to draw" >&2; return 1; }
  [ "$have_gnuplot" = 1 ] || return 0
  gnuplot -e "data='$dat'; out='$out/$name.png'" \
    -e "title=$(lab_gp_string "$2"); ylabel=$(lab_gp_string "$ylabel")" \
    -e "logy=$logy; nseries=${counts% *}; marked=1; nmarked=${counts#* }" \
    "$topdir/tools/bench-plot.gp" 2> "$work/gnuplot.log" \
    || { echo "lab: gnuplot failed for $name:" >&2
         cat "$work/gnuplot.log" >&2; return 1; }
}

# The awk function host_limited() of lab_bars: the row's run was
# limited by the host, as its table marks it -- limited_by "host" where
# the CSV has that column (an experiment's own verdict, or
# dmcrypt-trace's), else busy_pct below BUSY_LIMIT (awk's limit).
lab_bars_host ()
{
  cat <<'EOA'
    function host_limited(  b) {
      if ("limited_by" in col) return $col["limited_by"] == "host"
      if (!("busy_pct" in col)) return 0
      b = $col["busy_pct"]
      return b != "" && b != "NA" && b + 0 < limit }
EOA
}

# TEXT as a gnuplot string in double quotes: backslashes and quotes
# escaped, its lines (TEXT's own, and breaks between words to keep each
# within WIDTH characters, default 100: a longer line, centred over a
# plot beside its legend, is cut off at the canvas' edge) joined by \n.
lab_gp_string ()  # lab_gp_string TEXT [WIDTH]
{
  printf '%s\n' "$1" | awk -v w="${2:-100}" '
    function flush() { if (len) out = out (out == "" ? "" : "\\n") line
                       line = ""; len = 0 }
    { gsub(/\t/, " ")
      n = split($0, word, / +/)
      for (i = 1; i <= n; i++) {
        if (word[i] == "") continue
        if (len && len + 1 + length(word[i]) > w) flush()
        x = word[i]; gsub(/\\/, "&&", x); gsub(/"/, "\\\\&", x)
        line = line (len ? " " : "") x
        len += (len ? 1 : 0) + length(word[i]) }
      flush() }
    END { printf "\"%s\"\n", out }'
}

# The experiment's exit status: non-zero when a run failed.
lab_end ()
{
  echo "lab: $exp: $lab_runs runs in $((SECONDS - lab_start_s)) s;" \
       "$out/$exp.txt, $exp.csv, $exp-trace.csv$( [ "$have_gnuplot" = 1 ] \
       && echo ", $exp-*.png")"
  [ $lab_failures -eq 0 ]
}

# ---- The sequential write of experiments reorder and policies ----

# A source of BYTES random bytes and a preallocated image as large, with
# a plain aes-xts-plain64 table over it: the write lands in allocated
# tmpfs pages in every run alike.
lab_seq_setup ()  # lab_seq_setup BYTES
{
  seq_bytes=$1
  lab_random_file "$work/source.bin" "$seq_bytes"
  fallocate -l "$seq_bytes" "$work/image.img" 2>/dev/null \
    || lab_random_file "$work/image.img" "$seq_bytes"
  lab_table_file "$work/table" "$seq_bytes" aes-xts-plain64 512
}

# One client stream copies the source onto the export as dd or cp
# would, 64 requests in flight on one connection; sets seq_mb_s (over
# the trace's span, model time), seq_pct (dispatches that started where
# the previous one ended) and seq_dispatches, or NA after a failure.
lab_seq_write ()  # lab_seq_write LABEL PLUGIN-ARGS...
{
  local label=$1
  shift
  seq_mb_s=NA seq_pct=NA seq_dispatches=NA
  lab_run "$label" $(( 60 + seq_bytes / 2000000 )) \
    file="$work/image.img" table=+"$work/table" "$@" -- \
    "nbdcopy --connections=1 --requests=64 $(printf %q "$work/source.bin") \"\$uri\"" \
    || return 1
  seq_mb_s=$(awk -v v="${T[write_mb_s]:-0}" 'BEGIN { printf "%.1f", v }')
  seq_pct=$(awk -v v="${T[write_sequential]:-0}" 'BEGIN { printf "%.1f", 100 * v }')
  seq_dispatches=${T[write_dispatches]:-0}
  lab_result "$seq_mb_s MB/s, $seq_pct % sequential"
}

# The sector-over-time plot of the last run (dmcrypt-trace --png),
# titled with the experiment, the run's id, label and RESULT (its
# figures) and on a second line its set-up; dmcrypt-trace adds the
# device's busy time, HOST-LIMITED below 95 %.  Its events as CSV, and
# whether the host limited it ("BUSY-% host|device"), for
# lab_sector_zoom.
lab_sector_plot ()  # lab_sector_plot NAME [RESULT]
{
  local title
  [ "$have_gnuplot" = 1 ] || return 0
  title="$exp, run $run_id: $run_label${2:+: $2}"
  title+=$'\n'"$run_setup"
  echo "$(lab_busy_pct) $(lab_host_limited && echo host || echo device)" \
    > "$work/$1.limited"
  "$trace_tool" --png "$out/$exp-$1.png" --title "$title" \
    --csv "$work/$1.events.csv" "$run_trace" > /dev/null 2> "$work/png.log" \
    || { echo "lab: no $exp-$1.png:" >&2; cat "$work/png.log" >&2; return 1; }
}

# The first SECONDS of several runs' dispatches in one plot, each a line
# from dispatch to dispatch (the order the device saw them); the runs
# by the names they were given to lab_sector_plot, LABEL:NAME, each
# named LABEL in the legend, HOST-LIMITED where the host limited it.
# A run without dispatches in the window has no line and no entry.
lab_sector_zoom ()  # lab_sector_zoom NAME TITLE SECONDS LABEL:NAME...
{
  local name=$exp-$1 title=$2 secs=$3 plots= p dat key busy limited
  shift 3
  [ "$have_gnuplot" = 1 ] || return 0
  for p in "$@"; do
    dat=$work/${p#*:}.zoom
    # From the run's first dispatch: a server slow to start (a busy
    # machine, at a fast model clock) must not leave the window empty.
    awk -F, -v s="$secs" '$2 != "D" { next }
      t0 == "" { t0 = $1 }
      $1 - t0 <= s { print ($1 - t0) * 1000, $4 / 2048 }' \
      "$work/${p#*:}.events.csv" > "$dat" 2>/dev/null
    [ -s "$dat" ] || continue
    key=${p%%:*} busy= limited=
    read -r busy limited < "$work/${p#*:}.limited" 2> /dev/null
    [ "$limited" != host ] || key+=", HOST-LIMITED (busy $busy %)"
    plots+="${plots:+, }'$dat' using 1:2 with linespoints pt 7 ps 0.6"
    plots+=" title $(lab_gp_string "$key")"
  done
  [ -n "$plots" ] || return 0
  {
    lab_gnuplot_png "$out/$name.png" 1100 600
    cat <<EOG
set title $(lab_gp_string "$title")
set key outside right top vertical
set grid
set xlabel 'model time from the first dispatch (ms)'
set ylabel 'offset dispatched (MiB)'
plot $plots
EOG
  } > "$work/zoom.gp"
  lab_gnuplot_run "$name" "$work/zoom.gp"
}

# ---- Runs one IO at a time, and the events of a trace ----

# The part of a reader's run (one read at a time) between a read's
# completion and the next read's queueing, in %: the client's and the
# NBD transport's turn-around, which the host, not the model, decides.
# NA without two reads.
lab_client_gap_pct ()  # lab_client_gap_pct TRACE
{
  awk '$6 == "Q" && $7 ~ /R/ { if (c != "") gap += $4 - c
                               if (q0 == "") q0 = $4
                               c = ""; next }
       $6 == "C" && $7 ~ /R/ { c = $4; last = $4 }
       END { if (q0 == "" || last <= q0) print "NA"
             else printf "%.1f\n", 100 * gap / (last - q0) }' "$1"
}

# The part of a run, in %, that no device model charged: the time from
# a dispatch (D) to its completion (C) beyond LIMIT seconds, more than
# the model's slowest IO takes, which only a completion the host
# noticed late makes (dmcrypt-trace's busy time counts it as busy).
lab_late_pct ()  # lab_late_pct TRACE LIMIT-S
{
  awk -v lim="$2" '$6 == "Q" && q0 == "" { q0 = $4 }
    $6 == "D" && $9 == "+" { d[$8] = $4 }
    $6 == "C" && $9 == "+" && ($8 in d) {
      x = $4 - d[$8]; delete d[$8]
      if (x > lim + 0) late += x - lim
      last = $4 }
    END { if (q0 == "" || last <= q0) print "NA"
          else printf "%.1f\n", 100 * late / (last - q0) }' "$1"
}

# The gnuplot terminal lines every lab plot starts with.
lab_gnuplot_png ()  # lab_gnuplot_png OUT WIDTH HEIGHT
{
  cat <<EOG
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size $2,$3 noenhanced font "sans,10"
} else {
  set terminal png size $2,$3 noenhanced
}
set output '$1'
EOG
}

lab_gnuplot_run ()  # lab_gnuplot_run NAME SCRIPT
{
  gnuplot "$2" 2> "$work/gnuplot.log" \
    || { echo "lab: gnuplot failed for $1:" >&2
         cat "$work/gnuplot.log" >&2; return 1; }
}

# The D events of the run traced in TRACE as sector against model time
# (s from the run's start), the whole run or FROM to TO (s); drawn as
# points, each dispatch one: "$out/$exp-NAME.png".  An empty window
# says so in its title.
lab_sector_scatter ()  # lab_sector_scatter NAME TITLE TRACE [FROM TO]
{
  local name=$exp-$1 dat=$work/$1.scatter title=$2 plot
  [ "$have_gnuplot" = 1 ] || return 0
  awk -v from="${4:-}" -v to="${5:-}" '$6 == "D" && $9 == "+" \
      && (from == "" || ($4 >= from + 0 && $4 <= to + 0)) {
        print $4, $8, $10 }' "$3" > "$dat"
  if [ -s "$dat" ]; then
    plot="'$dat' using 1:2 with points pt 7 ps 0.5 lc rgb '#1f5fa8' notitle"
  else
    title+=" (no dispatch in this window)"
    plot="NaN notitle"
  fi
  {
    lab_gnuplot_png "$out/$name.png" 1100 600
    cat <<EOG
set title $(lab_gp_string "$title")
set grid
set xlabel 'model time from the run start (s)'
set ylabel 'sector dispatched (512 B)'
set format y '%.0f'
set lmargin 13
plot $plot
EOG
  } > "$work/scatter.gp"
  lab_gnuplot_run "$name" "$work/scatter.gp"
}

# One-at-a-time reads of several runs, a panel each: their Q, P, U, UT,
# D and C events as lanes against model time, over five reads (from the
# run's tenth read, or its first when it has fewer than 14).  PANEL is
# TRACE|TITLE.  "$out/$exp-NAME.png".
lab_event_lanes ()  # lab_event_lanes NAME TITLE PANEL...
{
  local name=$exp-$1 title=$2 p i=0 n
  [ "$have_gnuplot" = 1 ] || return 0
  shift 2
  n=$#
  {
    lab_gnuplot_png "$out/$name.png" 1100 $((170 * n + 60))
    cat <<EOG
set multiplot layout $n,1 title $(lab_gp_string "$title")
set yrange [0.5:6.5]
set ytics ("C" 1, "D" 2, "UT" 3, "U" 4, "P" 5, "Q" 6)
set grid xtics
unset key
set xlabel 'model time from the first read shown (ms)'
EOG
    for p in "$@"; do
      i=$((i + 1))
      lab_event_window "${p%%|*}" > "$work/lanes-$i.dat"
      echo "set title $(lab_gp_string "${p#*|}")"
      if [ -s "$work/lanes-$i.dat" ]; then
        echo "plot '$work/lanes-$i.dat' using 1:2 with points pt 7 ps 0.9"
      else
        echo "plot NaN"
      fi
    done
    echo "unset multiplot"
  } > "$work/lanes.gp"
  lab_gnuplot_run "$name" "$work/lanes.gp"
}

# "ms lane" of each read's event in the window of lab_event_lanes.
lab_event_window ()  # lab_event_window TRACE
{
  awk 'BEGIN { lane["Q"] = 6; lane["P"] = 5; lane["U"] = 4; lane["UT"] = 3
               lane["D"] = 2; lane["C"] = 1 }
       !($6 in lane) || $4 !~ /^[0-9.]+$/ { next }
       $7 ~ /W|F/ { next }
       { t[++n] = $4; a[n] = $6
         if ($6 == "Q") q[++nq] = n
         if ($6 == "C") c[++nc] = n }
       END { first = nq >= 14 ? 10 : 1; last = first + 4
             if (nq < first) exit
             if (last > nc) last = nc
             t0 = t[q[first]]; t1 = last >= first ? t[c[last]] : t[n]
             for (i = 1; i <= n; i++)
               if (t[i] >= t0 && t[i] <= t1)
                 printf "%.3f %d\n", (t[i] - t0) * 1000, lane[a[i]] }' "$1"
}

# A CSV line of the arguments, as lab_row but to stdout.
lab_csv_line () { local IFS=,; echo "$*"; }
