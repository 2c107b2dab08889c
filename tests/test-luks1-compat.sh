#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# LUKS1 images: the plugin against nbdkit's luks filter and qemu's LUKS1
# driver, both directions, exact bytes, and the same export size.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_cmd cryptsetup qemu-img nbdkit nbdcopy nbdinfo
scratch
cd "$tmp" || fail "cd $tmp"

pw=vm-test-passphrase
printf %s "$pw" > pw

luks1_case ()  # luks1_case CIPHER KEYBITS FILTER(yes|no)
{
  local cipher=$1 bits=$2 filter=$3 img=l1.img size
  echo "LUKS1 $cipher, $bits-bit key"
  rm -f "$img"; truncate -s 24M "$img"
  luks_format luks1 "$img" "$pw" --cipher "$cipher" --key-size "$bits" \
    || fail "luksFormat $cipher"
  size=$(serve_dmcrypt 'nbdinfo --size "$uri"' file="$img" \
         passphrase=+pw) || fail "plugin did not serve $cipher"
  expect_equal "export size, qemu vs plugin" \
    "$(qemu_luks_size "$img" pw)" "$size"
  if [ "$filter" = yes ]; then
    expect_equal "export size, luks filter vs plugin" \
      "$(serve_luks_filter "$img" pw 'nbdinfo --size "$uri"')" "$size"
  fi

  # Plugin writes; the others read.
  random_file a.bin "$size"
  serve_dmcrypt 'nbdcopy a.bin "$uri"' file="$img" passphrase=+pw \
    || fail "plugin write"
  qemu_luks_read "$img" pw a.qemu || fail "qemu-img read"
  expect_same "plugin wrote, qemu read" a.bin a.qemu
  if [ "$filter" = yes ]; then
    serve_luks_filter "$img" pw 'nbdcopy "$uri" a.filter' \
      || fail "luks filter read"
    expect_same "plugin wrote, luks filter read" a.bin a.filter
  fi

  # The others write; the plugin reads.
  random_file b.bin "$size"
  qemu_luks_write b.bin "$img" pw || fail "qemu-img write"
  serve_dmcrypt 'nbdcopy "$uri" b.out' file="$img" passphrase=+pw \
    || fail "plugin read"
  expect_same "qemu wrote, plugin read" b.bin b.out
  if [ "$filter" = yes ]; then
    random_file c.bin "$size"
    serve_luks_filter "$img" pw 'nbdcopy c.bin "$uri"' \
      || fail "luks filter write"
    serve_dmcrypt 'nbdcopy "$uri" c.out' file="$img" passphrase=+pw \
      || fail "plugin read"
    expect_same "luks filter wrote, plugin read" c.bin c.out
  fi

  # The header and keyslots (all bytes before the payload) are the
  # plugin's to read, never to write.
  local hdr_bytes hdr_before
  hdr_bytes=$(( $(stat -c %s "$img") - size ))
  hdr_before=$(head -c "$hdr_bytes" "$img" | sha256sum)
  serve_dmcrypt 'nbdcopy a.bin "$uri"' file="$img" passphrase=+pw \
    || fail "plugin write"
  expect_equal "sha256 of the $hdr_bytes header bytes after a write" \
    "$hdr_before" "$(head -c "$hdr_bytes" "$img" | sha256sum)"
}

luks1_case aes-xts-plain64 256 yes
luks1_case aes-xts-plain64 512 yes
luks1_case aes-cbc-essiv:sha256 256 no
luks1_case aes-cbc-plain64 256 yes
echo "PASS"
