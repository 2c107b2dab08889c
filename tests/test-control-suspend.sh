#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# suspend and resume under a running write workload (16 writes in flight
# on one connection): while suspended nothing completes and nothing
# reaches the image (its checksum stays fixed), info says SUSPENDED;
# after resume the writes go on, none fails, and every block of the
# image decrypts (tests/oracle.py) to the last data written to it.
# Once with a flush, once with --noflush.
source "$(dirname "$0")/functions.sh"
requires "$PY" -c 'import nbd'
source "$srcdir/control-functions.sh"

key=$(random_hex 64)
table="0 65536 crypt aes-xts-plain64 $key 0 x 0"
truncate -s 32M "$tmp/vol.img"
start_volume vol file="$tmp/vol.img" table="$table" || fail "start"

# writer.py URI PROGRESS DONE: two passes over the volume in 64 KiB
# blocks, at most 16 in flight, a little paced so that the test can
# suspend it halfway; after each completion the count goes to PROGRESS.
cat > "$tmp/writer.py" <<'EOF'
import hashlib, os, sys, time
import nbd
BLOCK, PASSES, INFLIGHT = 65536, 2, 16
uri, progress_path, done_path = sys.argv[1:4]
h = nbd.NBD()
h.connect_uri(uri)
blocks = h.get_size() // BLOCK
def data(p, i):
    seed = hashlib.sha256(b"%d/%d" % (p, i)).digest()
    return seed * (BLOCK // len(seed))
progress = os.open(progress_path, os.O_WRONLY | os.O_CREAT, 0o600)
completed = 0
def on_done(err):
    global completed
    if err.value:
        sys.exit("a write failed: errno %d" % err.value)
    completed += 1
    os.pwrite(progress, b"%10d\n" % completed, 0)
    return 1
for p in range(PASSES):
    for i in range(blocks):
        while h.aio_in_flight() >= INFLIGHT:
            h.poll(-1)
        h.aio_pwrite(nbd.Buffer.from_bytearray(bytearray(data(p, i))),
                     i * BLOCK, completion=on_done)
        time.sleep(0.003)
while h.aio_in_flight() > 0:
    h.poll(-1)
h.flush()
with open(done_path, "w") as f:
    f.write("%d\n" % completed)
with open(done_path + ".expected", "wb") as f:
    for i in range(blocks):
        f.write(data(PASSES - 1, i))
EOF

progress () { cat "$tmp/progress" 2>/dev/null | tr -d ' ' || echo 0; }

timeout 120 "$PY" "$tmp/writer.py" "$(uri_of vol)" "$tmp/progress" \
  "$tmp/done" > "$tmp/writer.log" 2>&1 &
writer=$!
cleanup_fn "kill $writer 2>/dev/null"

# suspend_during AT_PERCENT [--noflush]
suspend_during ()
{
  local at=$1 i sum count; shift
  for (( i = 0; i < 600; i++ )); do
    [ "$(progress)" -ge $(( 1024 * at / 100 )) ] 2>/dev/null && break
    sleep 0.05
  done
  [ $i -lt 600 ] || fail "the writer does not progress"
  ctl suspend "$@" vol || fail "suspend $* failed"
  [ "$(info_field vol State:)" = SUSPENDED ] || fail "not SUSPENDED"
  ctl info -c vol | grep -q ' L-sw ' || fail "info -c: no L-sw"
  sum=$(sha256_of "$tmp/vol.img"); count=$(progress)
  sleep 1.5
  [ "$(sha256_of "$tmp/vol.img")" = "$sum" ] \
    || fail "the image changed while suspended"
  [ "$(progress)" = "$count" ] || fail "writes completed while suspended"
  # status still answers; a second suspend does nothing.
  ctl status vol > /dev/null || fail "status while suspended"
  ctl suspend vol || fail "second suspend"
  ctl resume vol || fail "resume failed"
  [ "$(info_field vol State:)" = ACTIVE ] || fail "not ACTIVE after resume"
  for (( i = 0; i < 100; i++ )); do
    [ "$(progress)" -gt "$count" ] && break
    sleep 0.05
  done
  [ "$(progress)" -gt "$count" ] || fail "writes did not resume"
  echo "ok: suspended at $count writes ($*), nothing moved, resumed"
}

suspend_during 25
suspend_during 60 --noflush
wait $writer || { cat "$tmp/writer.log"; fail "the writer failed"; }
[ "$(cat "$tmp/done")" = 1024 ] || fail "writes lost: $(cat "$tmp/done")"

"$PY" "$srcdir/oracle.py" decrypt "$tmp/vol.img" "$tmp/plain" \
  --table "$table" || fail "oracle decrypt"
cmp "$tmp/done.expected" "$tmp/plain" || fail "the image holds wrong data"
echo "ok: all 1024 writes landed, the image decrypts to the last pass"
