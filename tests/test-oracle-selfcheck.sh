#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The oracle (tests/oracle.py) against implementations that share nothing
# with it or with the plugin, both directions, exact bytes:
#   - qemu's LUKS1 driver (qemu-img convert) and nbdkit's luks filter,
#     on LUKS1 images with 512-byte sectors;
#   - cryptsetup's offline reencryption (its userspace dm-crypt), on LUKS2
#     images with a detached header, 512- and 4096-byte sectors and every
#     IV generator the oracle claims.
# Ends with a negative control: a wrong IV offset must be caught.
# The quick run (default): LUKS1 with the plain64, essiv and plain IV
# generators and 128- and 256-bit keys, qemu and the luks filter, on
# 4 MiB images; LUKS2 with every IV generator and sector size, 2 MiB of
# data.  The full run (DMCRYPT_TEST_FULL=1) adds LUKS1 with a 512-bit
# XTS key and CBC through the luks filter, LUKS2 XTS with 4096-byte and
# CBC-ESSIV with 512-byte sectors, on 16 MiB and 8 MiB images.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
requires_oracle
requires_cmd cryptsetup qemu-img nbdkit nbdcopy
scratch
cd "$tmp" || fail "cd $tmp"

oracle selftest || fail "oracle selftest"

if full_run; then
  echo "full run: 5 LUKS1 cases on 16 MiB, 11 LUKS2 cases on 8 MiB"
  l1_size=16M l2_bytes=$((8 << 20))
else
  echo "quick run: 3 LUKS1 cases on 4 MiB, 9 LUKS2 cases on 2 MiB;" \
       "DMCRYPT_TEST_FULL=1 for all"
  l1_size=4M l2_bytes=$((2 << 20))
fi

pw=vm-test-passphrase
printf %s "$pw" > pw

# ---- LUKS1: qemu and the luks filter --------------------------------
luks1_case ()  # luks1_case CIPHER KEYBITS FILTER(yes|no)
{
  local cipher=$1 bits=$2 filter=$3 img=l1.img key size
  echo "LUKS1 $cipher, $bits-bit key"
  rm -f "$img"; truncate -s "$l1_size" "$img"
  luks_format luks1 "$img" "$pw" --cipher "$cipher" --key-size "$bits" \
    || fail "luksFormat $cipher"
  key=$(luks_volume_key "$img" "$pw")
  [ ${#key} -eq $((bits / 4)) ] || fail "volume key of ${#key} digits"
  size=$(oracle size "$img" --luks-key "$key") || fail "oracle size"
  expect_equal "payload bytes, oracle vs qemu" \
    "$(qemu_luks_size "$img" pw)" "$size"

  random_file a.bin "$size"
  qemu_luks_write a.bin "$img" pw || fail "qemu-img write"
  oracle decrypt "$img" a.out --luks-key "$key" || fail "oracle decrypt"
  expect_same "qemu wrote, oracle read" a.bin a.out

  random_file b.bin "$size"
  oracle encrypt b.bin "$img" --luks-key "$key" || fail "oracle encrypt"
  qemu_luks_read "$img" pw b.out || fail "qemu-img read"
  expect_same "oracle wrote, qemu read" b.bin b.out

  # A write that starts and ends inside sectors keeps their other bytes.
  random_file patch.bin 5000
  oracle encrypt patch.bin "$img" --luks-key "$key" --seek 70001 \
    || fail "oracle partial encrypt"
  dd if=patch.bin of=b.bin bs=1 seek=70001 conv=notrunc status=none
  qemu_luks_read "$img" pw c.out || fail "qemu-img read"
  expect_same "oracle patched 5000 bytes at 70001, qemu read" b.bin c.out
  oracle decrypt "$img" d.out --luks-key "$key" --seek 69000 \
    --length 7777 || fail "oracle partial decrypt"
  dd if=b.bin of=d.bin bs=1 skip=69000 count=7777 status=none
  expect_same "oracle partial read" d.bin d.out

  [ "$filter" = yes ] || return 0
  random_file e.bin "$size"
  serve_luks_filter "$img" pw 'nbdcopy e.bin "$uri"' \
    || fail "luks filter write"
  oracle decrypt "$img" e.out --luks-key "$key" || fail "oracle decrypt"
  expect_same "luks filter wrote, oracle read" e.bin e.out
  oracle encrypt b.bin "$img" --luks-key "$key" || fail "oracle encrypt"
  serve_luks_filter "$img" pw 'nbdcopy "$uri" f.out' \
    || fail "luks filter read"
  expect_same "oracle wrote, luks filter read" b.bin f.out
}

luks1_case aes-xts-plain64 256 yes
full_run && luks1_case aes-xts-plain64 512 yes
luks1_case aes-cbc-essiv:sha256 256 no
full_run && luks1_case aes-cbc-plain64 256 yes
luks1_case aes-cbc-plain 128 no

# ---- LUKS2: cryptsetup's offline reencryption -----------------------
# cryptsetup 2.6 decrypts LUKS2 offline only with a detached header, so
# the data area starts at byte 0 of the image.
# --disable-locks: an ordinary user cannot take the reencryption lock in
# /run/cryptsetup, and nothing else touches these scratch images.
reenc=(--batch-mode --key-file pw --force-offline-reencrypt --disable-locks)
fast=(--pbkdf pbkdf2 --pbkdf-force-iterations 1000)
luks2_case ()  # luks2_case CIPHER KEYBITS SECTOR_BYTES
{
  local cipher=$1 bits=$2 ss=$3 img=l2.img hdr=l2.hdr key opts
  echo "LUKS2 $cipher, $bits-bit key, $ss-byte sectors"
  random_file a.bin "$l2_bytes"
  cp a.bin "$img"; rm -f "$hdr"; truncate -s 4M "$hdr"
  cryptsetup reencrypt --encrypt --type luks2 --header "$hdr" \
    --cipher "$cipher" --key-size "$bits" --sector-size "$ss" "${fast[@]}" \
    "${reenc[@]}" "$img" >/dev/null || fail "cryptsetup reencrypt --encrypt"
  key=$(luks_volume_key "$hdr" "$pw")
  oracle table-from-luks "$img" "$key" --header "$hdr" >table \
    || fail "oracle table-from-luks"
  opts=""; [ "$ss" -ne 512 ] && opts=" 1 sector_size:$ss"
  expect_equal "table" \
    "0 $((l2_bytes / 512)) crypt $cipher $key 0 $img 0$opts" "$(cat table)"
  cmp -s a.bin "$img" && fail "reencrypt left the data in clear"
  oracle decrypt "$img" a.out --luks-key "$key" --header "$hdr" \
    || fail "oracle decrypt"
  expect_same "cryptsetup encrypted, oracle decrypted" a.bin a.out

  random_file b.bin "$l2_bytes"
  oracle encrypt b.bin "$img" --luks-key "$key" --header "$hdr" \
    || fail "oracle encrypt"
  cryptsetup reencrypt --decrypt --header "$hdr" "${reenc[@]}" "$img" \
    >/dev/null || fail "cryptsetup reencrypt --decrypt"
  expect_same "oracle encrypted, cryptsetup decrypted" b.bin "$img"
}

luks2_case aes-xts-plain64 512 512
full_run && luks2_case aes-xts-plain64 512 4096
full_run && luks2_case aes-cbc-essiv:sha256 256 512
luks2_case aes-cbc-essiv:sha256 256 4096
luks2_case aes-xts-plain64 256 2048
luks2_case aes-xts-plain 256 4096
luks2_case aes-cbc-plain64be 192 1024
luks2_case aes-cbc-benbi 256 4096
luks2_case aes-cbc-null 128 512
luks2_case aes-ecb 256 4096
luks2_case aes-cbc-eboiv 256 4096
# Not aes-xts-eboiv: cryptsetup's userspace eboiv encrypts the byte
# offset in ECB under the whole XTS key, where the kernel's
# crypt_iv_eboiv_gen runs a zero block through xts(aes) with it as IV.

# ---- Negative control -----------------------------------------------
# The comparisons above must be able to fail: the same image read with
# an IV offset one sector off decrypts to something else.
echo "negative control"
truncate -s 1M n.img
k=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
random_file n.bin $((1 << 20))
oracle encrypt n.bin n.img --table "0 2048 crypt aes-xts-plain64 $k 0 x 0" \
  || fail "oracle encrypt"
oracle decrypt n.img n.out --table "0 2048 crypt aes-xts-plain64 $k 1 x 0" \
  || fail "oracle decrypt"
cmp -s n.bin n.out && fail "an IV offset of 1 went unnoticed"
echo "  differs, as it must"
echo "PASS"
