# SPDX-License-Identifier: GPL-2.0-or-later
# Experiment: the seeds: 2015's USB stick under dd and 2010's seeker on RAID, each published figure against the lab's, with its mechanism switched off
#
# Seed 001 (unix.stackexchange.com question 203677): dd if=random bs=1M
# conv=fsync of 4 GiB onto btrfs on LUKS on a USB 3 stick, Linux 3.16
# with 4 CPUs: ~170 MB/s with one CPU (or unencrypted), ~20 MB/s with
# four (nr_requests 128), ~56 MB/s with nr_requests 4096, 144 MB/s on
# Linux 4.0.2.  Here tools/writeback writes as 3.16's page cache and
# btrfs did, each bio on the connection of the CPU that submitted it,
# fsync's marked sync (WRITE_SYNC) in their connection's export name,
# onto device=usb through kernel=3.16 (a kcryptd per CPU) and 4.0.
#
# Seed 002 (dm-devel, 3 September 2010): seeker's random reads, one at a
# time through the page cache, on 2.6.32-24-server: 3320 seeks/s raw
# and 99 through aes-cbc-essiv:sha256 on a RAID 10 of 4 Intel X25-E, 257
# and 85 on a RAID 10 of 8 Savvio 15K.  Here tools/seeker reads 4 KiB
# (what the page cache read for its 512 bytes) through kernel=2.6.32
# (one kcryptd, one kcryptd_io thread) onto x25e-raid10 and
# sas15k-raid10.
#
# Every row runs with one parameter set per device, none tuned for it;
# its control is the same run with the row's mechanism switched off.
# A run whose parameters the plugin does not take (another branch's
# work not merged yet) is skipped with nbdkit's reason.  seeds.csv
# holds a row per published figure, seeds-runs.csv a row per run.

# ---- Settings ----

# Time scales: usb as experiment reorder (the host keeps up with its
# 120 KiB commands); the RAID arrays at docs/device-models.md's raw
# speeds, and faster for runs through dm-crypt's 2.6.32 read path,
# whose host turn-around per read stays small beside its model time
# (the lab checks: host_pct).  Wall seconds per seeker run, full and
# QUICK.
seeds_usb_speed=0.5
declare -A seeds_speed=([x25e-raid10]=0.005 [sas15k-raid10]=0.1)
declare -A seeds_path_speed=([x25e-raid10]=0.1 [sas15k-raid10]=0.5)
declare -A seeds_raw_secs=([x25e-raid10]="10 4" [sas15k-raid10]="20 5")
declare -A seeds_path_secs=([x25e-raid10]="20 5" [sas15k-raid10]="10 3")
# The arrays' sizes (pairs x drive capacity, device-models.md): reads
# spread over the whole array.
declare -A seeds_disk_bytes=([x25e-raid10]=128000000000
                             [sas15k-raid10]=587200000000)
seeds_read_bytes=4096    # the page the 2.6.32 page cache read for 512 B
# The usb model's slowest write is a merge and a transfer, 14 ms with
# its defaults: a dispatch that took 50 ms was completed late by the
# host (lab_late_pct).
seeds_usb_slowest_s=0.05
seeds_hz=100             # Ubuntu 10.04's -server kernels: CONFIG_HZ_100
# dd's size, and the writer's dirtyable memory twice that (the seed's
# 4 GiB on an 8 GiB machine: tools/pagecache/model.c).
seeds_dd_full=$((4 << 30)) seeds_dd_quick=$((256 << 20))

# The rows, one per published figure: seed, case, published figure,
# unit, the run, its mechanism, then up to four controls, each a run and
# its name.  A baseline has no control.
seeds_rows=()
seeds_row () { seeds_rows+=("$(IFS='|'; echo "$*")"); }
seeds_row 001 one-cpu 170 MB/s w-1cpu \
  "baseline: one CPU and one kcryptd (or no dm-crypt)" "" "" "" ""
seeds_row 001 4cpu-nr128 20 MB/s w-4cpu \
  "a kcryptd per CPU submits what it encrypted; fsync's writes sync in its CFQ queue; close cooperators" \
  w-1cpu "one CPU" w-4cpu-deadline elevator=deadline \
  w-4cpu-fsync-async "fsync's writes async" \
  w-4cpu-nocoop "cooperators off"
seeds_row 001 4cpu-nr4096 56 MB/s w-4096 \
  "4096 requests for the elevator to sort" \
  w-4cpu nr-requests=128 w-4096-deadline elevator=deadline
seeds_row 001 linux-4.0 144 MB/s w-40 "dmcrypt_write sorts the writes" \
  w-40-fifo scheduler=fifo w-4cpu "3.16's submission"
seeds_row 002 x25e-raw 3320 seeks/s r-x25e-raw \
  "baseline: the reader submits and unplugs" "" "" "" ""
seeds_row 002 x25e-dmcrypt 99 seeks/s r-x25e-crypt \
  "kcryptd_io submits after the reader's unplug: the plug timer" \
  r-x25e-hz1000 hz=1000 r-x25e-kio kcryptd-io=false
seeds_row 002 sas-raw 257 seeks/s r-sas-raw \
  "baseline: the reader submits and unplugs" "" "" "" ""
seeds_row 002 sas-dmcrypt 85 seeks/s r-sas-crypt \
  "kcryptd_io submits after the reader's unplug: the plug timer" \
  r-sas-hz1000 hz=1000 r-sas-kio kcryptd-io=false
seeds_header=seed,case,published,lab,unit,ratio,mechanism,control
seeds_header+=,mechanism_off,off_factor,control2,mechanism_off2,off2_factor
seeds_header+=,busy_pct,host_pct,limited_by,run,control_run,control2_run,note
seeds_header+=,control3,mechanism_off3,off3_factor,control4,mechanism_off4
seeds_header+=,off4_factor,control3_run,control4_run
seeds_runs_header=run,key,seed,device,device_speed,setup,figure,unit
seeds_runs_header+=,busy_pct,host_pct,limited_by,wall_s,note
seeds_runs="w-1cpu w-4cpu w-4096 w-40 w-4cpu-deadline w-4096-deadline
            w-40-fifo w-4cpu-fsync-async w-4cpu-nocoop
            r-x25e-raw r-x25e-crypt r-x25e-hz1000 r-x25e-kio
            r-sas-raw r-sas-crypt r-sas-hz1000 r-sas-kio"
# What-ifs, no row's: the 4-CPU run with fsync's bios spread over the
# CPUs (writeback --fsync-spread; 3.16 submitted them from dd's task),
# and the same with them async.  Reported under the table.
seeds_whatifs="w-spread w-spread-async"

# ---- The runs ----

# The plugin's arguments of run KEY into run_args, the device's name
# into run_device and its speed into run_speed.
seeds_args ()  # seeds_args KEY
{
  local k=$1 dev
  case $k in
    w-*)
      run_device=usb run_speed=$(lab_speed $seeds_usb_speed)
      run_args=(file="$work/stick.img" table=+"$work/stick.table"
                device=usb device-speed="$run_speed")
      case $k in
        w-1cpu) run_args+=(kernel=3.16 workers=1 nr-requests=128) ;;
        w-40|w-40-fifo) run_args+=(kernel=4.0 workers=4 nr-requests=128) ;;
        w-4096|w-4096-*) run_args+=(kernel=3.16 workers=4 nr-requests=4096) ;;
        *) run_args+=(kernel=3.16 workers=4 nr-requests=128) ;;
      esac
      case $k in
        *-deadline) run_args+=(elevator=deadline) ;;
        *) run_args+=(elevator=cfq) ;;
      esac
      [ "$k" != w-40-fifo ] || run_args+=(scheduler=fifo)
      [ "$k" != w-4cpu-nocoop ] \
        || run_args+=(elevator-params=close_cooperators=0) ;;
    r-*)
      case $k in r-x25e-*) dev=x25e-raid10 ;; *) dev=sas15k-raid10 ;; esac
      run_device=$dev
      run_args=(file="$work/$dev.img" device="$dev" kernel=2.6.32)
      case $k in
        *-raw) run_args+=(table=+"$work/$dev.null" kcryptd-io=false) ;;
        *-kio) run_args+=(table=+"$work/$dev.essiv" kcryptd-io=false) ;;
        *) run_args+=(table=+"$work/$dev.essiv") ;;
      esac
      case $k in
        *-hz1000) run_args+=(hz=1000) ;;
        *) run_args+=(hz=$seeds_hz) ;;
      esac
      # Raw-like runs at the device's speed, the rest at the path's.
      case $k in
        *-raw|*-kio) run_speed=$(lab_speed "${seeds_speed[$dev]}") ;;
        *) run_speed=$(lab_speed "${seeds_path_speed[$dev]}") ;;
      esac
      run_args+=(device-speed="$run_speed") ;;
  esac
}

# The writer's own options of run KEY: fsync's bios async (the control
# for their sync flag), or spread over the CPUs (a what-if).
seeds_writer_opts ()  # seeds_writer_opts KEY
{
  case $1 in
    *-fsync-async) echo --fsync-async ;;
    w-spread) echo --fsync-spread ;;
    w-spread-async) echo --fsync-spread --fsync-async ;;
  esac
}

# Run KEY's set-up for its progress line, plots and the runs' CSV: its
# arguments, the table's cipher for the table and no image, and the
# writer's own options.
seeds_setup_of ()  # seeds_setup_of KEY
{
  local a
  seeds_args "$1"
  a="$(printf ' %s' "${run_args[@]}") $(seeds_writer_opts "$1")"
  a=$(sed -e 's/ file=[^ ]*//; s/ table=+[^ ]*\.null/ cipher_null/' \
        -e 's/ table=+[^ ]*\.essiv/ aes-cbc-essiv:sha256/' \
        -e 's/ table=+[^ ]*stick\.table/ aes-xts-plain64/' <<< "$a")
  a=${a% }
  echo "${a# }"
}

# Does the plugin take run KEY's arguments?  Else seeds_why holds
# nbdkit's reason.
seeds_probe ()  # seeds_probe KEY
{
  seeds_args "$1"
  seeds_why=$(nbdkit -U - "$plugin" "${run_args[@]}" --run true 2>&1 \
                < /dev/null) && return 0
  seeds_why=$(grep -m 1 'error' <<< "$seeds_why" \
                | sed 's/^nbdkit: error: //')
  [ -n "$seeds_why" ] || seeds_why="the plugin refused the arguments"
  return 1
}

# The images and tables: the stick as large as dd's file, preallocated;
# each array as large as itself, sparse.
seeds_images ()
{
  local dev b
  dd_bytes=$(lab_size $seeds_dd_full $seeds_dd_quick)
  dd_memory=$((2 * dd_bytes))
  fallocate -l "$dd_bytes" "$work/stick.img" 2>/dev/null \
    || lab_random_file "$work/stick.img" "$dd_bytes"
  # LUKS's default in 2015 (cryptsetup 1.6): aes-xts-plain64, 256 bits.
  lab_table_file "$work/stick.table" "$dd_bytes" aes-xts-plain64 256
  for dev in x25e-raid10 sas15k-raid10; do
    b=${seeds_disk_bytes[$dev]}
    truncate -s "$b" "$work/$dev.img" || lab_die "no sparse image"
    lab_table_file "$work/$dev.null" "$b" cipher_null-ecb 0
    lab_table_file "$work/$dev.essiv" "$b" aes-cbc-essiv:sha256 256
  done
}

# Run KEY's figures into the S_* arrays and a row of seeds-runs.csv.
seeds_record ()  # seeds_record KEY SEED FIGURE UNIT HOST-PCT LIMITED NOTE
{
  local k=$1
  S_FIG[$k]=$3 S_RUN[$k]=${run_id:-} S_BUSY[$k]=$(lab_busy_pct)
  S_HOST[$k]=$5 S_LIMITED[$k]=$6
  lab_csv_line "${run_id:-}" "$k" "$2" "$run_device" "$run_speed" \
    "$(seeds_setup_of "$k")" "$3" "$4" "${S_BUSY[$k]}" "$5" "$6" \
    "${run_wall_s:-NA}" "${7//,/;}" >> "$runs_csv"
}

# A write run: tools/writeback's dd, one connection per CPU (workers=).
seeds_write ()  # seeds_write KEY
{
  local k=$1 cpus client fig=NA limited=NA late=NA
  seeds_args "$k"
  cpus=$(printf '%s\n' "${run_args[@]}" | sed -n 's/^workers=//p')
  rm -f "$work/client.out"
  client="$(printf '%q ' "$writeback" --size "$dd_bytes" \
              --memory "$dd_memory" --cpus "${cpus:-1}" --speed "$run_speed" \
              --progress "$(lab_seconds 10 1)" $(seeds_writer_opts "$k"))"
  client+="\"\$uri\" > $(printf %q "$work/client.out")"
  client+=" 2> $(printf %q "$work/client.err")"
  if lab_run "$(seeds_setup_of "$k")" \
       $(( 60 + dd_bytes / 1000000 * 2 )) "${run_args[@]}" -- "$client"; then
    fig=$(sed -n 's/^Results: .* \([0-9.]*\) MB\/s (model time)$/\1/p' \
            "$work/client.out")
    if [ -n "$fig" ]; then
      late=$(lab_late_pct "$run_trace" "$seeds_usb_slowest_s")
      limited=$(seeds_write_limited "$late")
      S_FSYNC[$k]=$(sed -n 's/^fsync: .* from \([0-9.]*\) s$/\1/p' \
                      "$work/client.out")
      lab_result_by "$(printf '%.1f MB/s (dd, model time), late %s %%' \
                         "$fig" "$late")" "$limited"
    else
      fig=NA
      lab_failed "no Results line from writeback" "$work/client.out"
    fi
    { echo "== $run_id: $(seeds_setup_of "$k")"; cat "$work/client.err"
      cat "$work/client.out"; } >> "$out/$exp-progress.txt"
  fi
  seeds_record "$k" 001 "$fig" MB/s "$late" "$limited" ""
}

# A read run: tools/seeker, one 4 KiB read at a time.
seeds_seek ()  # seeds_seek KEY
{
  local k=$1 secs client fig=NA host=NA limited=NA
  seeds_args "$k"
  case $k in
    *-raw|*-kio) read -r -a secs <<< "${seeds_raw_secs[$run_device]}" ;;
    *) read -r -a secs <<< "${seeds_path_secs[$run_device]}" ;;
  esac
  secs=$(lab_seconds "${secs[0]}" "${secs[1]}")
  rm -f "$work/client.out"
  client="$(printf '%q ' "$seeker" -q -s 1 -t "$secs" \
              -b "$seeds_read_bytes")\"\$uri\""
  client+=" > $(printf %q "$work/client.out")"
  if lab_run "$(seeds_setup_of "$k")" "$(lab_timeout "$secs")" \
       "${run_args[@]}" -- "$client"; then
    fig=$(awk -v s="$run_speed" '/ reads in [0-9.]+ s$/ {
            printf "%.2f", $1 / $4 / s }' "$work/client.out")
    if [ -n "$fig" ]; then
      host=$(lab_client_gap_pct "$run_trace")
      limited=$(seeds_limited "$host")
      lab_result_by "$(printf '%.1f seeks/s, host turn-around %s %%' "$fig" \
                         "$host")" "$limited"
    else
      fig=NA
      lab_failed "no figures from seeker" "$work/client.out"
    fi
  fi
  seeds_record "$k" 002 "$fig" seeks/s "$host" "$limited" ""
}

# What limited a writer's run: the host when the device idled or
# completions came late (over 1 % of the run), else the device.
seeds_write_limited ()  # seeds_write_limited LATE-PCT
{
  if lab_host_limited \
     || awk -v l="$1" 'BEGIN { exit !(l == "NA" || l + 0 > 1) }'; then
    echo host
  else echo device
  fi
}

# What limited a reader's run: the device (busy), the modelled path that
# keeps it idle (the host's turn-around small), or the host.
seeds_limited ()  # seeds_limited HOST-PCT
{
  if ! lab_host_limited; then echo device
  elif awk -v h="$1" 'BEGIN { exit !(h != "NA" && h + 0 <= 5) }'; then
    echo model
  else echo host
  fi
}

# ---- The experiment ----

experiment ()
{
  local k runnable=() skipped=0
  writeback=$topdir/tools/writeback
  [ -x "$writeback" ] || make -s -C "$topdir" tools/writeback > /dev/null \
    || lab_die "cannot build tools/writeback"
  declare -gA S_FIG S_RUN S_BUSY S_HOST S_LIMITED S_FSYNC S_WHY
  seeds_images
  for k in $seeds_runs $seeds_whatifs; do
    if seeds_probe "$k"; then runnable+=("$k")
    else
      S_WHY[$k]=$seeds_why skipped=$((skipped + 1))
      echo "seeds: $k skipped: $seeds_why"
    fi
  done
  echo "dd of $(lab_mib "$dd_bytes") with $(lab_mib "$dd_memory") of" \
       "memory; ${#runnable[@]} runs, $skipped skipped"
  lab_begin "${#runnable[@]}" "$seeds_header"
  runs_csv=$out/$exp-runs.csv
  echo "$seeds_runs_header" > "$runs_csv"
  rm -f "$out/$exp-progress.txt"
  for k in $seeds_runs $seeds_whatifs; do
    if [ -n "${S_WHY[$k]:-}" ]; then
      run_id= run_wall_s=NA
      seeds_args "$k"
      unset T; declare -gA T
      seeds_record "$k" "$(seeds_seed_of "$k")" NA "$(seeds_unit_of "$k")" \
        NA NA "skipped: ${S_WHY[$k]}"
    elif [[ $k == w-* ]]; then seeds_write "$k"
    else seeds_seek "$k"
    fi
  done
  seeds_table_rows
  seeds_targets
  seeds_whatif_notes
  seeds_excerpt
  lab_table "Experiment seeds: the published figures of seeds 001 (dd of\
 $(lab_mib "$dd_bytes") onto device=usb) and 002 (seeker, 4 KiB reads at\
 queue depth 1, on x25e-raid10 and sas15k-raid10), in model time;
x pub = lab / published; off = the same run with the row's mechanism\
 switched off (its control), x = off / lab; host % = dd: completions the\
 host noticed late, seeker: its turn-around; limited: device (busy >= 95 %),\
 model (the modelled path idles the device), host" \
    seed:seed:%s case:case:%s published:published:%s lab:lab:%.1f \
    unit:unit:%s ratio:x_pub:%.2f control:control:%s \
    mechanism_off:off:%.1f off_factor:x:%.2f control2:control_2:%s \
    mechanism_off2:off_2:%.1f off2_factor:x_2:%.2f control3:control_3:%s \
    mechanism_off3:off_3:%.1f off3_factor:x_3:%.2f control4:control_4:%s \
    mechanism_off4:off_4:%.1f off4_factor:x_4:%.2f busy_pct:busy_%:%.1f \
    host_pct:host_%:%.1f limited_by:limited:%s
  seeds_plots
  lab_end
}

seeds_seed_of () { case $1 in w-*) echo 001 ;; *) echo 002 ;; esac; }
seeds_unit_of () { case $1 in w-*) echo MB/s ;; *) echo seeks/s ;; esac; }

# ---- The rows, their targets, the plots ----

# A / B to 2 decimals, or NA.
seeds_div () { awk -v a="$1" -v b="$2" 'BEGIN {
  if (a == "NA" || b == "NA" || a == "" || b == "" || b + 0 == 0) print "NA"
  else printf "%.3f", a / b }'; }

# Why row's runs RUN... have no figure: the first skipped or failed one.
seeds_note ()  # seeds_note RUN...
{
  local k
  for k in "$@"; do
    [ -n "$k" ] || continue
    if [ -n "${S_WHY[$k]:-}" ]; then
      echo "$k skipped: ${S_WHY[$k]//,/;}"; return
    elif [ "${S_FIG[$k]:-NA}" = NA ]; then
      echo "$k failed"; return
    fi
  done
}

# A control's three cells: its name, its figure and its factor over
# the row's LAB (empty for no control).
seeds_control_cells ()  # seeds_control_cells RUN NAME LAB
{
  local off=NA
  [ -z "$1" ] || off=${S_FIG[$1]:-NA}
  printf '%s\n%s\n%s\n' "$2" "$( [ -n "$1" ] && echo "$off")" \
    "$(seeds_div "$off" "$3")"
}

# seeds.csv: a row per published figure, from the runs' figures.
seeds_table_rows ()
{
  local r seed case pub unit run mech c1 n1 c2 n2 c3 n3 c4 n4 lab
  local -a k1 k2 k3 k4
  for r in "${seeds_rows[@]}"; do
    IFS='|' read -r seed case pub unit run mech c1 n1 c2 n2 c3 n3 c4 n4 \
      <<< "$r"
    lab=${S_FIG[$run]:-NA}
    mapfile -t k1 < <(seeds_control_cells "$c1" "$n1" "$lab")
    mapfile -t k2 < <(seeds_control_cells "$c2" "$n2" "$lab")
    mapfile -t k3 < <(seeds_control_cells "$c3" "$n3" "$lab")
    mapfile -t k4 < <(seeds_control_cells "$c4" "$n4" "$lab")
    lab_row "$seed" "$case" "$pub" "$lab" "$unit" "$(seeds_div "$lab" "$pub")" \
      "$mech" "${k1[@]}" "${k2[@]}" "${S_BUSY[$run]:-NA}" \
      "${S_HOST[$run]:-NA}" "${S_LIMITED[$run]:-NA}" "${S_RUN[$run]:-}" \
      "${c1:+${S_RUN[$c1]:-}}" "${c2:+${S_RUN[$c2]:-}}" \
      "$(seeds_note "$run" "$c1" "$c2" "$c3" "$c4")" "${k3[@]}" "${k4[@]}" \
      "${c3:+${S_RUN[$c3]:-}}" "${c4:+${S_RUN[$c4]:-}}"
  done
}

# The what-ifs' figures, under the table: no row's, and no target.
seeds_whatif_notes ()
{
  local k fig
  for k in $seeds_whatifs; do
    fig=$(awk -v f="${S_FIG[$k]:-NA}" 'BEGIN { if (f == "NA") print f
            else printf "%.1f", f }')
    lab_note "what-if $k ($(seeds_setup_of "$k" | sed 's/.*kernel=/kernel=/')):" \
      "$fig MB/s, $(seeds_div "${S_FIG[$k]:-NA}" "${S_FIG[w-4cpu]:-NA}")x" \
      "the 4cpu-nr128 run${S_WHY[$k]:+ (skipped: ${S_WHY[$k]})}"
  done
}

# The targets, reported under the table: each row within 25 % of its
# published figure, each control changing its row at least twofold.
seeds_targets ()
{
  local line
  while IFS= read -r line; do lab_note "$line"; done < <(awk -F, '
    function verdict(ok) { return ok ? "met" : "MISSED" }
    function factor(f) { return f + 0 >= 1 ? f + 0 : 1 / f }
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { row = $c["seed"] "/" $c["case"]
      if ($c["lab"] == "NA") {
        printf "target %s: not measured (%s)\n", row, $c["note"]; next }
      r = $c["ratio"] + 0
      printf "target %s within 25 %% of %s %s: %.1f, %.2fx, %s\n", row,
        $c["published"], $c["unit"], $c["lab"], r,
        verdict(r >= 0.75 && r <= 1.25)
      for (k = 1; k <= 4; k++) {
        s = k == 1 ? "" : k
        n = $c["control" s]
        f = $c["off" s "_factor"]
        if (n == "") continue
        if (f == "NA") { printf "  control %s: not measured\n", n; continue }
        printf "  control %s twofold: %.1f %s, %.2fx, %s\n", n,
          $c["mechanism_off" s], $c["unit"], f, verdict(factor(f) >= 2)
      } }' "$csv")
  lab_findings_note "says what each row's mechanism reproduces and what it\
 refutes"
}

# The trace of run KEY, and its first Q's time (s from the run start).
seeds_trace () { echo "$lab_traces/${S_RUN[$1]}.trace"; }
seeds_first_q ()  # seeds_first_q KEY
{
  awk '$6 == "Q" { print $4; exit }' "$(seeds_trace "$1")"
}

# The plot title of run KEY: its set-up and figure, marked when the
# host limited it.
seeds_title ()  # seeds_title KEY TEXT
{
  local mark=
  [ "${S_LIMITED[$1]:-}" = host ] && mark=" (HOST-LIMITED)"
  echo "$2: $(seeds_setup_of "$1")$mark"
}

# The bars: published, lab and control figures of each seed's rows.
seeds_bars ()
{
  local csv=$work/bars.csv
  # Each bar marked as its own run: the row's, or its first control's
  # (the runs' limited_by, from seeds-runs.csv).
  awk -F, -v OFS=, '
    FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i
               if (FILENAME ~ /-runs\.csv$/) runs = 1
               else { runs = 0; print "seed,case,series,value,limited_by" }
               next }
    runs { lim[$c["run"]] = $c["limited_by"]; next }
    { print $c["seed"], $c["case"], "published", $c["published"], ""
      print $c["seed"], $c["case"], "lab", $c["lab"], $c["limited_by"]
      print $c["seed"], $c["case"], "control",
        ($c["control"] == "" ? "NA" : $c["mechanism_off"]),
        lim[$c["control_run"]] }' \
    "$out/$exp-runs.csv" "$out/$exp.csv" > "$csv"
  lab_bars 001-figures "Seed 001: dd of $(lab_mib "$dd_bytes") onto the\
 usb stick: published, lab, the first control of each row" \
    "MB/s (model time)" case series value 'v("seed") == "001"'
  lab_bars 002-figures "Seed 002: seeker on the RAID 10 arrays: published,\
 lab, the first control of each row" \
    "seeks/s (model time, log scale):log" case series value \
    'v("seed") == "002"'
}

# Seed 001's sector plots: each row's run whole; the 4-CPU run at 128
# requests on a quarter second in the middle of dd's writing and at the
# start of fsync, where the seed's blktrace excerpt was taken.
seeds_sector_plots ()
{
  local r seed case pub unit run rest q f
  for r in "${seeds_rows[@]}"; do
    IFS='|' read -r seed case pub unit run rest <<< "$r"
    [ "$seed" = 001 ] && [ -n "${S_FSYNC[$run]:-}" ] || continue
    lab_sector_scatter "2015-$case" "$(seeds_title "$run" \
      "Seed 001 $case, $(printf %.1f "${S_FIG[$run]}") MB/s")" \
      "$(seeds_trace "$run")"
  done
  [ -n "${S_FSYNC[w-4cpu]:-}" ] || return 0
  q=$(seeds_first_q w-4cpu) f=${S_FSYNC[w-4cpu]}
  lab_sector_scatter 2015-4cpu-nr128-writing "$(seeds_title w-4cpu \
    "Seed 001 4cpu-nr128, 0.25 s while dd writes")" \
    "$(seeds_trace w-4cpu)" "$(awk -v q="$q" -v f="$f" \
      'BEGIN { print q + f / 2 }')" "$(awk -v q="$q" -v f="$f" \
      'BEGIN { print q + f / 2 + 0.25 }')"
  lab_sector_scatter 2015-4cpu-nr128-fsync "$(seeds_title w-4cpu \
    "Seed 001 4cpu-nr128, the first 0.25 s of fsync")" \
    "$(seeds_trace w-4cpu)" "$(awk -v q="$q" -v f="$f" \
      'BEGIN { print q + f }')" "$(awk -v q="$q" -v f="$f" \
      'BEGIN { print q + f + 0.25 }')"
  [ -n "${S_FSYNC[w-spread]:-}" ] || return 0
  q=$(seeds_first_q w-spread) f=${S_FSYNC[w-spread]}
  lab_sector_scatter 2015-whatif-spread-fsync "$(seeds_title w-spread \
    "What-if, not 3.16: the fsync bios spread over the CPUs, 0.25 s of \
fsync")" "$(seeds_trace w-spread)" "$(awk -v q="$q" -v f="$f" \
      'BEGIN { print q + f }')" "$(awk -v q="$q" -v f="$f" \
      'BEGIN { print q + f + 0.25 }')"
}

# The first D events of fsync in the 4-CPU run, as the seed's excerpt.
seeds_excerpt ()
{
  local q f
  [ -n "${S_FSYNC[w-4cpu]:-}" ] || return 0
  q=$(seeds_first_q w-4cpu) f=${S_FSYNC[w-4cpu]}
  lab_note "The first dispatches of fsync in run ${S_RUN[w-4cpu]}" \
           "(4cpu-nr128), as the seed's blktrace excerpt:"
  while IFS= read -r line; do lab_note "  $line"; done < <(
    awk -v from="$(awk -v q="$q" -v f="$f" 'BEGIN { print q + f }')" '
      $6 == "D" && $9 == "+" && $4 >= from + 0 && n++ < 8 {
        printf "%14.9f  D   %s %d + %d\n", $4, $7, $8, $10 }' \
      "$(seeds_trace w-4cpu)")
}

# Seed 002's events: each array's four runs on five reads.
seeds_lane_plots ()
{
  local dev k panels array
  for dev in x25e sas; do
    panels=() array=x25e-raid10
    [ $dev = x25e ] || array=sas15k-raid10
    for k in raw crypt hz1000 kio; do
      k=r-$dev-$k
      [ -n "${S_RUN[$k]:-}" ] && [ "${S_FIG[$k]}" != NA ] || continue
      panels+=("$(seeds_trace "$k")|$(seeds_title "$k" \
        "$(printf %.0f "${S_FIG[$k]}") seeks/s")")
    done
    [ ${#panels[@]} -gt 0 ] || continue
    lab_event_lanes "2010-$dev-events" "Seed 002 on $array:\
 Q, plug (P), unplug (U), timer unplug (UT), dispatch (D), completion (C)\
 over five reads" "${panels[@]}"
  done
}

seeds_plots ()
{
  [ "$have_gnuplot" = 1 ] || return 0
  seeds_bars
  seeds_sector_plots
  seeds_lane_plots
}
