#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dm-integrity and LUKS2 with integrity against what the kernel made and
# read (tests/data/integrity/, MANIFEST): every image, LUKS2 (hmac-sha256,
# -sha512, aes-cbc-essiv, aes-gcm-random, chacha20-poly1305, 4096-byte
# sectors, --integrity-no-wipe) and integritysetup's alone (crc32c,
# sha256, hmac-sha256, 4096-byte blocks, bitmap mode, 2048-sector
# interleave, 8-byte tags, a journal left dirty), must read as the
# kernel read it, read-only without a byte of the image changing, with
# the failing runs failing with EIO; the tables and statuses dmcryptctl
# shows must be the kernel's.  Then writes (unaligned, several sectors)
# must read back through dmcrypt and through the independent oracle's
# model of the layout, tags and journal (tests/oracle_integrity.py); a
# flipped byte must fail its sector alone, logged and counted; the dirty
# journal must be written back by a read-write open.
source "$(dirname "$0")/functions.sh"
source "$srcdir/integrity-functions.sh"
source "$srcdir/control-functions.sh"
requires_oracle
requires_cmd xz nbdkit
cd "$tmp" || fail "cd $tmp"
blocks="$PY $srcdir/nbd-blocks.py"

# The plugin's parameters for the image of LINE (its copy at IMG).
plugin_args ()  # plugin_args LINE
{
  local hash key
  if [ "$(field "$1" kind)" = luks2 ]; then
    printf '%s' "$(field "$1" passphrase)" > pw
    echo "passphrase=+$tmp/pw"
    return
  fi
  hash=$(internal_hash "$1")
  echo "type=integrity integrity=$hash"
  key=$(field "$1" key_file)
  [ -z "$key" ] || echo "integrity-key-file=$integrity_data/$key"
}

# Reads the whole export of IMG block by block ("size", "bad" lines).
read_image ()  # read_image IMG OUT LINE [nbdkit-args]
{
  local img=$1 out=$2 line=$3; shift 3
  # shellcheck disable=SC2046
  serve_dmcrypt "$blocks read \$uri $out --block $(field "$line" sector_bytes)" \
    "$@" file="$img" $(plugin_args "$line") > "$out.txt" 2> "$out.log" \
    || { cat "$out.log"; fail "$img: read through dmcrypt"; }
}

nimages=0
while IFS= read -r line; do
  case $line in '#'*|'') continue ;; esac
  name=$(field "$line" name)
  xz -dc "$integrity_data/$(field "$line" file)" > "$name.img" \
    || fail "$name: xz -d"
  before=$(sha256_of "$name.img")
  read_image "$name.img" "$name.out" "$line" -r
  expect_equal "$name: image unchanged by a read-only open" "$before" \
    "$(sha256_of "$name.img")"
  expect_equal "$name: size" "$(field "$line" mapped_bytes)" \
    "$(awk '$1 == "size" { print $2 }' "$name.out.txt")"
  expect_equal "$name: sha256 of the mapping (failed runs as zeros)" \
    "$(field "$line" sha256)" "$(sha256_of "$name.out")"
  expect_equal "$name: runs that fail to read" "$(field "$line" errors)" \
    "$(bad_runs "$name.out.txt")"
  if grep -q '^bad ' "$name.out.txt"; then
    grep -v '^bad .* EIO$' "$name.out.txt" | grep '^bad ' \
      && fail "$name: a read failed with another error than EIO"
    grep -q 'INTEGRITY AEAD ERROR, sector' "$name.out.log" \
      || fail "$name: no failing sector named in the log"
  fi
  echo "  ok: $name: $(field "$line" mapped_bytes) bytes as the kernel read them"
  nimages=$((nimages + 1))
done < "$integrity_data/MANIFEST"
[ "$nimages" -ge 15 ] || fail "only $nimages images in the MANIFEST"

# dmsetup's view: the crypt target over NAME_dif, or the integrity target
# alone, device fields masked (the guest's are its own).
mask () { sed -E 's/ (crypt|integrity) ([^ ]+ [^ ]+ )?[0-9]+:[0-9]+ / \1 \2DEV /; s/ (crypt [^ ]+ [^ ]+ [0-9]+) [^ ]+ / \1 DEV /; s/ integrity [^ ]+ / integrity DEV /'; }
for name in luks2-hmac-sha256 luks2-aes-gcm luks2-hmac-sha256-4k int-hmac-sha256 int-bitmap; do
  line=$(manifest_line "$name")
  mode=
  case $(field "$line" table.integrity) in *" B "*) mode=integrity-mode=bitmap ;; esac
  # shellcheck disable=SC2046
  start_volume "$name" -r file="$tmp/$name.img" $(plugin_args "$line") $mode \
    || fail "$name: start"
  if [ "$(field "$line" kind)" = luks2 ]; then
    expect_equal "$name: table" "$(field "$line" table.crypt | mask)" \
      "$(ctl table "$name" | mask)"
    expect_equal "$name: status" "$(field "$line" status.crypt)" \
      "$(ctl status "$name")"
    dif=${name}_dif
  else
    dif=$name
  fi
  expect_equal "$dif: table" "$(field "$line" table.integrity | mask)" \
    "$(ctl table "$dif" | mask)"
  expect_equal "$dif: status" "$(field "$line" status.integrity)" \
    "$(ctl status "$dif")"
  ctl table > all.txt || fail "$name: table of every volume"
  grep -q "^$dif: .* integrity " all.txt \
    || { cat all.txt; fail "$name: no $dif line in the table of every volume"; }
  stop_volume "$name"
  echo "  ok: $name: table and status as dmsetup showed the kernel's"
done

# Writes, unaligned and over several sectors, read back through dmcrypt
# and through the oracle; then every block of the image verifies.
random_file data 70000
for name in luks2-hmac-sha256 luks2-hmac-sha256-4k luks2-aes-gcm \
            luks2-chacha20-poly1305 luks2-cbc-essiv-hmac-sha256 \
            luks2-hmac-sha512 int-crc32c int-4k int-hmac-sha256 int-tag8; do
  line=$(manifest_line "$name")
  size=$(field "$line" mapped_bytes)
  cp "$name.out" expect
  for off in 1000 $((size / 2 + 4095)) $((size - 70000)); do
    dd if=data of=expect bs=1 seek="$off" conv=notrunc status=none
    # shellcheck disable=SC2046
    serve_dmcrypt "$blocks write \$uri $off data" file="$tmp/$name.img" \
      $(plugin_args "$line") 2> write.log \
      || { cat write.log; fail "$name: write at $off"; }
  done
  read_image "$name.img" "$name.new" "$line" -r
  expect_same "$name: written through dmcrypt, read back" expect "$name.new"
  # shellcheck disable=SC2046
  oracle integrity-read "$name.img" --out oracle.out $(oracle_args "$line") \
    > check.txt || fail "$name: the oracle failed"
  if grep '^bad ' check.txt; then
    fail "$name: the oracle finds bad tags (above)"
  fi
  expect_same "$name: read by the oracle" expect oracle.out
done

# A flipped bit in a data block fails that sector alone, with EIO, named
# once in the log however often it is read and counted by status --stats; the rest reads.
for name in luks2-hmac-sha256 int-crc32c; do
  line=$(manifest_line "$name")
  ss=$(field "$line" sector_bytes)
  flip "$name.img" $(( $(first_data_byte "$name.img" "$line") + 7 ))
  # shellcheck disable=SC2046
  serve_dmcrypt "$blocks read \$uri flipped.out --block $ss > /dev/null &&
                 $blocks read \$uri flipped.out --block $ss > flipped.txt &&
                 $ctl_bin status --stats $name > stats.txt" \
    -r name="$name" file="$tmp/$name.img" $(plugin_args "$line") \
    2> flipped.log || { cat flipped.log; fail "$name: read"; }
  expect_equal "$name: the flipped sector fails alone" "0+$ss" \
    "$(bad_runs flipped.txt)"
  grep -q ' EIO$' flipped.txt || fail "$name: not EIO"
  n=$(sed -n 's/^integrity_failures: //p' stats.txt)
  [ "${n:-0}" -ge 1 ] || fail "$name: status --stats counts no failure"
  grep -cE 'INTEGRITY AEAD ERROR, sector 0$|Checksum failed at sector 0x0$' \
    flipped.log | grep -qx 1 \
    || { cat flipped.log; fail "$name: the bad sector is not named once"; }
  echo "  ok: $name: a flipped bit fails its sector alone (EIO, logged once, counted $n)"
done

# The journal the kernel left: a read-write open replays it into the
# areas, after which the data area alone holds what the kernel read.
line=$(manifest_line int-dirty)
xz -dc "$integrity_data/$(field "$line" file)" > dirty.img
# shellcheck disable=SC2046
serve_dmcrypt "nbdinfo --size \$uri" file="$tmp/dirty.img" \
  $(plugin_args "$line") > /dev/null || fail "int-dirty: read-write open"
# shellcheck disable=SC2046
oracle integrity-read dirty.img --out /dev/null --no-replay \
  $(oracle_args "$line") > replayed.txt || fail "int-dirty: oracle"
expect_equal "int-dirty: the data area after a read-write open" \
  "$(field "$line" sha256)" "$(awk '$1 == "sha256" { print $2 }' replayed.txt)"
echo PASS
