#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# LUKS2 images against the oracle, both directions, exact bytes: default
# and explicit sector sizes, xts (from OpenSSL and from libgcrypt) and
# cbc-essiv, key-file unlock, detached
# header, key slots, and an image that grew by less than a sector.  The
# export size must be (image size - data offset) rounded down to the
# encryption sector size, its minimum block size 1 (any alignment) and
# its preferred one the sector size or a page, whichever is larger, and
# nothing outside the data segment may change.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_oracle
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo
scratch
cd "$tmp" || fail "cd $tmp"

pw=vm-test-passphrase
printf %s "$pw" > pw

# Data offset (bytes) and sector size of a header, as luksDump says.
dump_field ()  # dump_field HEADER offset|sector
{
  cryptsetup luksDump --disable-locks "$1" \
    | awk -v f="$2:" '$1 == f { print $2; exit }'
}

# nbdinfo's JSON of the plugin's export: "SIZE MINIMUM PREFERRED" (block
# sizes).
export_geometry ()  # export_geometry plugin-args...
{
  serve_dmcrypt 'nbdinfo --json "$uri"' "$@" | "$PY" -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
print(e["export-size"], e.get("block_size_minimum", 1),
      e.get("block_size_preferred", 0))'
}

# sha256 of everything but the data segment, detached header included.
outside_sha ()  # outside_sha IMG HEADER|- OFFSET_BYTES SIZE_BYTES
{
  { head -c "$3" "$1"; tail -c +$(( $3 + $4 + 1 )) "$1"
    [ "$2" = - ] || cat "$2"; } | sha256sum
}

# The plugin (started with PLUGIN_ARGS) and the oracle (reading IMG with
# KEY and the optional detached HEADER) must agree on everything.
check_volume ()  # check_volume IMG HEADER|- KEY plugin-args...
{
  local img=$1 hdr=$2 key=$3; shift 3
  local ohdr=() meta=$img off ss want geo size before
  if [ "$hdr" != - ]; then ohdr=(--header "$hdr"); meta=$hdr; fi
  off=$(dump_field "$meta" offset); ss=$(dump_field "$meta" sector)
  [ -n "$off" ] && [ -n "$ss" ] || fail "luksDump of $meta: no segment"
  want=$(( ($(stat -c %s "$img") - off) / ss * ss ))
  echo "  data offset $off bytes, $ss-byte sectors"
  geo=$(export_geometry "$@") || fail "plugin did not serve $img"
  size=${geo%% *}
  expect_equal "export size" "$want" "$size"
  expect_equal "oracle's size" "$want" \
    "$(oracle size "$img" --luks-key "$key" "${ohdr[@]}")"
  expect_equal "minimum, preferred block size" \
    "1 $(( ss > 4096 ? ss : 4096 ))" "${geo#* }"

  before=$(outside_sha "$img" "$hdr" "$off" "$size")

  random_file a.bin "$size"
  serve_dmcrypt 'nbdcopy a.bin "$uri"' "$@" || fail "plugin write"
  oracle decrypt "$img" a.out --luks-key "$key" "${ohdr[@]}" \
    || fail "oracle decrypt"
  expect_same "plugin wrote, oracle read" a.bin a.out
  expect_equal "sha256 of the bytes outside the data segment" \
    "$before" "$(outside_sha "$img" "$hdr" "$off" "$size")"

  random_file b.bin "$size"
  oracle encrypt b.bin "$img" --luks-key "$key" "${ohdr[@]}" \
    || fail "oracle encrypt"
  serve_dmcrypt 'nbdcopy "$uri" b.out' "$@" || fail "plugin read"
  expect_same "oracle wrote, plugin read" b.bin b.out
}

# Formats a fresh IMG of SIZE and checks it through a passphrase, with
# the plugin arguments in the array EXTRA besides.
extra=()
luks2_case ()  # luks2_case TITLE SIZE luksFormat-args...
{
  local title=$1 size=$2 img=l2.img; shift 2
  echo "LUKS2: $title${extra[*]:+, ${extra[*]}}"
  rm -f "$img"; truncate -s "$size" "$img"
  luks_format luks2 "$img" "$pw" "$@" || fail "luksFormat $*"
  check_volume "$img" - "$(luks_volume_key "$img" "$pw")" \
    file="$img" passphrase=+pw "${extra[@]}"
}

luks2_case "defaults (4096-byte sectors)" 48M
[ "$(dump_field l2.img sector)" = 4096 ] \
  || fail "cryptsetup's default sector size is no longer 4096"
luks2_case "aes-xts-plain64 256, 512-byte sectors" 40M \
  --cipher aes-xts-plain64 --key-size 256 --sector-size 512
luks2_case "aes-xts-plain64 512, 4096-byte sectors" 40M \
  --cipher aes-xts-plain64 --key-size 512 --sector-size 4096
luks2_case "aes-xts-plain64 256, 2048-byte sectors" 40M \
  --cipher aes-xts-plain64 --key-size 256 --sector-size 2048
# Each library's AES-XTS, whichever "auto" takes on this machine.
for lib in openssl libgcrypt; do
  extra=(cipher-library=$lib)
  for ss in 512 4096; do
    luks2_case "aes-xts-plain64 512, $ss-byte sectors" 40M \
      --cipher aes-xts-plain64 --key-size 512 --sector-size $ss
  done
done
extra=()
luks2_case "aes-cbc-essiv:sha256, 512-byte sectors" 40M \
  --cipher aes-cbc-essiv:sha256 --key-size 256 --sector-size 512
luks2_case "aes-cbc-essiv:sha256, 4096-byte sectors" 40M \
  --cipher aes-cbc-essiv:sha256 --key-size 256 --sector-size 4096

echo "LUKS2: key file with offset and size"
rm -f l2.img; truncate -s 40M l2.img
luks_format luks2 l2.img "$pw" || fail "luksFormat"
random_file kf 4096
cryptsetup luksAddKey --batch-mode --disable-locks --pbkdf pbkdf2 \
  --pbkdf-force-iterations 1000 --key-file pw --new-keyfile-offset 100 \
  --new-keyfile-size 64 l2.img kf || fail "luksAddKey of the key file"
key=$(luks_volume_key l2.img "$pw")
check_volume l2.img - "$key" file=l2.img keyfile=kf keyfile-offset=100 \
  keyfile-size=64
serve_dmcrypt true file=l2.img keyfile=kf keyfile-offset=101 \
  keyfile-size=64 >/dev/null 2>&1 && fail "a wrong keyfile-offset opened"
echo "  refused: wrong keyfile-offset"

echo "LUKS2: key-slot"
printf %s other-passphrase > pw2
cryptsetup luksAddKey --batch-mode --disable-locks --pbkdf pbkdf2 \
  --pbkdf-force-iterations 1000 --key-file pw --key-slot 5 l2.img pw2 \
  || fail "luksAddKey into slot 5"
check_volume l2.img - "$key" file=l2.img passphrase=+pw2 key-slot=5
serve_dmcrypt true file=l2.img passphrase=+pw2 key-slot=0 \
  >/dev/null 2>&1 && fail "slot 0 opened with slot 5's passphrase"
serve_dmcrypt true file=l2.img passphrase=+pw key-slot=5 \
  >/dev/null 2>&1 && fail "slot 5 opened with slot 0's passphrase"
echo "  refused: passphrases of other slots"

echo "LUKS2: detached header"
rm -f data.img hdr.img; truncate -s 24M data.img
luks_format luks2 data.img "$pw" --header hdr.img --sector-size 4096 \
  || fail "luksFormat --header"
check_volume data.img hdr.img "$(luks_volume_key hdr.img "$pw")" \
  file=data.img header=hdr.img passphrase=+pw

# A device that grew by 2560 bytes after luksFormat: the last partial
# encryption sector is not part of the export.
echo "LUKS2: image 2560 bytes longer than a whole number of sectors"
rm -f l2.img; truncate -s 40M l2.img
luks_format luks2 l2.img "$pw" --sector-size 4096 || fail "luksFormat"
truncate -s $(( (40 << 20) + 2560 )) l2.img
check_volume l2.img - "$(luks_volume_key l2.img "$pw")" file=l2.img \
  passphrase=+pw
echo "PASS"
