#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Read-after-write under concurrency, through nbdkit, for every engine
# path: 64 requests in flight of any alignment; each acknowledged write
# is read back at once and must be seen whole; at the end the image,
# decrypted independently (python-cryptography's AES-XTS), matches the
# client's model byte for byte.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch

key=$(random_hex 64)
truncate -s 16M "$tmp/img"

cat > "$tmp/client.py" <<'PYEOF'
import os, random, sys
import nbd

SLOTS, SLOT = 128, 65536        # 8 MiB in 64 KiB slots
h = nbd.NBD()
h.set_strict_mode(0)            # unaligned requests on purpose
h.connect_uri(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
model = bytearray(h.pread(SLOTS * SLOT, 0))
busy = {}                       # slot -> (cookie, kind, off, data or buf)
todo = 3000
while todo > 0 or busy:
    while todo > 0 and len(busy) < 64:
        slot = rng.choice([s for s in range(SLOTS) if s not in busy])
        n = rng.choice([1, 511, 512, 4096, 5000, 65536 - 100, 65536])
        off = slot * SLOT + rng.randrange(SLOT - n + 1)
        data = os.urandom(n)
        busy[slot] = (h.aio_pwrite(data, off), "w", off, data)
        todo -= 1
    h.poll(-1)
    for slot, (cookie, kind, off, data) in list(busy.items()):
        if not h.aio_command_completed(cookie):
            continue
        if kind == "w":
            model[off:off + len(data)] = data
            buf = nbd.Buffer(len(data))
            busy[slot] = (h.aio_pread(buf, off), "r", off, buf)
        else:
            got = data.to_bytearray()
            if got != model[off:off + len(got)]:
                sys.exit("FAIL: read after write differs at %d" % off)
            del busy[slot]
h.flush()
with open(sys.argv[3], "wb") as f:
    f.write(model)
PYEOF

# aes-xts-plain64: the tweak is the 512-byte sector number, little
# endian, of each encryption sector's first 512 bytes.
cat > "$tmp/decrypt.py" <<'PYEOF'
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

img, key, ss, size = sys.argv[1], bytes.fromhex(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4])
out = bytearray()
with open(img, "rb") as f:
    for off in range(0, size, ss):
        tweak = (off // 512).to_bytes(16, "little")
        d = Cipher(algorithms.AES(key), modes.XTS(tweak)).decryptor()
        out += d.update(f.read(ss)) + d.finalize()
sys.stdout.buffer.write(out)
PYEOF

i=0
for params in "" "scheduler=fifo workers=3" "same-cpu-crypt=1" \
              "submit-from-crypt-cpus=1 workers=1" \
              "no-read-workqueue=1 no-write-workqueue=1" \
              "caller-crypt=0 max-read-size=4K max-write-size=8K" \
              "max-inflight=64K workers=4" "max-write-rounds=1" \
              "max-write-rounds=2 max-write-size=8K"; do
  for ss in 512 4096; do
    i=$((i + 1))
    table="0 32768 crypt aes-xts-plain64 $key 0 /dev/null 0 1 sector_size:$ss"
    # shellcheck disable=SC2086
    timeout 300 nbdkit -U - "$plugin" file="$tmp/img" table="$table" \
      $params --run "$PY $tmp/client.py \"\$uri\" $i $tmp/model" \
      || fail "[$params] sector size $ss: client failed"
    "$PY" "$tmp/decrypt.py" "$tmp/img" "$key" "$ss" 8388608 > "$tmp/back" \
      || fail "independent decryption failed"
    cmp -s "$tmp/back" "$tmp/model" \
      || fail "[$params] sector size $ss: image differs from the model"
    echo "ok: [$params] sector size $ss"
  done
done
