#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/recovery.md, run as printed (tests/doc-functions.sh), then what
# each recipe claims, checked on what it left behind, with the test
# suite's independent oracle (tests/oracle.py) where plaintext is
# compared: the damage was real and e2fsck repaired it, on the FUSE
# overlay too where FUSE mounts, without changing the image; the image
# rescued through a header backup, restored, and repaired from its
# second header holds what was written; the LUKS partition of a GPT disk
# image decrypts to what was written; the keyslot that opened is named;
# cryptsetup's BitLocker and VeraCrypt images open read-only as the
# page says, with the secrets it names, and what it says is refused is.
# Every "## " section of the page is checked here, or the test fails.
source "$(dirname "$0")/functions.sh"
source "$srcdir/doc-functions.sh"
doc_setup
requires_cmd mkfs.ext4 e2fsck debugfs sha256sum
requires_cmd clevis luksmeta socat curl
requires_oracle
doc=docs/recovery.md

checked="A volume to practise on
Look without writing: \`-r\`
Try \`e2fsck -y\` on a copy-on-write overlay
A destroyed LUKS header: \`header=\`
A LUKS partition inside a whole-disk image
A BitLocker USB disk
A VeraCrypt or TrueCrypt container
A Clevis-bound image in CI
Keyslots: which are in use, which one opened
Finishing an interrupted re-encryption"
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

# The Clevis-bound image: a clevis token, read by it, as the passphrase
# wrote it; its Tang stopped, the token named in the note and the
# error.
cryptsetup token export --token-id 0 ci.img | grep -q '"type":"clevis"' \
  || fail "ci.img has no clevis token 0"
expect_equal "ci.img read by its clevis token" "hello from CI" \
  "$(head -n 1 ci.out)"
# (The filter names its data by its absolute path.)
grep -Eqx 'error: (/.*/)?ci.img: token 0 \(clevis\) cannot unlock' \
  "$out"/*.out \
  || fail "token-only=true with Tang stopped: not the token's error"

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
# Finishing an interrupted re-encryption (the page shows, does not run,
# it: where a re-encryption stops depends on the machine's speed, which
# tests/test-reencrypt.sh deals with, and with its crash): a copy of
# disk.img at the state `reencrypt --init-only` leaves, which every
# interruption starts from, read as the page says, then finished as it
# says; the refusal it quotes is the plugin's.
cp --sparse=always disk.img "$tmp/half.img"
# --disable-locks: cryptsetup's lock directory is root's.
cryptsetup reencrypt --init-only --batch-mode --disable-locks \
  --force-offline-reencrypt --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
  --key-slot 0 \
  --key-file pw.txt -c aes-xts-plain64 --sector-size 4096 "$tmp/half.img" \
  || fail "cryptsetup reencrypt --init-only"
cryptsetup luksDump "$tmp/half.img" | grep -q online-reencrypt \
  || fail "half.img is not in re-encryption"
read_half ()  # read_half OUT: the copy's plaintext, -r
{
  nbdkit -r -U - "$plugin" "$tmp/half.img" passphrase=+pw.txt \
    --run "nbdcopy \"\$uri\" $1" 2>"$tmp/err" \
    || fail "half.img: $(cat "$tmp/err")"
}
read_half "$tmp/half.plain"
expect_same "disk.img in re-encryption, read" fixed.img "$tmp/half.plain"
cryptsetup reencrypt --resume-only --batch-mode --disable-locks \
  --force-offline-reencrypt --key-file pw.txt "$tmp/half.img" \
  || fail "cryptsetup reencrypt --resume-only"
read_half "$tmp/half.done"
expect_same "disk.img re-encrypted, read" fixed.img "$tmp/half.done"
quoted=$(tr '\n' ' ' < "$topdir/$doc" \
  | sed -n "s/.*refuses the volume with \`\([^\`]*\) \.\.\.\`.*/\1/p")
[ -n "$quoted" ] || fail "$doc quotes no refusal"
grep -aqF "${quoted#re-encryption }" "$plugin" \
  || fail "the refusal $doc quotes is not the plugin's: $quoted"
rm -f "$tmp"/half.*

# ---- A BitLocker USB disk: cryptsetup's images stand in for usb.img ----
mkdir "$tmp/bitlk" && cd "$tmp/bitlk" || fail "cd $tmp/bitlk"
unpack_cryptsetup_images bitlk-images.tar.xz
conf=bitlk-images/images.conf
field ()  # field IMAGE KEY: KEY's value in IMAGE's section of images.conf
{
  awk -v sec="[$1]" -v key="$2" '/^\[/ { inside = ($0 == sec) }
    inside && index($0, key "=") == 1 { print substr($0, length(key) + 2) }
  ' "$conf"
}
usb=bitlk-images/bitlk-aes-xts-128-startup-key.img
want=$(field bitlk-aes-xts-128-startup-key SHA256SUM)
[ -n "$want" ] || fail "$conf has no sum for the startup-key image"
before=$(sha256_of "$usb")
printf %s "$(field bitlk-aes-xts-128-startup-key RP)" > rk.txt
grep -Eqx '([0-9]{6}-){7}[0-9]{6}' rk.txt || fail "no recovery key in $conf"
nbdkit -r -U - "$plugin" "$usb" passphrase=+rk.txt \
  --run 'nbdcopy "$uri" usb-plain.img' || fail "the recovery key did not open"
expect_equal "BitLocker plaintext by the recovery key" "$want" \
  "$(sha256_of usb-plain.img)"
rm -f usb-plain.img
nbdkit -r -U - "$plugin" "$usb" \
  keyfile=bitlk-images/4381F759-C4F8-4DE0-BB61-FC33A831BDA5.BEK \
  --run 'nbdcopy "$uri" usb-plain.img' || fail "the .BEK did not open"
expect_equal "BitLocker plaintext by the startup key" "$want" \
  "$(sha256_of usb-plain.img)"
expect_equal "usb.img unchanged under -r" "$before" "$(sha256_of "$usb")"
expect_equal "the plaintext is NTFS or FAT" ntfs \
  "$(blkid -p -s TYPE -o value usb-plain.img | sed 's/^vfat$/ntfs/')"
printf %s not-the-key > wrong.txt
expect_refused "a wrong key" \
  'wrong passphrase: it does not unlock the BitLocker volume' \
  bitlk-images/bitlk-aes-xts-128.img passphrase=+wrong.txt
printf %s "$(field bitlk-aes-xts-128-eow PW)" > eow.txt
expect_refused "a volume Windows was still encrypting" 'encrypt' \
  bitlk-images/bitlk-aes-xts-128-eow.img passphrase=+eow.txt
rm -rf "$tmp/bitlk"

# ---- A VeraCrypt or TrueCrypt container: cryptsetup's images ----
mkdir "$tmp/tcrypt" && cd "$tmp/tcrypt" || fail "cd $tmp/tcrypt"
unpack_cryptsetup_images tcrypt-images.tar.xz
d=tcrypt-images
uuid_through ()  # uuid_through IMAGE ARGS...: the export's file system UUID
{
  local image=$1; shift
  rm -f plain.img
  nbdkit -r -U - "$plugin" "$image" type=tcrypt "$@" \
    --run 'nbdcopy "$uri" plain.img' >/dev/null || return 1
  blkid -p -s UUID -o value plain.img
}
printf %s aaaaaaaaaaaa > vc-pw.txt
printf %s bbbbbbbbbbbb > hidden-pw.txt
printf %s cccccccccccccccccccc > pim-pw.txt
before=$(sha256_of $d/vc_1-sha512-xts-aes)
expect_equal "a container, tcrypt-hash=sha512" DEAD-BABE \
  "$(uuid_through $d/vc_1-sha512-xts-aes passphrase=+vc-pw.txt \
       tcrypt-hash=sha512)"
expect_equal "the container unchanged under -r" "$before" \
  "$(sha256_of $d/vc_1-sha512-xts-aes)"
expect_equal "a PIM" DEAD-BABE \
  "$(uuid_through $d/vcpim_1_1234-sha256-xts-aes passphrase=+pim-pw.txt \
       veracrypt-pim=1234)"
expect_equal "key files and no passphrase" DEAD-BABE \
  "$(uuid_through $d/vck_1_nopw-sha512-xts-aes keyfile=$d/keyfile1 \
       keyfile=$d/keyfile2 tcrypt-hash=sha512)"
expect_equal "the hidden volume" CAFE-BABE \
  "$(uuid_through $d/vc_1-sha512-xts-aes-hidden passphrase=+hidden-pw.txt \
       tcrypt-hidden=1 tcrypt-hash=sha512)"
cp --sparse=always $d/vc_1-sha512-xts-aes damaged.hc
dd if=/dev/zero of=damaged.hc bs=512 count=1 conv=notrunc status=none
uuid_through damaged.hc passphrase=+vc-pw.txt tcrypt-hash=sha512 \
  >/dev/null 2>&1 && fail "a zeroed first header still opened"
expect_equal "the backup header of a damaged container" DEAD-BABE \
  "$(uuid_through damaged.hc passphrase=+vc-pw.txt tcrypt-backup=1 \
       tcrypt-hash=sha512)"
nbdkit -r -v -U - "$plugin" $d/vc_1-sha512-xts-aes-twofish-serpent \
  type=tcrypt passphrase=+vc-pw.txt tcrypt-hash=sha512 --run true \
  > v.log 2>&1 || { cat v.log; fail "the cascade container did not open"; }
grep -Eq 'TCRYPT: VeraCrypt header version [0-9]+, serpent-twofish-aes-xts-plain64' \
  v.log || fail "-v does not name the header and its chain"
cd "$tmp" && rm -rf "$tmp/tcrypt"
echo PASS
