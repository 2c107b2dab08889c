# SPDX-License-Identifier: GPL-2.0-or-later
# Experiment: a 4 KiB random reader beside a writer of 32 MiB requests: max-write-size 128K vs 64M
#
# dm-crypt splits bios at 128 KiB (its max_write_size and max_read_size
# since Linux 6.11), so that a small read waits behind a few small pieces
# of a huge write, not behind all of it.  Here: fio's nbd engine runs a reader of
# 4 KiB random reads at queue depth 1 and a writer streaming 32 MiB
# requests (queue depth 1) over the first GiB, each on its own
# connection, with the engine splitting writes at 128 KiB (the default)
# or at 64 MiB (not at all), on the hdd and the ssd models, with the
# block queue's elevator none and deadline.  The reader reads the whole
# image, as large as the hdd model's disk.

declare -A starve_speed=([hdd]=1 [ssd]=0.05)
starve_models="hdd ssd"
starve_splits="128K 64M"
starve_elevators="none deadline"
starve_write_bytes=$((32 << 20))
# MB/s of the models' defaults (docs/device-models.md): how long one
# writer request keeps the device, unsplit.
declare -A starve_bandwidth=([hdd]=150 [ssd]=2000)

experiment ()
{
  fio --enghelp=nbd > /dev/null 2>&1 \
    || lab_die "fio has no nbd engine here (the reader and the writer)"
  secs=$(lab_seconds 20 4)
  lab_disk_image
  lab_table_file "$work/table" $disk_bytes aes-xts-plain64 512
  echo "$secs s per run; writer: $(lab_mib $starve_write_bytes) requests"
  lab_begin "$(lab_matrix_size "$starve_models" "$starve_elevators" \
                 "$starve_splits")" \
    "run,model,device_speed,max_write_size,elevator,setup,reads,read_p50_ms,read_p99_ms,read_max_ms,write_mb_s,busy_pct,limited_by,wall_s"
  lab_matrix starve_run "$starve_models" "$starve_elevators" "$starve_splits"
  starve_targets
  lab_findings_note
  lab_table "Experiment starvation: 4 KiB random reads (QD1) beside a writer\
 of $(lab_mib $starve_write_bytes) requests (QD1), $secs s per run (wall);\
 device-speed hdd ${starve_speed[hdd]}, ssd ${starve_speed[ssd]};
the reader's latency (ms) and the writer's MB/s in model time" \
    model:model:%s elevator:elevator:%s max_write_size:max-write-size:%s \
    reads:reads:%d read_p50_ms:read_p50_ms:%.2f \
    read_p99_ms:read_p99_ms:%.2f read_max_ms:read_max_ms:%.2f \
    write_mb_s:write_MB/s:%.1f busy_pct:busy_%:busy
  lab_bars p99 "Reader p99 latency beside a 32 MiB-request writer" \
    "ms, model time (log scale):log" setup max_write_size read_p99_ms
  lab_bars writer "Writer throughput beside the reader" "MB/s (model time)" \
    setup max_write_size write_mb_s
  lab_end
}

# One run on MODEL with ELEVATOR, writes split at MAX-WRITE-SIZE, for
# secs seconds.
starve_run ()  # starve_run MODEL ELEVATOR MAX-WRITE-SIZE
{
  local model=$1 el=$2 mws=$3 speed client figures
  local reads=NA p50=NA p99=NA max=NA wmbs=NA
  speed=$(lab_speed "${starve_speed[$model]}")
  rm -f "$work/client.out"
  # --uri before the first --name: after one it is that job's alone.
  client='fio --ioengine=nbd --uri="$uri" '
  client+="$(printf '%q ' --time_based \
              --runtime="$(awk -v s="$secs" 'BEGIN { printf "%d", s * 1000 }')ms" \
              --output-format=json --output="$work/client.out" \
              --name=reader --rw=randread --bs=4k --iodepth=1 --norandommap \
              --name=writer --rw=write --bs=$starve_write_bytes --size=1g \
              --iodepth=1)"
  if lab_run "$model, elevator $el, max-write-size $mws" \
       "$(lab_timeout "$secs")" file="$work/disk.img" \
       table=+"$work/table" device="$model" device-speed="$speed" \
       elevator="$el" max-write-size="$mws" -- "$client"
  then
    if figures=$(starve_figures "$work/client.out" "$speed"); then
      read -r reads p50 p99 max wmbs <<< "$figures"
      lab_result "$(printf 'reader p50 %.2f ms, p99 %.2f ms; writer %.1f MB/s' \
                    "$p50" "$p99" "$wmbs")"
    else
      lab_failed "no figures from fio" "$work/client.out"
    fi
  fi
  lab_row "$run_id" "$model" "$speed" "$mws" "$el" "$model/$el" "$reads" \
    "$p50" "$p99" "$max" "$wmbs" "$(lab_busy_pct)" "${T[limited_by]:-NA}" \
    "$run_wall_s"
}

# "reads p50 p99 max write-MB/s" in model time from fio's JSON.
starve_figures ()  # starve_figures JSON SPEED
{
  "$PY" - "$@" <<'EOF'
import json, sys
jobs = {j["jobname"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
speed = float(sys.argv[2])
rd, wr = jobs["reader"]["read"], jobs["writer"]["write"]
if jobs["reader"]["error"] or jobs["writer"]["error"] or rd["total_ios"] == 0:
    sys.exit("fio failed")
ms = lambda ns: ns / 1e6 * speed
pc = rd["clat_ns"]["percentile"]
print(rd["total_ios"], ms(pc["50.000000"]), ms(pc["99.000000"]),
      ms(rd["clat_ns"]["max"]), wr["bw_bytes"] / 1e6 / speed)
EOF
}

# Target: the reader's p99 bounded by the split, not by the writer's
# request: below the device time of one writer request with the 128K
# split, and lower than without the split.
starve_targets ()
{
  local model el
  for model in $starve_models; do
    for el in $starve_elevators; do
      lab_note "$(awk -F, -v m="$model" -v e="$el" \
                    -v req="$(awk -v b=$starve_write_bytes \
                      -v r="${starve_bandwidth[$model]}" \
                      'BEGIN { print b / r / 1000 }')" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["model"] == m && $col["elevator"] == e {
          p99[$col["max_write_size"]] = $col["read_p99_ms"] }
        END {
          s = p99["128K"]; u = p99["64M"]
          if (s == "" || u == "" || s == "NA" || u == "NA") {
            printf "target on %s/%s: not computed (a run failed)", m, e; exit }
          printf "target on %s/%s: reader p99 %.1f ms split at 128K, %.1f ms unsplit; one 32 MiB request holds the device %.1f ms: %s", \
            m, e, s, u, req, (s < req && s < u ? "met" : "MISSED") }' "$csv")"
    done
  done
}
