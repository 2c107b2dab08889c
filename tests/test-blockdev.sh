#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The backing "file" may be a block device: a LUKS2 image attached to a
# loop device is served, written (unaligned too) and trimmed through the
# device, and what the image file holds afterwards must be the same volume
# as seen through the file, and as decrypted by the oracle.  (How a device
# in use elsewhere is refused: test-blockdev-claims.sh.)
source "$(dirname "$0")/functions.sh"
requires_root "losetup attaches loop devices"
requires_cmd nbdkit nbdcopy cryptsetup losetup timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch

loop_luks2_image

# Writes, unaligned ones among them, and a trim of whole 4 KiB sectors.
cat > "$tmp/io.py" <<'EOF'
import os, sys
import nbd
h = nbd.NBD()
h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)
h.connect_uri(sys.argv[1])
size = 16 << 20
if h.get_size() != size:
    sys.exit("FAIL: export size %d, expected %d" % (h.get_size(), size))
if not h.can_trim():
    sys.exit("FAIL: trim not offered with allow-discards on a block device")
h.pwrite(os.urandom(2 << 20), 1 << 20)
for off, n in ((5, 3), (4095, 2), (123457, 9000), (size - 7, 7)):
    h.pwrite(os.urandom(n), off)
h.trim(1 << 20, 2 << 20)
h.flush()
h.shutdown()
EOF

timeout 60 nbdkit -U - "$plugin" file="$loop" passphrase=+"$tmp/pw" \
  allow-discards=true --run \
  "'$PY' '$tmp/io.py' \"\$uri\" && nbdcopy \"\$uri\" '$tmp/via-device.raw'" \
  || fail "serving $loop failed"

losetup -d "$loop"

# The trimmed range was punched out of the image: its ciphertext is zeros.
"$PY" - "$tmp/luks2.img" <<'EOF' || fail "trim did not reach the device"
import sys
with open(sys.argv[1], "rb") as f:
    f.seek((16 << 20) + (2 << 20))
    if f.read(1 << 20) != bytes(1 << 20):
        sys.exit("FAIL: trimmed ciphertext is not zeros")
EOF

timeout 60 nbdkit -r -U - "$plugin" file="$tmp/luks2.img" \
  passphrase=+"$tmp/pw" --run "nbdcopy \"\$uri\" '$tmp/via-file.raw'" \
  || fail "serving the image file failed"
cmp "$tmp/via-device.raw" "$tmp/via-file.raw" \
  || fail "the device and the file show different plaintext"
echo "ok: device and file show the same plaintext"

if [ -f "$srcdir/oracle.py" ]; then
  timeout 60 "$PY" "$srcdir/oracle.py" decrypt "$tmp/luks2.img" \
    "$tmp/oracle.raw" --luks-key="$(luks_volume_key "$tmp/luks2.img" blk-pw)" \
    || fail "the oracle cannot decrypt the image"
  cmp "$tmp/via-device.raw" "$tmp/oracle.raw" \
    || fail "the oracle's plaintext differs"
  echo "ok: the oracle agrees"
fi
echo PASS
