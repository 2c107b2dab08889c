#!/usr/bin/env bash
# docs/recovery.md, run as printed (tests/doc-functions.sh), then what
# each recipe claims, checked on what it left behind, with the test
# suite's independent oracle (tests/oracle.py) where plaintext is
# compared: the damage was real and e2fsck repaired it, on the FUSE
# overlay too where FUSE mounts, without changing the image; the image
# rescued through a header backup, restored, and repaired from its
# second header holds what was written; the LUKS partition of a GPT disk
# image decrypts to what was written; the keyslot that opened is named.
# Every "## " section of the page is checked here, or the test fails.
source "$(dirname "$0")/functions.sh"
source "$srcdir/doc-functions.sh"
doc_setup
requires_cmd mkfs.ext4 e2fsck debugfs sha256sum
requires_oracle
doc=docs/recovery.md

checked="A volume to practise on
Look without writing: \`-r\`
Try \`e2fsck -y\` on a copy-on-write overlay
A destroyed LUKS header: \`header=\`
A LUKS partition inside a whole-disk image
Keyslots: which are in use, which one opened"
while read -r heading; do
  grep -qxF "$heading" <<< "$checked" && continue
  fail "$doc has a section this test does not check: $heading"
done < <(sed -n 's/^## //p' "$topdir/$doc")

# The page with FUSE, up to its last FUSE block: the overlay's repair,
# the image's checksum unchanged afterwards.
if why=$(fuse_why_not); then
  doc_run "$doc" fuse || fail "$doc: a block failed (FUSE)"
  w=$tmp/recovery.md.fuse/work
  (cd "$w" && sha256sum -c disk.img.sha256) \
    || fail "the image changed under the cow overlay"
  grep -qx hello "$tmp"/recovery.md.fuse/state/*.out \
    || fail "e2fsck did not put hello.txt into lost+found on the overlay"
  echo "ok: e2fsck -y on the cow overlay through nbdfuse, -fn clean," \
       "the image unchanged"
else
  echo "skip: $doc's FUSE block: $why"
fi

doc_run "$doc" plain || fail "$doc: a block failed"
w=$tmp/recovery.md.plain/work
out=$tmp/recovery.md.plain/state
cd "$w" || fail "no work directory"
vk=$(luks_volume_key disk.img 'spare passphrase') || fail "volume key"

# -r and the repaired copy: the damage was there, e2fsck repaired it.
st=0; e2fsck -fn plain.img >/dev/null 2>&1 || st=$?
expect_equal "e2fsck -fn exit status on the damaged plaintext" 4 "$st"
e2fsck -fn fixed.img >/dev/null 2>&1 || fail "e2fsck -fn: fixed.img"
expect_equal "hello.txt in lost+found" hello \
  "$(debugfs -R 'cat lost+found/#12' fixed.img 2>/dev/null)"
expect_same "the repair through the ciphertext overlay" fixed.img back.img
# The write-back, decrypted by the oracle.
oracle decrypt disk.img "$tmp/disk.plain" --luks-key "$vk" \
  || fail "the oracle cannot decrypt disk.img"
expect_same "disk.img after the write-back (oracle)" fixed.img \
  "$tmp/disk.plain"

# The destroyed header: refused without the backup, rescued with it.
cp disk.img "$tmp/wiped.img"
dd if=/dev/zero of="$tmp/wiped.img" bs=1M count=16 conv=notrunc status=none
if nbdkit -r -U - "$plugin" "$tmp/wiped.img" passphrase=+pw.txt --run true \
     2>"$tmp/err"; then
  fail "an image without a header opened"
fi
grep -q 'not a LUKS header' "$tmp/err" || fail "error: $(cat "$tmp/err")"
expect_same "the plaintext through the header backup" fixed.img rescued.img
expect_same "the plaintext after luksHeaderRestore" fixed.img restored.img
oracle decrypt wiped.img "$tmp/wiped.plain" --luks-key "$vk" \
  || fail "the oracle cannot decrypt wiped.img after luksHeaderRestore"
expect_same "wiped.img after luksHeaderRestore (oracle)" fixed.img \
  "$tmp/wiped.plain"
expect_same "the plaintext from the second LUKS2 header" fixed.img \
  half-plain.img
expect_same "the detached-header volume" secret.bin secret.out

# The partition: GPT around it, its plaintext what was written.
expect_equal "GPT signature in whole.img" "EFI PART" \
  "$(dd if=whole.img bs=1 skip=512 count=8 status=none)"
expect_same "the LUKS partition's plaintext" part.bin part.out

# The keyslots: slot 1 opened (spare.txt), slots 0 and 1 in use.
grep -qx 'nbdkit: debug: LUKS2 keyslots in use: 0 1' "$out"/*.out \
  || fail "-v does not list keyslots 0 and 1"
grep -qx 'nbdkit: debug: Key slot 1 unlocked.' "$out"/*.out \
  || fail "-v does not say that keyslot 1 opened"
grep -Eqx 'disk +1 0,1 *' "$out"/*.out \
  || fail "dmcryptctl info -o keyslot,keyslots: $(cat "$out"/*.out)"
# The filter says so too; a slot that the passphrase does not open is
# named.
nbdkit -r -v -U - --filter="$topdir/filter/nbdkit-dmcrypt-filter.so" \
  file disk.img passphrase=+pw.txt --run true 2>&1 \
  | grep -qx 'nbdkit: debug: Key slot 0 unlocked.' \
  || fail "the filter does not say that keyslot 0 opened"
if nbdkit -r -U - "$plugin" disk.img passphrase=+spare.txt key-slot=0 \
     --run true 2>"$tmp/err"; then
  fail "key-slot=0 opened with the passphrase of slot 1"
fi
grep -q 'keyslot 0 did not accept the passphrase' "$tmp/err" \
  || fail "error: $(cat "$tmp/err")"
echo PASS
