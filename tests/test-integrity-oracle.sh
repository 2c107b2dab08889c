#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The oracle's dm-integrity model (tests/oracle_integrity.py) against the
# images the kernel made (tests/data/integrity/, MANIFEST; made by
# tests/kernel/make-integrity-images.sh): for each image the oracle must
# read the mapping the kernel read, byte for byte by sha256 (the dirty
# journal's after replaying it in memory), the same size, the same runs
# of failed sectors (--integrity-no-wipe), and the pattern where it was
# written.  The dirty journal must hold entries whose data are not in
# the data area (without replay the sha256 differs), and a flipped byte
# in a block or in a LUKS2 sector must fail that block alone.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/integrity-functions.sh"
requires_oracle
requires_cmd xz sha256sum
data=$integrity_data
[ -s "$data/MANIFEST" ] || fail "no $data/MANIFEST"
scratch
cd "$tmp" || fail "cd $tmp"

nimages=0
while IFS= read -r line; do
  case $line in '#'*|'') continue ;; esac
  name=$(field "$line" name)
  xz -dc "$data/$(field "$line" file)" > "$name.img" \
    || fail "$name: xz -d"
  expect_equal "$name: image sha256" "$(field "$line" image_sha256)" \
    "$(sha256sum < "$name.img" | cut -d' ' -f1)"
  # shellcheck disable=SC2046
  oracle integrity-read "$name.img" --out "$name.out" \
    $(oracle_args "$line") > "$name.txt" || fail "$name: oracle failed"
  expect_equal "$name: size" "$(field "$line" mapped_bytes)" \
    "$(awk '$1 == "size" { print $2 }' "$name.txt")"
  expect_equal "$name: sector size" "$(field "$line" sector_bytes)" \
    "$(awk '$1 == "sector_size" { print $2 }' "$name.txt")"
  expect_equal "$name: sha256 of the mapping" "$(field "$line" sha256)" \
    "$(awk '$1 == "sha256" { print $2 }' "$name.txt")"
  expect_equal "$name: runs that fail to read" "$(field "$line" errors)" \
    "$(bad_runs "$name.txt")"
  for r in $(field "$line" ranges | tr , ' '); do
    off=${r%%+*} rest=${r#*+}
    len=${rest%%:*} sum=${rest#*:}
    expect_equal "$name: pattern at $off+$len" "$sum" \
      "$(tail -c +$((off + 1)) "$name.out" | head -c "$len" \
         | sha256sum | cut -d' ' -f1)"
  done
  echo "  ok: $name ($(field "$line" mapped_bytes) bytes)"
  nimages=$((nimages + 1))
done < "$data/MANIFEST"
[ "$nimages" -ge 10 ] || fail "only $nimages images in the MANIFEST"

# The dirty journal: the kernel read the same before the crash and after
# replaying; the data area alone holds something else.
line=$(grep '^name=int-dirty	' "$data/MANIFEST") || fail "no int-dirty"
expect_equal "int-dirty: the kernel before the crash and after replay" \
  "$(field "$line" before_crash.sha256)" "$(field "$line" sha256)"
# shellcheck disable=SC2046
oracle integrity-check int-dirty.img $(oracle_args "$line") > dirty.txt \
  || fail "int-dirty: integrity-check"
n=$(awk '$1 == "journal" { for (i = 2; i < NF; i++)
           if ($i == "not_in_data_area") print $(i + 1) }' dirty.txt)
[ "${n:-0}" -gt 0 ] || fail "int-dirty: no journal entry outside the data area"
echo "  ok: int-dirty: $n journal entries not in the data area"
# shellcheck disable=SC2046
oracle integrity-read int-dirty.img --out /dev/null --no-replay \
  $(oracle_args "$line") > noreplay.txt || fail "int-dirty: --no-replay"
[ "$(awk '$1 == "sha256" { print $2 }' noreplay.txt)" != \
  "$(field "$line" sha256)" ] \
  || fail "int-dirty: the data area alone reads as the replayed journal"

# A flipped byte fails its block alone: in the first data block of a
# crc32c image, and in the first sector of an AES-GCM one.
for name in int-crc32c luks2-aes-gcm; do
  line=$(grep "^name=$name	" "$data/MANIFEST") || fail "no $name"
  first=$(first_data_byte "$name.img" "$line")
  flip "$name.img" $((first + 100))
  # shellcheck disable=SC2046
  oracle integrity-read "$name.img" --out /dev/null \
    $(oracle_args "$line") > flipped.txt || fail "$name: oracle failed"
  expect_equal "$name: a flipped byte in block 0" \
    "0+$(field "$line" sector_bytes)" "$(bad_runs flipped.txt)"
  echo "  ok: $name: a flipped byte fails block 0 alone"
done
