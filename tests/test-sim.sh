#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The simulated device under the engine (device=hdd|usb|ssd|...): what is
# written through it reaches the image exactly once with the right
# bytes (checked by the independent oracle), and its trace keeps the
# block queue's and the device's limits: never more than nr-requests
# requests queued, never more IOs at the device than its queue depth;
# every write chunk queued at the engine (Q) enters the block queue
# once (I or M), and every request the device starts (D) completes (C).
# The quick run writes 8 MiB through each device and setting, the full
# run (DMCRYPT_TEST_FULL=1) 24 MiB.
# front-end: none
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
analyser_built_or_fail
requires_oracle
requires_cmd nbdkit nbdcopy
scratch
cd "$tmp" || fail "cd $tmp"

truncate -s 64M img
key=$(random_hex 64)
table="0 131072 crypt aes-xts-plain64 $key 0 x 0"
printf '%s\n' "$table" > table.txt
if full_run; then
  mib=24
  echo "full run: ${mib} MiB per device and setting"
else
  mib=8
  echo "quick run: ${mib} MiB per device and setting; DMCRYPT_TEST_FULL=1 for 24"
fi
random_file data.bin $((mib << 20))

# field NAME: the summary CSV's column NAME for the last run.
field ()
{
  "$PY" - "$1" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open("summary.csv")))
print(rows[-1][sys.argv[1]])
PYEOF
}

# check TITLE QUEUE_MAX DEVICE_MAX plugin-args...
check ()
{
  local title=$1 qmax=$2 dmax=$3 got; shift 3
  rm -f trace summary.csv
  timeout 300 nbdkit -U - "$plugin" file=img table=+table.txt trace=trace \
    "$@" --run 'nbdcopy --connections=1 --requests=64 \
                  --request-size=${request_size:-262144} data.bin "$uri" &&
                nbdcopy --connections=2 "$uri" out.bin' \
    || fail "$title: the server failed"
  oracle decrypt img plain.bin --table "$table" --length $((mib << 20)) \
    || fail "oracle"
  cmp -s -n $((mib << 20)) data.bin plain.bin \
    || fail "$title: the image does not hold what was written"
  cmp -s -n $((mib << 20)) data.bin out.bin \
    || fail "$title: reading back through the device differs"
  "$analyser" --summary-csv summary.csv trace > report.txt \
    || fail "$title: the analyser refused the trace"
  got=$(field queue_requests_max)
  [ "$got" -le "$qmax" ] || fail "$title: $got requests queued, limit $qmax"
  got=$(field device_requests_max)
  [ "$got" -le "$dmax" ] || fail "$title: $got IOs at the device, depth $dmax"
  # Sectors, not events: a bio beyond 1280 KiB enters as pieces.
  awk '$6 == "Q" && $7 == "W" { q += $10 }
       ($6 == "I" || $6 == "M") && $7 == "W" { im += $10 }
       $6 == "D" { d++ } $6 == "C" { c++ }
       END { if (q != im || d != c || q == 0) { print "Q", q, "I+M", im, "D", d, "C", c; exit 1 } }' \
    trace || fail "$title: events do not pair up"
  echo "ok: $title: $(grep -m1 'device busy:' report.txt | sed 's/^ *//')," \
    "$(field bios_dispatched) bios in $(field requests_dispatched) requests"
}

check "usb, none (depth 1)" 1 1 device=usb device-speed=50
check "usb, deadline, nr-requests 64" 64 1 device=usb device-speed=50 \
  elevator=deadline nr-requests=64 scheduler=fifo workers=4
# The mitigation of 2015: a 4096-deep queue, with the ciphertext in
# flight allowed to fill it (4096 requests of 128 KiB: 512 MiB).
check "usb, deadline, nr-requests 4096, max-inflight 512M" 4096 1 \
  device=usb device-speed=50 elevator=deadline nr-requests=4096 \
  max-inflight=512M
awk '$6 == "D" && $10 > 240 { big++ } END { exit big > 0 }' trace \
  || fail "usb: a request larger than usb-storage's 120 KiB reached the stick"
echo "ok: the stick takes requests of at most 120 KiB"
check "hdd, none (NCQ 32)" 32 32 device=hdd device-speed=20
check "hdd, deadline (2 x 32)" 64 32 device=hdd device-speed=20 \
  elevator=deadline
check "ssd, none" 32 32 device=ssd device-speed=2
# 4 MiB chunks: the block layer splits them at 1280 KiB.
request_size=4194304 check "hdd, 4 MiB chunks" 32 32 device=hdd \
  device-speed=20 max-write-size=4M max-read-size=4M
awk '$6 == "D" && $10 > 2560 { big++ } $6 == "D" && $10 == 2560 { full++ }
     END { exit !(big == 0 && full > 0) }' trace \
  || fail "4 MiB chunks: a request larger than 1280 KiB reached the device"
echo "ok: 4 MiB chunks reach the device in pieces of at most 1280 KiB"
check "ssd with params from a file" 32 32 device=ssd \
  device-params=+<(printf 'channels=2\nread-latency=100us\n')
# The single request queue: 128 sync and 128 async requests, batchers
# up to 3/2 of each; CFQ (3.16), and deadline with 2.6.32's plug.
check "usb, kernel=3.16 (cfq)" 384 1 device=usb device-speed=50 kernel=3.16 \
  workers=4
check "hdd, kernel=2.6.32 (deadline, plugged)" 384 32 device=hdd \
  device-speed=20 kernel=2.6.32 elevator-params=fifo_batch=8
check "hdd, kernel=2.6.32, cfq" 384 32 device=hdd device-speed=20 \
  kernel=2.6.32 elevator=cfq elevator-params=quantum=8,slice_idle=0
# Under kernel= the export name says what NBD cannot: "cpu=1,sync"
# makes the connection's writes REQ_SYNC (blktrace's WS at the engine,
# in the block queue and at the device), each submitted by kcryptd/1
# (3.16's per-CPU kcryptd, CPU 1 in the trace); a CPU the lab does not
# model refuses the connection, naming the export name.
rm -f trace
timeout 300 nbdkit -U - "$plugin" file=img table=+table.txt trace=trace \
  device=usb device-speed=50 kernel=3.16 workers=2 \
  --run 'nbdcopy data.bin "$(echo "$uri" | sed "s|://[/]*?|:///cpu=1,sync?|")" &&
         ! nbdcopy data.bin "$(echo "$uri" | sed "s|://[/]*?|:///cpu=2?|")" \
           2>/dev/null' \
  2> err.txt || { cat err.txt; fail "export names: the server failed"; }
grep -q "export name: cpu=2: the lab models CPUs 0 to 1" err.txt \
  || { cat err.txt; fail "cpu=2 not refused by its export name"; }
awk '($6 == "Q" || $6 == "I" || $6 == "D") && $7 ~ /W/ {
       n[$6]++; if ($7 != "WS") bad++; if ($6 == "I" && $2 != 1) cpu++ }
     END { if (bad || cpu || !n["Q"] || !n["I"] || !n["D"]) {
             print "writes not WS:", bad + 0, "I not on CPU 1:", cpu + 0
             exit 1 } }' trace \
  || fail "export name cpu=1,sync: the writes are not sync from CPU 1"
echo "ok: export name cpu=1,sync: every write WS, queued from CPU 1"

# The RAID cards hold up to 246 commands and reorder them (their disks'
# tagged queues): the data still lands once, in order of no matter.
check "x25e-raid10" 246 246 device=x25e-raid10 device-speed=2
check "sas15k-raid10, 4 KiB stripe" 246 246 device=sas15k-raid10 \
  device-speed=20 device-params=stripe=4KiB

# The lab's parameters without a device, or wrong, are refused in one
# line.  (Under settings a suite forces, elevator= alone has a device.)
refusals=("device=floppy" "device=usb device-params=au=3parsecs"
          "device=hdd device-speed=0" "device=ssd nr-requests=0"
          "device=hdd elevator=cfq" "device=hdd elevator=fifo"
          "device=hdd kernel=3.16 elevator-params=quantum8=1"
          "device=hdd kernel=3.16 elevator-params=quantum=0"
          "device=ssd kernel=6.1 elevator=deadline elevator-params=slice_idle=3")
[ -z "${DMCRYPT_TEST_PARAMS:-}" ] && refusals+=("elevator=deadline")
for args in "${refusals[@]}"; do
  # shellcheck disable=SC2086
  if nbdkit -U - "$plugin" file=img table=+table.txt $args --run true \
       2>err.txt; then
    fail "accepted: $args"
  fi
  [ "$(grep -c . err.txt)" -eq 1 ] || { cat err.txt; fail "not one line: $args"; }
  echo "ok: refused $args -- $(cat err.txt)"
done
echo PASS
