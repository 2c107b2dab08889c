# SPDX-License-Identifier: GPL-2.0-or-later
# Experiment: every write-out policy the plugin lists, on reorder's stream (the template)
#
# The template experiment: copy it to tools/lab.d/NN-NAME.sh, change the
# settings below and "tools/lab NAME" runs it (docs/scheduling.md, "Adding
# an experiment").  As it stands it runs experiment reorder's set-up (one
# sequential stream, nbdcopy with 64 requests in flight) once per
# write-out policy that "nbdkit PLUGIN --dump-plugin" lists in
# dmcrypt_schedulers= -- a policy added to the engine shows up here by
# itself -- on each model of policy_models.

# ---- Settings ----

# Models and their device-speed (busy >= 95 % at the full size here).
policy_models=${LAB_POLICY_MODELS:-usb}
declare -A policy_speed=([usb]=0.5 [hdd]=2 [ssd]=0.1)
# Plugin arguments common to every run (a policy's run adds scheduler=).
policy_args=(workers=4)
# Every policy the plugin has, or those of LAB_POLICIES.
policy_list ()
{
  if [ -n "${LAB_POLICIES:-}" ]; then
    echo "$LAB_POLICIES"
  else
    nbdkit "$plugin" --dump-plugin | sed -n 's/^dmcrypt_schedulers=//p'
  fi
}

# ---- The experiment ----

experiment ()
{
  local policies model speed p
  policies=$(policy_list)
  [ -n "$policies" ] || lab_die "the plugin lists no dmcrypt_schedulers"
  lab_seq_setup "$(lab_size $((1 << 30)) $((128 << 20)))"
  echo "policies: $policies; models: $policy_models;" \
       "$(lab_mib "$seq_bytes") written per run, ${policy_args[*]}"
  lab_begin $(( $(lab_count $policies) * $(lab_count $policy_models) )) \
    "run,model,device_speed,scheduler,mib,mb_s,seq_pct,dispatches,busy_pct,limited_by,wall_s"
  for model in $policy_models; do
    speed=$(lab_speed "${policy_speed[$model]:-1}")
    for p in $policies; do
      lab_seq_write "$model, scheduler=$p" device="$model" \
        device-speed="$speed" "${policy_args[@]}" scheduler="$p"
      lab_row "$run_id" "$model" "$speed" "$p" $((seq_bytes >> 20)) \
        "$seq_mb_s" "$seq_pct" "$seq_dispatches" "$(lab_busy_pct)" \
        "${T[limited_by]:-NA}" "$run_wall_s"
      lab_sector_plot "$model-$p-sectors" \
        "$seq_mb_s MB/s, $seq_pct % sequential"
    done
  done
  lab_table "Experiment policies: $(lab_mib "$seq_bytes") sequential write\
 (nbdcopy --connections=1 --requests=64), ${policy_args[*]};
MB/s of 10^6 bytes in model time; seq % = dispatches that started where the\
 previous one ended" \
    model:model:%s device_speed:device-speed:%s scheduler:policy:%s \
    mb_s:MB/s:%.1f seq_pct:seq_%:%.1f dispatches:dispatches:%d \
    busy_pct:busy_%:busy wall_s:wall_s:%.1f
  lab_bars throughput "Write-out policies: sequential write" \
    "MB/s (model time)" model scheduler mb_s
  lab_end
}
