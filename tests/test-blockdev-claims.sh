#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A block device in use is not written, as the kernel refuses a second
# exclusive opener: a device another program holds with O_EXCL (a mount,
# device-mapper) is refused for writing and served with -r, and a second
# writer through another node of the same device is refused, naming the
# dmcrypt volume that holds it.  The claim is the plugin's: through the
# filter the device is the file plugin's to open.
source "$(dirname "$0")/functions.sh"
requires_root "losetup attaches loop devices"
requires_plugin_frontend "nbdkit's file plugin opens the device, without a claim"
requires_cmd nbdkit nbdinfo cryptsetup losetup timeout mknod
plugin_built_or_fail
scratch

loop_luks2_image

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
echo PASS
