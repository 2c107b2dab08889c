#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# FileVault2 (type=fvault2): cryptsetup's own test image opens with its
# passphrase through the plugin and the filter, with and without type=,
# and shows the plaintext cryptsetup's test expects (sha256 of the whole
# logical volume) and the volume key; dmcryptctl shows the table
# cryptsetup activates.  A wrong passphrase and damaged or truncated
# metadata are refused in one line, the image untouched.  Writes land
# where the oracle (a plain aes-xts-plain64 table with the known key and
# offset) finds them, and only there; -r writes nothing.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/control-functions.sh"   # scratch, ctl, start_volume
filter="$topdir/filter/nbdkit-dmcrypt-filter.so"
[ -f "$filter" ] || fail "$filter is not built: run make first"
requires_oracle
requires_cmd nbdkit nbdcopy nbdinfo tar xz sha256sum
requires "$PY" -c 'import nbd'
cd "$tmp" || fail "cd $tmp"

unpack_cryptsetup_images fvault2-images.tar.xz
img=$tmp/fvault2-images/small
[ -f "$img" ] || fail "fvault2-images.tar.xz holds no fvault2-images/small"

# What cryptsetup's tests/fvault2-compat-test expects of this image.
printf %s heslo123 > pw
printf %s wrong-pw > wrongpw
want_sha=2c662e36c0f7e2f5583e6a939bbcbdc660805692d0fccaa45ad4052beb3b8e18
want_key=20734d3389212774d7610c29d732880916f3be14c4b12ac7aaf07e5ccc77b319
lv_offset=$((67108864 / 512)) lv_sectors=$((167772160 / 512))
table="0 $lv_sectors crypt aes-xts-plain64 $want_key 0 dev $lv_offset"
sha_cmd='nbdcopy "$uri" - | sha256sum | cut -d" " -f1'
img_sha=$(sha256_of "$img")

echo "plugin: type=fvault2, passphrase=+FILE"
expect_equal "export size" 167772160 \
  "$(serve_dmcrypt 'nbdinfo --size "$uri"' "$img" type=fvault2 \
     passphrase=+pw)"
expect_equal "plaintext sha256" "$want_sha" \
  "$(serve_dmcrypt "$sha_cmd" "$img" type=fvault2 passphrase=+pw)"

echo "plugin: detected without type=, the passphrase literal, -FD, keyfile="
expect_equal "detected, literal" 167772160 \
  "$(serve_dmcrypt 'nbdinfo --size "$uri"' "$img" passphrase=heslo123)"
expect_equal "passphrase=-FD" 167772160 \
  "$(timeout "$compat_timeout" nbdkit -U - "$plugin" "$img" \
     passphrase=-3 --run 'nbdinfo --size "$uri"' 3<pw </dev/null)"
expect_equal "keyfile=" 167772160 \
  "$(serve_dmcrypt 'nbdinfo --size "$uri"' "$img" keyfile=pw)"

echo "dmcryptctl: the table cryptsetup activates, the volume key"
start_volume fv file="$img" passphrase=+pw || fail "fv did not start"
got=$(ctl table --showkeys fv) || fail "dmcryptctl table --showkeys"
expect_equal "volume key" "$want_key" "$(echo "$got" | cut -d' ' -f5)"
expect_equal "table but the device" \
  "0 $lv_sectors crypt aes-xts-plain64 $want_key 0 $lv_offset" \
  "$(echo "$got" | cut -d' ' -f1-6,8-)"
expect_equal "device field" "$(realpath "$img")" \
  "$(echo "$got" | cut -d' ' -f7)"
# cryptsetup's dm UUID: CRYPT-FVAULT2-<family UUID without dashes>-NAME.
ctl info fv | grep -q "UUID: *CRYPT-FVAULT2-33a76caa14814bc58d041ac1707c19c0-fv" \
  || { ctl info fv; fail "dmcryptctl info: no FileVault2 UUID"; }
ctl ls | grep -qw fvault2 || { ctl ls; fail "dmcryptctl ls: not fvault2"; }
stop_volume fv

echo "filter over the file plugin, with and without type="
expect_equal "filter, type=fvault2" "$want_sha" \
  "$(timeout "$compat_timeout" nbdkit -U - --filter="$filter" file "$img" \
     type=fvault2 passphrase=+pw --run "$sha_cmd" </dev/null)"
expect_equal "filter, detected" 167772160 \
  "$(timeout "$compat_timeout" nbdkit -U - --filter="$filter" file "$img" \
     passphrase=+pw --run 'nbdinfo --size "$uri"' </dev/null)"

refused () { expect_refused "$@"; }

echo "refusals"
refused "wrong passphrase" "wrong passphrase" "$img" passphrase=+wrongpw
expect_equal "test image unchanged" "$img_sha" "$(sha256_of "$img")"
# flip COPY BYTE: the image's first 9 MiB (all of its metadata, which
# is refused before the size is looked at) with one bit of BYTE flipped.
flip ()
{
  head -c 9M "$img" > "$1"
  printf "\\x$(printf %02x $(( $(od -An -tu1 -j "$2" -N1 "$img") ^ 1 )))" \
    | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
flip vh.img 200                          # inside the volume header
refused "volume header bit flip" "checksum" vh.img passphrase=+pw
flip dl.img $((4096 + 300))              # the disk label block
refused "disk label bit flip" "checksum" dl.img passphrase=+pw
flip md.img $((8392704 + 1000))          # the first encrypted block
refused "encrypted metadata bit flip" "checksum" md.img passphrase=+pw
flip sig.img 88                          # the "CS" signature
refused "signature bit flip" "not a LUKS header, nor a FileVault2" \
  sig.img passphrase=+pw
refused "signature bit flip, type=fvault2" "no Core Storage" sig.img \
  type=fvault2 passphrase=+pw
head -c 300 "$img" > t1.img
refused "truncated inside the volume header" "volume header" t1.img \
  type=fvault2 passphrase=+pw
head -c 8400000 "$img" > t2.img
refused "truncated inside the metadata" "cannot|metadata" t2.img \
  passphrase=+pw
head -c 100M "$img" > t3.img
refused "truncated inside the logical volume" "too small" t3.img \
  passphrase=+pw
refused "key-slot=" "keyslot" "$img" passphrase=+pw key-slot=0
xts_key=$(printf '%064d' 7)
refused "a plain mapping over it" \
  "has a FileVault2 header that this plain mapping would overwrite: open it with type=fvault2, or give type=plain" \
  "$img" cipher=aes-xts-plain64 key="$xts_key"
expect_equal "type=plain maps it anyway (size, bytes)" \
  "$(stat -c %s "$img")" \
  "$(serve_dmcrypt 'nbdinfo --size "$uri"' "$img" -r type=plain \
       cipher=aes-xts-plain64 key="$xts_key")"

echo "round trip on a copy, checked with the oracle"
cp --sparse=always "$img" rw.img
random_file a.bin $((3 << 20))
random_file b.bin $((1 << 20))
outside () { { head -c $((lv_offset * 512)) rw.img
               tail -c +$(( (lv_offset + lv_sectors) * 512 + 1 )) rw.img; } \
             | sha256sum; }
before=$(outside)
serve_dmcrypt 'nbdcopy a.bin "$uri"' rw.img passphrase=+pw \
  || fail "write through the plugin"
oracle decrypt rw.img o.out --table "$table" --length $((3 << 20)) \
  || fail "oracle decrypt"
expect_same "plugin wrote, oracle read" a.bin o.out
oracle encrypt b.bin rw.img --table "$table" --seek $((5 << 20)) \
  || fail "oracle encrypt"
cat > pread.py <<'EOF'
import sys, nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
sys.stdout.buffer.write(h.pread(int(sys.argv[2]), int(sys.argv[3])))
EOF
serve_dmcrypt "$PY pread.py \"\$uri\" $((1 << 20)) $((5 << 20)) > p.out" \
  rw.img passphrase=+pw || fail "read through the plugin"
expect_same "oracle wrote, plugin read" b.bin p.out
expect_equal "outside the logical volume unchanged" "$before" "$(outside)"

echo "-r: the image is never written"
before=$(sha256_of rw.img)
timeout "$compat_timeout" nbdkit -r -U - "$plugin" rw.img passphrase=+pw \
  --run 'nbdcopy b.bin "$uri"' </dev/null >ro.log 2>&1 \
  && fail "-r: a write succeeded"
expect_equal "-r: image unchanged" "$before" "$(sha256_of rw.img)"
timeout "$compat_timeout" nbdkit -r -U - --filter="$filter" file rw.img \
  passphrase=+pw --run 'nbdcopy b.bin "$uri"' </dev/null >ro.log 2>&1 \
  && fail "-r through the filter: a write succeeded"
expect_equal "-r through the filter: image unchanged" "$before" \
  "$(sha256_of rw.img)"
expect_equal "test image unchanged" "$img_sha" "$(sha256_of "$img")"
echo "PASS"
