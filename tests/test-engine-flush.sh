#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Flush and FUA ordering, read in the trace, under every write-out path:
# a FUA write's sync reaches the backend after its own ciphertext and
# before the client's next request; a flush's sync comes after every
# write acknowledged before it.  The client issues requests one after
# another, so trace order is reply order.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch

key=$(random_hex 64)
table="0 65536 crypt aes-xts-plain64 $key 0 /dev/null 0"
truncate -s 32M "$tmp/img"

cat > "$tmp/client.py" <<'PYEOF'
import os, sys
import nbd

h = nbd.NBD()
h.connect_uri(sys.argv[1])
MiB = 1 << 20
for k in range(1, 5):           # FUA writes, one at a time
    h.pwrite(os.urandom(65536), k * MiB, nbd.CMD_FLAG_FUA)
data = {}
for i in range(32):             # 32 writes in flight, then a flush
    off = 8 * MiB + i * 65536
    data[off] = os.urandom(65536)
    h.aio_pwrite(data[off], off)
while h.aio_in_flight() > 0:
    h.poll(-1)
h.flush()
for off, d in data.items():
    if h.pread(65536, off) != d:
        sys.exit("FAIL: read after flush differs at %d" % off)
PYEOF

cat > "$tmp/check.py" <<'PYEOF'
import sys

MiB_SECT = 2048
events = []                     # (action, rwbs, sector, nsect)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 10 and f[8] == "+":
        events.append((f[5], f[6], int(f[7]), int(f[9])))
    elif len(f) >= 8:
        events.append((f[5], f[6], None, 0))

def fail(msg):
    sys.exit("FAIL: %s: %s" % (sys.argv[2], msg))

def index(pred, start=0):
    for i in range(start, len(events)):
        if pred(events[i]):
            return i
    return None

def in_range(e, lo, hi):
    return e[2] is not None and lo <= e[2] < hi

# FUA: the last completion of write k, then a sync, before write k+1.
for k in range(1, 5):
    lo, hi = k * MiB_SECT, k * MiB_SECT + 128
    done = max(i for i, e in enumerate(events)
               if e[0] == "C" and e[1] == "W" and in_range(e, lo, hi))
    sync = index(lambda e: e[0] == "D" and e[1] == "FWS", done)
    if sync is None:
        fail("no sync after FUA write %d" % k)
    nxt = index(lambda e: e[0] == "Q" and e[2] is not None
                and not in_range(e, lo, hi), done)
    if nxt is not None and nxt < sync:
        fail("FUA write %d acknowledged before its sync" % k)
# Flush: its sync after every completion of the 32 writes.
lo, hi = 8 * MiB_SECT, 8 * MiB_SECT + 32 * 128
last = max(i for i, e in enumerate(events)
           if e[0] == "C" and e[1] == "W" and in_range(e, lo, hi))
syncs = [i for i, e in enumerate(events) if e[0] == "D" and e[1] == "FWS"]
if not syncs or syncs[-1] < last:
    fail("the flush's sync is not after the writes it covers")
first_read = index(lambda e: e[0] == "Q" and e[1] == "R" and
                   in_range(e, lo, hi))
if first_read is not None and first_read < syncs[-1]:
    fail("a read was queued before the flush completed")
print("%s: FUA and flush order ok (%d events)" % (sys.argv[2], len(events)))
PYEOF

for params in "scheduler=sorted" "scheduler=fifo" \
              "submit-from-crypt-cpus=1" "no-write-workqueue=1" \
              "same-cpu-crypt=1 workers=3" "caller-crypt=0 workers=1"; do
  rm -f "$tmp/trace"
  # shellcheck disable=SC2086
  timeout 120 nbdkit -U - "$plugin" file="$tmp/img" table="$table" \
    $params max-write-size=16K trace="$tmp/trace" \
    --run "$PY $tmp/client.py \"\$uri\"" \
    || fail "$params: client failed"
  "$PY" "$tmp/check.py" "$tmp/trace" "$params" || exit 1
done
