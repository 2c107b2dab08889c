#!/usr/bin/env bash
# The backing "file" may be a block device: a LUKS2 image attached to a
# loop device is served, written (unaligned too) and trimmed through the
# device, and what the image file holds afterwards must be the same volume
# as seen through the file, and as decrypted by the oracle.
source "$(dirname "$0")/functions.sh"
requires_root "losetup attaches loop devices"
requires_cmd nbdkit nbdcopy cryptsetup losetup timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch

printf %s "blk-pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" blk-pw --sector-size 4096
loop=$(losetup -f --show "$tmp/luks2.img" 2>"$tmp/losetup.err") \
  || skip "losetup cannot attach a loop device here: $(cat "$tmp/losetup.err")"
cleanup_fn "losetup -d '$loop' 2>/dev/null"
echo "using $loop"

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

# A device in use is refused for writing, as the kernel refuses a second
# exclusive opener (a mount, device-mapper): another program holds it
# with O_EXCL here.  Read-only serving does not claim it.
"$PY" -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
open(sys.argv[2], "w").close()
time.sleep(60)' "$loop" "$tmp/claimed" &
claimer=$!
cleanup_fn "kill $claimer 2>/dev/null"
for (( i = 0; i < 100; i++ )); do [ -e "$tmp/claimed" ] && break; sleep 0.1; done
if timeout 60 nbdkit -U - "$plugin" file="$loop" passphrase=+"$tmp/pw" \
     --run true 2>"$tmp/excl.err"; then
  fail "a writable open of a device opened exclusively elsewhere"
fi
cat "$tmp/excl.err"
grep -q "$loop is in use: mounted, mapped by device-mapper or opened exclusively" \
  "$tmp/excl.err" || fail "no 'in use' error for the claimed device"
timeout 60 nbdkit -r -U - "$plugin" file="$loop" passphrase=+"$tmp/pw" \
  --run 'nbdinfo --size "$uri" >/dev/null' \
  || fail "-r refused on a device opened exclusively elsewhere"
kill $claimer; wait $claimer 2>/dev/null
echo "ok: a device in use is refused for writing, served with -r"

# A second writer through another node of the same device: the O_EXCL
# claim refuses it, and the error names the dmcrypt volume holding it.
mknod "$tmp/samedev" b $(( 0x$(stat -c %t "$loop") )) \
  $(( 0x$(stat -c %T "$loop") )) || fail "mknod"
timeout 60 nbdkit -U - "$plugin" file="$loop" passphrase=+"$tmp/pw" \
  name=blk --run "nbdkit -U - '$plugin' file='$tmp/samedev' \
    passphrase=+'$tmp/pw' --run true 2>'$tmp/second.err'; test \$? -ne 0" \
  || fail "a second writer through another node of the device started"
cat "$tmp/second.err"
grep -q "samedev is in use: dmcrypt volume 'blk' (pid [0-9]*) has it open read-write" \
  "$tmp/second.err" || fail "the second writer's error does not name blk"
echo "ok: a second writer through another device node is refused, named"
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
