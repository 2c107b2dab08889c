#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make lab's driver, tools/lab, on tiny sizes and a fast model clock:
# every experiment must run each of its runs, print a progress line per
# run and its table, and write its CSV (the columns below, a number in
# every figure), its trace summaries (a row per run, the busy fraction
# of each) and, with gnuplot, its PNG plots.  Speeds are not judged:
# at these sizes the host limits every run.  The quick run writes 4 MiB
# per run and times 0.1 s, and its randread experiment measures five
# systems, one of each kind of plugin arguments (raw, the two ciphers,
# same-cpu-crypt, caller-crypt=0); the full run (DMCRYPT_TEST_FULL=1)
# writes 8 MiB and times 0.3 s, and measures all eight.
# The seeds experiment's rows must all be there, each with a figure or
# the reason it has none (a run skipped for parameters the plugin does
# not take, with nbdkit's one line).  After the targets of reorder,
# randread, starvation and seeds, a line says that a MISSED target is a
# finding and names a section of docs/scheduling.md.  The plots, read in
# what gnuplot was told (gnuplot_recorder): each sector plot titled with
# its run's id and set-up and HOST-LIMITED where its CSV row says the
# host limited it, with no legend entry for reads in a run of writes;
# the zoom's legend marks the host-limited runs; each bar chart's data
# holds exactly its CSV's figures, no series without one, and marks the
# bars of the host-limited rows.
# front-end: none
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy fio openssl numfmt
[ -z "${DMCRYPT_SANITIZER:-}" ] \
  || skip "the lab times a simulated device; under $DMCRYPT_SANITIZER the" \
          "host is too slow for its runs to mean anything"
fio --enghelp=nbd >/dev/null 2>&1 || skip "fio has no nbd engine"
plugin_built_or_fail
analyser_built_or_fail
for t in seeker writeback; do
  [ -x "$topdir/tools/$t" ] || fail "tools/$t is not built: run make first"
done
scratch
command -v gnuplot > /dev/null && gnuplot_recorder "$tmp/gp"

lab=$topdir/tools/lab

# Bad requests are refused before any run.
"$lab" nosuch > "$tmp/bad.out" 2>&1 && fail "an unknown experiment ran"
grep -q "no experiment 'nosuch'; there are: reorder randread starvation policies seeds" \
  "$tmp/bad.out" || { cat "$tmp/bad.out"; fail "no list of the experiments"; }
LAB_SPEEDUP=fast "$lab" policies > "$tmp/bad.out" 2>&1 \
  && fail "LAB_SPEEDUP=fast was accepted"
grep -q 'LAB_SPEEDUP must be a positive number' "$tmp/bad.out" \
  || fail "no reason for refusing LAB_SPEEDUP"
# Through a file: grep -q would leave tools/lab writing into a closed
# pipe, which pipefail reports.
"$lab" --list > "$tmp/list" || fail "tools/lab --list failed"
for e in policies seeds; do
  grep -q "^  $e " "$tmp/list" || fail "--list lacks $e"
done

if full_run; then
  size=8M seconds=0.3 randread_systems=
  randread_runs=48
  echo "full run: $size per run, $seconds s timed"
else
  size=4M seconds=0.1
  randread_systems="raw aes-cbc-essiv aes-xts same-cpu-crypt caller-crypt=0"
  randread_runs=30
  echo "quick run: $size per run, $seconds s timed, randread on" \
       "$randread_systems; DMCRYPT_TEST_FULL=1 for 8M, 0.3 s and all systems"
fi
start=$SECONDS
LAB_OUT="$tmp/out" LAB_WORKDIR="$tmp" LAB_SIZE=$size LAB_SECONDS=$seconds \
  LAB_RANDREAD_SYSTEMS=$randread_systems \
  LAB_SPEEDUP=10 timeout 600 "$lab" > "$tmp/stdout" 2>&1
rc=$?
cat "$tmp/stdout"
echo "tools/lab took $((SECONDS - start)) s"
[ $rc -eq 0 ] || fail "tools/lab exited with $rc"
ls -d "$tmp"/dmcrypt-lab.* 2>/dev/null && fail "work directory left behind"

policies=$(nbdkit "$plugin" --dump-plugin | sed -n 's/^dmcrypt_schedulers=//p')
[ -n "$policies" ] || fail "the plugin lists no schedulers"
npolicies=$(wc -w <<< "$policies")

# experiment, runs, CSV header, table headings (| between them).
expect=(
  "reorder 54 run,model,device_speed,scheduler,workers,nr_requests,elevator,setup,mib,mb_s,seq_pct,dispatches,busy_pct,limited_by,wall_s write-out|workers|nr-requests|elevator|MB/s|seq %|dispatches|busy %"
  "randread $randread_runs run,model,device_speed,system,test,setup,iops,mean_ms,p50_ms,p99_ms,vs_raw,device_depth,busy_pct,limited_by,wall_s model|test|system|IOPS|x raw|mean ms|p99 ms|depth|busy %"
  "starvation 8 run,model,device_speed,max_write_size,elevator,setup,reads,read_p50_ms,read_p99_ms,read_max_ms,write_mb_s,busy_pct,limited_by,wall_s model|elevator|max-write-size|read p50 ms|read p99 ms|write MB/s|busy %"
  "policies $npolicies run,model,device_speed,scheduler,mib,mb_s,seq_pct,dispatches,busy_pct,limited_by,wall_s model|policy|MB/s|seq %|busy %"
)
# Columns that hold a number in every row (seeker has no percentiles).
figures_of ()
{
  case $1 in
    reorder|policies) echo device_speed mb_s seq_pct dispatches busy_pct ;;
    randread) echo device_speed iops mean_ms vs_raw device_depth busy_pct ;;
    starvation) echo device_speed reads read_p50_ms read_p99_ms busy_pct ;;
  esac
}
number='^[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?$'

# seeds: a row per published figure, in order; a run per row and
# control, each with a figure or the reason it has none; the run ids
# those of the trace summaries; targets and the plots of what ran.
check_seeds ()
{
  local csv=$tmp/out/seeds.csv runs=$tmp/out/seeds-runs.csv ran n bad
  expect_equal "seeds.csv header" \
    "seed,case,published,lab,unit,ratio,mechanism,control,mechanism_off,off_factor,control2,mechanism_off2,off2_factor,busy_pct,host_pct,limited_by,run,control_run,control2_run,note,control3,mechanism_off3,off3_factor,control4,mechanism_off4,off4_factor,control3_run,control4_run" \
    "$(head -n 1 "$csv")"
  expect_equal "seeds rows" "001 one-cpu 170 MB/s
001 4cpu-nr128 20 MB/s
001 4cpu-nr4096 56 MB/s
001 linux-4.0 144 MB/s
002 x25e-raw 3320 seeks/s
002 x25e-dmcrypt 99 seeks/s
002 sas-raw 257 seeks/s
002 sas-dmcrypt 85 seeks/s" "$(awk -F, 'NR > 1 { print $1, $2, $3, $5 }' "$csv")"
  bad=$(awk -F, -v re="$number" 'NR > 1 && !($4 ~ re || ($4 == "NA" \
          && $20 ~ /skipped: /)) { print NR ": " $0; exit }' "$csv")
  [ -z "$bad" ] || fail "seeds.csv: no figure and no reason at line $bad"
  expect_equal "seeds-runs.csv header" \
    "run,key,seed,device,device_speed,setup,figure,unit,busy_pct,host_pct,limited_by,wall_s,note" \
    "$(head -n 1 "$runs")"
  [ "$(( $(wc -l < "$runs") - 1 ))" -eq 19 ] || fail "seeds-runs.csv: not 19 runs"
  bad=$(awk -F, -v re="$number" 'NR > 1 && !(($1 != "" && $7 ~ re \
          && $9 ~ re) || ($1 == "" && $13 ~ /^skipped: /)) {
          print NR ": " $0; exit }' "$runs")
  [ -z "$bad" ] || fail "seeds-runs.csv: a run without figures or reason at line $bad"
  ran=$(awk -F, 'NR > 1 && $1 != "" { print $1 }' "$runs")
  n=$(wc -w <<< "$ran")
  if [ "$n" -gt 0 ]; then
    expect_equal "seeds run ids" "$ran" \
      "$(cut -d, -f1 "$tmp/out/seeds-trace.csv" | tail -n +2 | sed 's/\.trace$//')"
    grep -q -E "^\[$n/$n\] seeds: " "$tmp/stdout" \
      || fail "no progress line for seeds' last run"
  fi
  for h in "x pub" control off "control 2" "control 4" limited; do
    grep -q -F -- "$h" "$tmp/out/seeds.txt" || fail "seeds.txt lacks '$h'"
  done
  grep -q '^target 001/4cpu-nr128' "$tmp/out/seeds.txt" \
    || fail "seeds.txt reports no targets"
  grep -q '^what-if w-spread (kernel=3.16 ' "$tmp/out/seeds.txt" \
    || fail "seeds.txt reports no what-if"
  grep -q 'is a finding of the model, not an error' "$tmp/out/seeds.txt" \
    || fail "seeds.txt does not say what a miss means"
  seeds_pngs="seeds-001-figures seeds-002-figures"
  grep -q '^seeds-[0-9]*,w-4cpu,' "$runs" \
    && seeds_pngs+=" seeds-2015-4cpu-nr128 seeds-2015-4cpu-nr128-fsync"
  grep -q '^seeds-[0-9]*,w-spread,' "$runs" \
    && seeds_pngs+=" seeds-2015-whatif-spread-fsync"
  grep -q '^seeds-[0-9]*,r-x25e-' "$runs" \
    && seeds_pngs+=" seeds-2010-x25e-events"
  echo "ok: seeds: 8 rows, 19 runs ($n run, $((19 - n)) skipped)"
  # The bars of seed 001 marked as their own runs: the lab's as its row,
  # the control's as the control's run.
  "$PY" - "$tmp/out" <<'PYEOF' || fail "seeds-001-figures.dat: above"
import csv, sys
out = sys.argv[1]
lim = {r["run"]: r["limited_by"]
       for r in csv.DictReader(open(out + "/seeds-runs.csv"))}
rows = [r for r in csv.DictReader(open(out + "/seeds.csv"))
        if r["seed"] == "001"]
dat = {l.split()[0]: l.split() for l in open(out + "/seeds-001-figures.dat")}
for r in rows:
    got = dat[r["case"]]
    want_lab = str(int(r["limited_by"] == "host"))
    want_off = str(int(lim.get(r["control_run"], "") == "host"))
    if got[8] != want_lab or (r["control"] and got[12] != want_off):
        sys.exit("%s: marks %s %s, not %s %s"
                 % (r["case"], got[8], got[12], want_lab, want_off))
PYEOF
}

# FIELD of EXP's first CSV row that has each COLUMN=VALUE.
csv_value ()  # csv_value EXP FIELD [COLUMN=VALUE...]
{
  local exp=$1 field=$2
  shift 2
  awk -F, -v f="$field" -v want="$*" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
              n = split(want, w, " "); next }
    { for (k = 1; k <= n; k++) { split(w[k], p, "="); if ($c[p[1]] != p[2]) next }
      print $c[f]; exit }' "$tmp/out/$exp.csv"
}

# A sector plot's title: the run's id and LABEL, its SETUP, HOST-LIMITED
# as its row's limited_by (the row that has each COLUMN=VALUE); its
# legend: writes only.
check_sector_title ()  # check_sector_title PNG LABEL SETUP COLUMN=VALUE...
{
  local png=$1 label=$2 setup=$3 exp=${1%%-*} id limited title
  shift 3
  id=$(csv_value "$exp" run "$@") limited=$(csv_value "$exp" limited_by "$@")
  [ -n "$id" ] || fail "$png: no row with $*"
  # Its lines joined: a long one is broken between words.
  title=$(gnuplot_title "$tmp/out/$png.png" | tr '\n' ' ')
  [[ $title == "$exp, run $id: $label: "*" $setup device busy "* ]] \
    || fail "$png's title: $title"
  if [ "$limited" = host ]; then
    [[ $title == *"HOST-LIMITED"* ]] || fail "$png is not marked host-limited"
  else
    [[ $title != *"HOST-LIMITED"* ]] || fail "$png is marked host-limited"
  fi
  [ "$(gnuplot_keys "$tmp/out/$png.png")" = write ] \
    || fail "$png's legend: $(gnuplot_keys "$tmp/out/$png.png")"
}

# The sector plots of reorder and policies, and reorder's zoom.
check_sector_plots ()
{
  local v sched speed row want=
  speed=$(csv_value reorder device_speed)
  for v in fifo sorted submit-from-crypt-cpus; do
    sched=scheduler=$v
    [ $v != submit-from-crypt-cpus ] || sched=$v=true
    row=("scheduler=$v" workers=4 nr_requests=default elevator=none)
    check_sector_title "reorder-$v-sectors" \
      "$v, 4 worker(s), nr-requests default, elevator none" \
      "aes-xts-plain64 device=usb device-speed=$speed workers=4 elevator=none $sched" \
      "${row[@]}"
    want+=$v
    [ "$(csv_value reorder limited_by "${row[@]}")" != host ] \
      || want+=", HOST-LIMITED (busy $(csv_value reorder busy_pct "${row[@]}") %)"
    want+=$'\n'
  done
  expect_equal "the zoom's legend" "${want%$'\n'}" \
    "$(gnuplot_keys "$tmp/out/reorder-sectors-zoom.png")"
  speed=$(csv_value policies device_speed)
  for v in $policies; do
    check_sector_title "policies-usb-$v-sectors" "usb, scheduler=$v" \
      "aes-xts-plain64 device=usb device-speed=$speed workers=4 scheduler=$v" \
      "scheduler=$v"
  done
  echo "ok: sector plots titled with their runs' set-ups, marked as their rows"
}

# Each bar chart's data against its CSV, by an implementation of its
# own: clusters in the order of their rows, the series that have a
# figure in the order of their first, each figure as the CSV has it,
# host_limited 1 where limited_by is host (busy_pct below 95 without
# that column).
check_bars ()
{
  local b
  for b in "reorder-throughput reorder setup scheduler mb_s" \
           "reorder-sequential reorder setup scheduler seq_pct" \
           "randread-ratio randread setup system vs_raw" \
           "randread-ssd randread test system iops model=ssd" \
           "randread-hdd randread test system iops model=hdd" \
           "starvation-p99 starvation setup max_write_size read_p99_ms" \
           "starvation-writer starvation setup max_write_size write_mb_s" \
           "policies-throughput policies model scheduler mb_s"; do
    # shellcheck disable=SC2086
    "$PY" - "$tmp/out" $b <<'PYEOF' || fail "bar chart $b: above"
import csv, sys
out, name, exp, cf, sf, vf = sys.argv[1:7]
where = sys.argv[7].split("=") if len(sys.argv) > 7 else None
rows = [r for r in csv.DictReader(open("%s/%s.csv" % (out, exp)))
        if not where or r[where[0]] == where[1]]
def host(r):
    if "limited_by" in r:
        return int(r["limited_by"] == "host")
    b = r.get("busy_pct", "NA")
    return int(b not in ("", "NA") and float(b) < 95)
clusters, series, val = [], [], {}
for r in rows:
    if r[cf] not in clusters:
        clusters.append(r[cf])
    if r[vf] in ("", "NA"):
        continue
    if r[sf] not in series:
        series.append(r[sf])
    val[r[cf], r[sf]] = (r[vf], host(r))
want = [["cluster"] + sum([[s, "min", "max", "host_limited"]
                           for s in series], [])]
for c in clusters:
    line = [c]
    for s in series:
        v, h = val.get((c, s), ("NA", 0))
        line += [v, v, v, str(h)]
    want.append(line)
got = [l.split() for l in open("%s/%s.dat" % (out, name))]
if got != want:
    sys.exit("%s.dat:\n%s\nnot\n%s" % (name, "\n".join(map(" ".join, got)),
                                       "\n".join(map(" ".join, want))))
PYEOF
  done
  echo "ok: 8 bar charts hold their CSVs' figures and host-limited marks"
}

for e in "${expect[@]}"; do
  read -r exp runs header headings <<< "$e"
  csv=$tmp/out/$exp.csv
  [ -s "$csv" ] || fail "no $exp.csv"
  expect_equal "$exp.csv header" "$header" "$(head -n 1 "$csv")"
  [ $(( $(wc -l < "$csv") - 1 )) -eq "$runs" ] \
    || fail "$exp.csv has $(( $(wc -l < "$csv") - 1 )) rows, not $runs"
  for c in $(figures_of "$exp"); do
    bad=$(awk -F, -v c="$c" -v re="$number" '
      NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
      !k || $k !~ re { print NR ": " $0; exit }' "$csv")
    [ -z "$bad" ] || fail "$exp.csv: no number in $c at line $bad"
  done
  # The run ids are the trace summaries' trace column, one row each.
  summary=$tmp/out/$exp-trace.csv
  [ -s "$summary" ] || fail "no $exp-trace.csv"
  head -n 1 "$summary" | grep -q '^trace,run,.*,busy_fraction,limited_by,' \
    || fail "$exp-trace.csv is not dmcrypt-trace's summary"
  expect_equal "$exp run ids" "$(cut -d, -f1 "$csv" | tail -n +2)" \
    "$(cut -d, -f1 "$summary" | tail -n +2 | sed 's/\.trace$//')"
  # The table, printed and kept: its headings, a row per run.
  txt=$tmp/out/$exp.txt
  [ -s "$txt" ] || fail "no $exp.txt"
  IFS='|' read -r -a hs <<< "$headings"
  for h in "${hs[@]}"; do
    grep -q -F -- "$h" "$txt" || fail "$exp.txt lacks the heading '$h'"
  done
  grep -q -F "Experiment $exp:" "$tmp/stdout" || fail "$exp's table not printed"
  grep -q -E "^\[1/$runs\] $exp: .*busy [0-9.]+ %" "$tmp/stdout" \
    || fail "no progress line for $exp's first run"
  grep -q -E "^\[$runs/$runs\] $exp: " "$tmp/stdout" \
    || fail "no progress line for $exp's last run"
  echo "ok: $exp: $runs runs, CSV, trace summaries and table"
done
grep -q '^target sorted >= 2.5x fifo' "$tmp/out/reorder.txt" \
  || fail "reorder.txt reports no targets"
check_seeds

# The line after the targets, and the section it names.
for exp in reorder randread starvation seeds; do
  line=$(grep 'A MISSED target is a finding' "$tmp/out/$exp.txt") \
    || fail "$exp.txt does not say what a miss means"
  [ "$(wc -l <<< "$line")" -eq 1 ] || fail "$exp.txt says it more than once"
  section=$(sed -n 's/.*docs\/scheduling.md, "\([^"]*\)".*/\1/p' <<< "$line")
  [ -n "$section" ] && grep -E '^#+ ' "$topdir/docs/scheduling.md" \
    | grep -q -F -- "$section" \
    || fail "$exp.txt names no section of docs/scheduling.md: $line"
  [ "$(grep -n -F -- "$line" "$tmp/out/$exp.txt" | cut -d: -f1)" -gt \
    "$(grep -n '^target' "$tmp/out/$exp.txt" | tail -n 1 | cut -d: -f1)" ] \
    || fail "$exp.txt: the line comes before a target"
done
echo "ok: reorder, randread, starvation and seeds say what a miss means"

if ! command -v gnuplot >/dev/null; then
  echo "gnuplot is not installed: the PNG plots are not checked"
else
  pngs="reorder-throughput reorder-sequential reorder-fifo-sectors
        reorder-sorted-sectors reorder-submit-from-crypt-cpus-sectors
        reorder-sectors-zoom
        randread-ratio randread-ssd randread-hdd
        starvation-p99 starvation-writer policies-throughput"
  for p in $policies; do pngs+=" policies-usb-$p-sectors"; done
  pngs+=" $seeds_pngs"
  for png in $pngs; do
    f=$tmp/out/$png.png
    [ -s "$f" ] || fail "no $png.png"
    [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
      || fail "$png.png is not a PNG"
  done
  echo "ok: $(wc -w <<< "$pngs") PNG plots"
  check_sector_plots
  check_bars
fi
echo PASS
