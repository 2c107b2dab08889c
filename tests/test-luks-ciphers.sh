#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# LUKS with the ciphers that OpenSSL lacks (Serpent, Twofish from
# libgcrypt; LRW by hand) and keyslots that libcryptsetup would decrypt
# through device-mapper (luks/keyslot.c unlocks them here):
#  1. cryptsetup's LUKS1 test images (aes, serpent, twofish; xts-plain64,
#     xts-essiv:wp256, lrw-plain64, cbc-essiv; sha1, sha256, whirlpool)
#     all open, and the file system inside has UUID DEAD-BABE;
#  2. LUKS2 volumes with such ciphers, which cryptsetup cannot format
#     here: formatted with AES, then the JSON's segment cipher set to
#     the one tested and, for some, the keyslot area re-encrypted with
#     it by the oracle (nettle's Serpent and Twofish); the plugin writes,
#     the oracle reads with luksDump's volume key (read before the
#     change), and the other way round.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo blkid xz tar
requires_oracle
scratch
cd "$tmp" || fail "cd $tmp"
export PATH="$PATH:/usr/sbin:/sbin"

tar xJf "$shared/testdata/cryptsetup/luks1-images.tar.xz" ||
  fail "cannot unpack luks1-images.tar.xz"
n=0
for img in luks1-images/*.img; do
  serve_dmcrypt 'nbdcopy "$uri" plain.bin' file="$img" \
    keyfile=luks1-images/keyfile1 || fail "$img did not open"
  uuid=$(blkid -p -o value -s UUID plain.bin)
  expect_equal "$(basename "$img"): file system UUID" DEAD-BABE "$uuid"
  rm -f plain.bin
  n=$((n + 1))
done
[ "$n" -ge 12 ] || fail "only $n images in luks1-images.tar.xz"

# recipher.py IMG PASSPHRASE SEGMENT_CIPHER [KEYSLOT_CIPHER]: sets
# segment 0's cipher and, if given, re-encrypts keyslot 0's area (a
# PBKDF2 keyslot) with KEYSLOT_CIPHER, in both header copies, their
# checksums made valid again.
cat > recipher.py <<'PYEOF'
import base64, hashlib, json, struct, sys
sys.path.insert(0, sys.argv[1])
import oracle
img, pw, seg_cipher = sys.argv[2:5]
ks_cipher = sys.argv[5] if len(sys.argv) > 5 else None
CSUM_AT, CSUM_BYTES, BIN_BYTES = 448, 64, 4096
f = open(img, "r+b")
hdr_size = struct.unpack(">Q", f.read(16)[8:16])[0]
f.seek(BIN_BYTES)
meta = json.loads(f.read(hdr_size - BIN_BYTES).split(b"\0", 1)[0])
meta["segments"]["0"]["encryption"] = seg_cipher
if ks_cipher:
    ks = meta["keyslots"]["0"]
    kdf, area = ks["kdf"], ks["area"]
    key = hashlib.pbkdf2_hmac(kdf["hash"], pw.encode(),
                              base64.b64decode(kdf["salt"]),
                              kdf["iterations"], area["key_size"])
    off, size = int(area["offset"]), int(area["size"])
    f.seek(off)
    data = f.read(size)
    old = oracle.SectorCipher(area["encryption"], key, 512, 0, False)
    new = oracle.SectorCipher(ks_cipher, key, 512, 0, False)
    f.seek(off)
    f.write(new.crypt(old.crypt(data, 0, False), 0, True))
    area["encryption"] = ks_cipher
text = json.dumps(meta).encode()
for at in (0, hdr_size):
    f.seek(at)
    h = bytearray(f.read(hdr_size))
    h[BIN_BYTES:] = text.ljust(hdr_size - BIN_BYTES, b"\0")
    h[CSUM_AT:CSUM_AT + CSUM_BYTES] = bytes(CSUM_BYTES)
    h[CSUM_AT:CSUM_AT + 32] = hashlib.sha256(h).digest()
    f.seek(at)
    f.write(h)
PYEOF

pw=ciphers-passphrase
printf %s "$pw" > pw
# format cipher, bits, tested data cipher, keyslot cipher (- for AES).
cases=(
  "aes-xts-plain64 512 serpent-xts-plain64 serpent-xts-plain64"
  "aes-cbc-essiv:sha256 256 twofish-cbc-essiv:sha256 twofish-xts-plain64"
  "aes-xts-plain64 256 aes-lrw-benbi -"
  "aes-cbc-plain64 256 serpent-cbc-plain64 aes-lrw-plain64"
)
for c in "${cases[@]}"; do
  read -r fmt bits cipher ks <<<"$c"
  echo "LUKS2 $cipher, $bits-bit key, keyslot $ks"
  rm -f l2.img; truncate -s 20M l2.img
  luks_format luks2 l2.img "$pw" --cipher "$fmt" --key-size "$bits" \
    --sector-size 512 || fail "luksFormat $fmt"
  vk=$(luks_volume_key l2.img "$pw")
  [ -n "$vk" ] || fail "no volume key from luksDump ($fmt)"
  if [ "$ks" = - ]; then
    "$PY" recipher.py "$srcdir" l2.img "$pw" "$cipher"
  else
    "$PY" recipher.py "$srcdir" l2.img "$pw" "$cipher" "$ks"
  fi || fail "cannot rewrite the header for $cipher"
  size=$(serve_dmcrypt 'nbdinfo --size "$uri"' file=l2.img passphrase=+pw) ||
    fail "the plugin did not open LUKS2 $cipher"
  random_file a.bin "$size"
  serve_dmcrypt 'nbdcopy a.bin "$uri"' file=l2.img passphrase=+pw ||
    fail "plugin write"
  oracle decrypt l2.img a.oracle --luks-key "$vk" || fail "oracle read"
  expect_same "plugin wrote, oracle read" a.bin a.oracle
  random_file b.bin "$size"
  oracle encrypt b.bin l2.img --luks-key "$vk" || fail "oracle write"
  serve_dmcrypt 'nbdcopy "$uri" b.plugin' file=l2.img passphrase=+pw ||
    fail "plugin read"
  expect_same "oracle wrote, plugin read" b.bin b.plugin
  printf wrong > wrong
  serve_dmcrypt true file=l2.img passphrase=+wrong 2> err &&
    fail "a wrong passphrase opened $cipher"
  grep -q "no keyslot matched" err || fail "wrong passphrase: $(cat err)"
done
echo PASS
