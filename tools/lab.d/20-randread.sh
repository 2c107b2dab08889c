# SPDX-License-Identifier: GPL-2.0-or-later
# Experiment: random reads, encrypted vs raw, on the ssd and hdd models: ciphers and workqueue flags
#
# In 2010 seeker (random 512-byte reads, one at a time) gave 3320 seeks/s
# raw and 99 through dm-crypt on an SSD RAID10 (0.03x), 257 and 85 on
# 15k rpm SAS (0.33x): every read went through one kcryptd workqueue.
# Here: seeker, and fio's nbd engine with 4 KiB reads at queue depth 1
# and 32, on one image per model, unencrypted (cipher_null through the
# same engine, as make bench's dmcrypt-null) and encrypted with
# aes-cbc-essiv:sha256 and aes-xts-plain64, the latter with each
# workqueue flag and with caller-crypt=0 (every chunk to the workers,
# the kernel's way).  The image is as large as the hdd model's disk.

# device-speed per model: the host's turn-around per read must stay
# small beside the device's time, or the device idles (busy < 95 %; at
# queue depth 32, the device's mean depth drops).
declare -A randread_speed=([ssd]=0.01 [hdd]=2)
randread_models="ssd hdd"
randread_systems="raw aes-cbc-essiv aes-xts same-cpu-crypt"
randread_systems+=" submit-from-crypt-cpus no-read-workqueue"
randread_systems+=" no-write-workqueue caller-crypt=0"
# LAB_RANDREAD_SYSTEMS="raw aes-xts ..." measures those only.
randread_systems=${LAB_RANDREAD_SYSTEMS:-$randread_systems}

experiment ()
{
  local tests=seeker model
  secs=$(lab_seconds 5 1)
  if fio --enghelp=nbd > /dev/null 2>&1; then
    tests+=" fio-qd1 fio-qd32"
  else
    echo "fio has no nbd engine here: seeker only"
  fi
  lab_disk_image
  lab_table_file "$work/raw" $disk_bytes cipher_null-ecb 0
  lab_table_file "$work/essiv" $disk_bytes aes-cbc-essiv:sha256 256
  lab_table_file "$work/xts" $disk_bytes aes-xts-plain64 512
  # QD32 reaches the engine only with as many nbdkit threads (16 by
  # default).
  NBDKIT_OPTS=(--threads 32)
  echo "$secs s per run; a $((disk_bytes / 1000000000)) GB sparse image"
  lab_begin "$(lab_matrix_size "$randread_models" "$tests" \
                 "$randread_systems")" \
    "run,model,device_speed,system,test,setup,iops,mean_ms,p50_ms,p99_ms,vs_raw,device_depth,busy_pct,limited_by,wall_s"
  lab_matrix randread_run "$randread_models" "$tests" "$randread_systems"
  randread_ratios
  randread_targets
  lab_findings_note
  lab_table "Experiment randread: random reads for $secs s per run (wall);\
 seeker 512 B, fio 4 KiB; device-speed ssd ${randread_speed[ssd]},\
 hdd ${randread_speed[hdd]};
IOPS (seeks/s for seeker) and latencies in model time; x raw = IOPS over\
 the raw (cipher_null) run's; depth = the device's mean queue depth" \
    model:model:%s test:test:%s system:system:%s iops:IOPS:%.0f \
    vs_raw:x_raw:%.2f mean_ms:mean_ms:%.3f p50_ms:p50_ms:%.3f \
    p99_ms:p99_ms:%.3f device_depth:depth:%.1f busy_pct:busy_%:busy
  lab_bars ratio "Random reads: encrypted over raw (cipher_null) IOPS" \
    "x raw" setup system vs_raw
  for model in $randread_models; do
    lab_bars "$model" "Random reads on the $model model" \
      "IOPS, model time (log scale):log" test system iops \
      "v(\"model\") == \"$model\""
  done
  lab_end
}

# The plugin's arguments of SYSTEM into system_args.
randread_args ()  # randread_args SYSTEM
{
  case $1 in
    raw) system_args=(table=+"$work/raw") ;;
    aes-cbc-essiv) system_args=(table=+"$work/essiv") ;;
    aes-xts) system_args=(table=+"$work/xts") ;;
    caller-crypt=0) system_args=(table=+"$work/xts" caller-crypt=false) ;;
    *) system_args=(table=+"$work/xts" "$1=true") ;;
  esac
}

# One run of TEST for SYSTEM on MODEL, for secs seconds.
randread_run ()  # randread_run MODEL TEST SYSTEM
{
  local model=$1 t=$2 s=$3 speed client figures system_args
  local iops=NA mean=NA p50=NA p99=NA
  speed=$(lab_speed "${randread_speed[$model]}")
  case $t in
    seeker)
      client="$(printf '%q ' "$seeker" -q -s 1 -t "$secs")"
      client+="\"\$uri\" > $(printf %q "$work/client.out")" ;;
    fio-qd*)
      client="$(printf '%q ' fio --ioengine=nbd --name=randread \
                  --rw=randread --bs=4k --iodepth="${t#fio-qd}" \
                  --time_based --runtime="$(awk -v s="$secs" \
                    'BEGIN { printf "%d", s * 1000 }')ms" \
                  --norandommap --output-format=json \
                  --output="$work/client.out")"
      client+='--uri="$uri"' ;;
  esac
  rm -f "$work/client.out"
  randread_args "$s"
  if lab_run "$model, $t, $s" "$(lab_timeout "$secs")" \
       file="$work/disk.img" "${system_args[@]}" device="$model" \
       device-speed="$speed" -- "$client"
  then
    if figures=$(randread_figures "$t" "$work/client.out" "$speed"); then
      read -r iops mean p50 p99 <<< "$figures"
      lab_result "$(printf '%.0f IOPS, mean %.3f ms' "$iops" "$mean")"
    else
      lab_failed "no figures from $t" "$work/client.out"
    fi
  fi
  lab_row "$run_id" "$model" "$speed" "$s" "$t" "$model/$t" "$iops" \
    "$mean" "$p50" "$p99" NA "${T[device_requests_mean]:-NA}" \
    "$(lab_busy_pct)" "${T[limited_by]:-NA}" "$run_wall_s"
}

# "IOPS mean p50 p99" in model time from the client's output (seeker
# reports no percentiles: NA).
randread_figures ()  # randread_figures TEST OUTPUT SPEED
{
  "$PY" - "$@" <<'EOF'
import json, re, sys
test, path, speed = sys.argv[1], sys.argv[2], float(sys.argv[3])
text = open(path).read()
if test == "seeker":
    m = re.search(r"^Results: ([0-9.]+) seeks/second, ([0-9.]+) ms", text, re.M)
    if not m:
        sys.exit("no Results line")
    print(float(m.group(1)) / speed, float(m.group(2)) * speed, "NA NA")
else:
    job = json.loads(text)["jobs"][0]
    rd = job["read"]
    if job["error"] or rd["total_ios"] == 0:
        sys.exit("fio job failed")
    ms = lambda ns: ns / 1e6 * speed
    pc = rd["clat_ns"]["percentile"]
    print(rd["iops"] / speed, ms(rd["clat_ns"]["mean"]),
          ms(pc["50.000000"]), ms(pc["99.000000"]))
EOF
}

# vs_raw: each run's IOPS over the raw run's of the same model and test.
randread_ratios ()
{
  awk -F, -v OFS=, '
    NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) col[$i] = i
                else if ($col["system"] == "raw") raw[$col["setup"]] = $col["iops"]
                next }
    FNR > 1 { r = raw[$col["setup"]]
              $col["vs_raw"] = ($col["iops"] == "NA" || r == "" || r == "NA" || r == 0) \
                ? "NA" : sprintf("%.3f", $col["iops"] / r) }
    { print }' "$csv" "$csv" > "$work/ratios.csv" && mv "$work/ratios.csv" "$csv"
}

# Target: encrypted >= 0.9x raw on both models (every cipher, flag and
# test), over the runs that the device limited, as their raw run: a
# ratio to or of a host-limited run says nothing of the engine.
randread_targets ()
{
  local model
  for model in $randread_models; do
    lab_note "$(awk -F, -v m="$model" -v limit=$BUSY_LIMIT '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $col["model"] != m { next }
      { host = $col["busy_pct"] == "NA" || $col["busy_pct"] + 0 < limit }
      $col["system"] == "raw" { raw_host[$col["test"]] = host; next }
      { v = $col["vs_raw"]
        if (v == "NA") { missing++; next }
        if (host || raw_host[$col["test"]]) { left++; next }
        if (n++ == 0 || v + 0 < min) { min = v + 0; at = $col["system"] ", " $col["test"] } }
      END {
        printf "target encrypted >= 0.9x raw on %s: ", m
        if (n == 0) printf "not computed (no device-limited pair)"
        else printf "lowest %.2fx (%s), %s", min, at, (min >= 0.9 ? "met" : "MISSED")
        if (left) printf "; %d host-limited run(s) left out", left
        if (missing) printf "; %d run(s) failed", missing }' "$csv")"
  done
}
