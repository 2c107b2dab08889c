#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# TrueCrypt and VeraCrypt (type=tcrypt) on cryptsetup's own test images
# (tcrypt-images.tar.xz): every image that cryptsetup 2.6.1 maps on the
# Debian 12 kernel opens and holds the filesystem its test expects (UUID
# DEAD-BABE, hidden volumes CAFE-BABE, read with blkid -p from a copy of
# the export); normal, hidden, backup and system headers, PIM, key
# files, an empty and a 72-byte passphrase; every cipher, cascade, mode
# and hash; TrueCrypt's CBC volumes before 4.1 with one cipher, which
# the kernel maps with its tcw IV mode.  What the kernel cannot map is
# refused in one line, the image untouched.  The volume key equals cryptsetup tcryptDump's where
# libcryptsetup can decrypt the header here (AES), where it also reads
# the header itself and agrees with ours; the table's cascade
# decrypts the same through the oracle, a write lands where the oracle
# reads it and leaves the headers alone, -r writes nothing.
#
# VeraCrypt's key derivation is slow (500000 and more PBKDF2 rounds per
# hash): by default a subset that covers every case runs, with the hash
# given; DMCRYPT_TCRYPT_ALL=1 opens every image.
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/control-functions.sh"   # scratch, ctl, start_volume
requires_oracle
requires_cmd nbdkit nbdcopy nbdinfo tar xz blkid sha256sum
cd "$tmp" || fail "cd $tmp"

unpack_cryptsetup_images tcrypt-images.tar.xz
imgs=$tmp/tcrypt-images
[ -f "$imgs/keyfile1" ] \
  || fail "tcrypt-images.tar.xz holds no tcrypt-images/keyfile1"

# The passphrases of cryptsetup's tests/tcrypt-compat-test.
printf %s aaaaaaaaaaaa > pw
printf %s bbbbbbbbbbbb > pw-hidden
printf %s cccccccccccccccccccc > pw-pim
printf %s aaaaaaaaaaaabbbbbbbbbbbbccccccccccccddddddddddddeeeeeeeeeeeeffffffffffff \
  > pw72
printf %s wrong-passphrase > pw-wrong
kf=(keyfile="$imgs/keyfile1" keyfile="$imgs/keyfile2")

# uuid_of IMAGE ARGS...: the filesystem UUID of the export, read-only.
uuid_of ()
{
  local image=$1; shift
  rm -f export.img
  timeout "$compat_timeout" nbdkit -r -U - "$plugin" "$imgs/$image" \
    type=tcrypt "$@" --run 'nbdcopy "$uri" export.img' </dev/null \
    || fail "$image $*: did not open"
  blkid -p -s UUID -o value export.img
}

# opens IMAGE WANT ARGS...: the export holds the filesystem WANT, and
# the image is unchanged.
opens ()
{
  local image=$1 want=$2 before; shift 2
  before=$(sha256_of "$imgs/$image")
  expect_equal "$image $*" "$want" "$(uuid_of "$image" "$@")"
  expect_equal "$image: unchanged" "$before" "$(sha256_of "$imgs/$image")"
  echo "  ok: $image $*"
}

# refused WHAT PATTERN IMAGE ARGS...: IMAGE is one of the archive's.
refused ()
{
  local what=$1 pattern=$2 image=$3; shift 3
  expect_refused "$what" "$pattern" "$imgs/$image" "$@"
}

# HASH of an image name: tc_5-sha512-xts-aes -> sha512.
hash_of () { local h=${1#*-}; echo "${h%%-*}"; }

echo "every cipher, cascade, mode and hash (TrueCrypt)"
for image in tc_5-sha512-xts-aes tc_3-ripemd160-xts-serpent \
             tc_4-sha512-xts-twofish tc_4-sha512-xts-aes-twofish \
             tc_5-sha512-xts-serpent-twofish-aes \
             tc_5-sha512-xts-twofish-serpent tc_4-sha512-xts-serpent-aes \
             tc_5-whirlpool-xts-aes tc_2-ripemd160-lrw-aes \
             tc_2-ripemd160-lrw-serpent-twofish-aes; do
  opens "$image" DEAD-BABE passphrase=+pw tcrypt-hash="$(hash_of "$image")"
done

echo "TrueCrypt 1 and 2 CBC with one cipher: cbc-tcw"
for image in tc_1-ripemd160-cbc-aes tc_1-sha1-cbc-aes tc_1-sha1-cbc-cast5 \
             tc_1-sha1-cbc-des3_ede tc_2-ripemd160-cbc-aes \
             tc_2-ripemd160-cbc-twofish tc_2-whirlpool-cbc-aes \
             tc_2-ripemd160-cbc-aes-hidden; do
  opens "$image" DEAD-BABE passphrase=+pw tcrypt-hash="$(hash_of "$image")"
done
opens tc_2-ripemd160-cbc-aes-hidden CAFE-BABE passphrase=+pw-hidden \
  tcrypt-hidden=1 tcrypt-hash=ripemd160
start_volume tcw file="$imgs/tc_1-sha1-cbc-cast5" type=tcrypt \
  passphrase=+pw tcrypt-hash=sha1 || fail "tc_1-sha1-cbc-cast5 did not start"
set -- $(ctl table --showkeys tcw)
stop_volume tcw
# TCRYPT_activate: the cipher's 16-byte key, then the 8-byte IV seed
# and the 16-byte whitening key; IV offset and data offset both the
# header's key offset (sector 1).
expect_equal "cbc-tcw cipher spec" cast5-cbc-tcw "$4"
expect_equal "cbc-tcw key size (16 + 8 + 16 bytes)" 80 "${#5}"
expect_equal "cbc-tcw IV offset" 1 "$6"
expect_equal "cbc-tcw data offset" 1 "$8"

echo "hash auto-detection"
opens tc_5-sha512-xts-serpent-twofish-aes DEAD-BABE passphrase=+pw
opens vc_1-sha512-xts-aes DEAD-BABE passphrase=+pw

echo "hidden volumes, backup headers"
opens tc_2-ripemd160-lrw-aes-hidden CAFE-BABE passphrase=+pw-hidden \
  tcrypt-hidden=1 tcrypt-hash=ripemd160
opens tc_5-sha512-xts-serpent-twofish-aes-hidden CAFE-BABE \
  passphrase=+pw-hidden tcrypt-hidden=yes tcrypt-hash=sha512
opens tc_5-sha512-xts-serpent-twofish-aes DEAD-BABE passphrase=+pw \
  tcrypt-backup=1 tcrypt-hash=sha512
opens tc_4-sha512-xts-aes-hidden CAFE-BABE passphrase=+pw-hidden \
  tcrypt-hidden=1 tcrypt-backup=1 tcrypt-hash=sha512

echo "VeraCrypt: camellia, system volume, PIM, key files"
opens vc_1-sha512-xts-camellia DEAD-BABE passphrase=+pw tcrypt-hash=sha512
opens sys_vc_1_gpt_part-sha512-xts-aes DEAD-BABE passphrase=+pw \
  tcrypt-system=1 tcrypt-hash=sha512
opens vcpim_1_1234-sha256-xts-aes DEAD-BABE passphrase=+pw-pim \
  veracrypt-pim=1234 tcrypt-hash=sha256
opens tck_5-sha512-xts-aes DEAD-BABE passphrase=+pw "${kf[@]}" \
  tcrypt-hash=sha512
opens vck_1_nopw-sha512-xts-aes DEAD-BABE "${kf[@]}" tcrypt-hash=sha512

echo "a key file through a pipe (/dev/fd/3), whose bytes come once"
rm -f export.img
timeout "$compat_timeout" nbdkit -r -U - "$plugin" \
  "$imgs/tck_5-sha512-xts-aes" type=tcrypt passphrase=+pw \
  keyfile=/dev/fd/3 keyfile="$imgs/keyfile2" tcrypt-hash=sha512 \
  --run 'nbdcopy "$uri" export.img' 3< <(cat "$imgs/keyfile1") </dev/null \
  || fail "key file through a pipe: did not open"
expect_equal "key file through a pipe" DEAD-BABE \
  "$(blkid -p -s UUID -o value export.img)"

if [ "${DMCRYPT_TCRYPT_ALL:-0}" = 1 ]; then
  echo "DMCRYPT_TCRYPT_ALL: every image the kernel maps"
  for path in "$imgs"/[tv]c_*; do
    image=${path##*/}
    case $image in
      *-cbc-*|*kuznyechik*|*argon2*|*blake2s*|*stribog*) continue ;;
      *-hidden) opens "$image" CAFE-BABE passphrase=+pw-hidden \
                  tcrypt-hidden=1 tcrypt-hash="$(hash_of "$image")" ;;
    esac
    opens "$image" DEAD-BABE passphrase=+pw tcrypt-hash="$(hash_of "$image")"
  done
  opens sys_vc_1_mbr_part-sha256-xts-aes DEAD-BABE passphrase=+pw \
    tcrypt-system=1
  opens vcpim_1_1234-sha256-xts-aes DEAD-BABE passphrase=+pw-pim \
    veracrypt-pim=1234
  for image in vck_1_pw72-sha512-xts-aes vck_1_pw72-sha256-xts-aes; do
    opens "$image" DEAD-BABE passphrase=+pw72 "${kf[@]}"
  done
  for image in vck_1_pw12-sha512-xts-aes vck_1-sha512-xts-aes \
               vck_1_nopw-sha256-xts-aes; do
    pwarg=(passphrase=+pw)
    case $image in *nopw*) pwarg=() ;; esac
    opens "$image" DEAD-BABE "${pwarg[@]}" "${kf[@]}"
  done

  echo "a whole-disk system volume: the partition inside the mapping"
  # cryptsetup maps a system volume on a device without partitions from
  # the encrypted area to the end; the disk put back together (the
  # unencrypted start of the image, then the mapping) holds the MBR's
  # partition with the filesystem at its start.
  image=sys_vc_1_mbr_full-sha256-xts-aes
  rm -f export.img
  timeout "$compat_timeout" nbdkit -r -U - "$plugin" "$imgs/$image" \
    type=tcrypt passphrase=+pw tcrypt-system=1 tcrypt-hash=sha256 \
    --run 'nbdcopy "$uri" export.img' </dev/null || fail "$image: did not open"
  cp "$imgs/$image" disk.img
  dd if=export.img of=disk.img bs=512 conv=notrunc status=none \
    seek=$(( ($(stat -c %s disk.img) - $(stat -c %s export.img)) / 512 ))
  part_start=$(od -An -tu4 -j $((446 + 8)) -N4 disk.img | tr -d ' ')
  expect_equal "$image: partition UUID" DEAD-BABE \
    "$(blkid -p -O $((part_start * 512)) -s UUID -o value disk.img)"
fi

echo "volume keys: cryptsetup tcryptDump where it can decrypt the header"
if command -v cryptsetup >/dev/null; then
  for image in tc_5-sha512-xts-aes tc_4-sha512-xts-aes; do
    # (For tcrypt, --key-file is a TrueCrypt key file: the passphrase
    # comes on stdin.)
    want=$(cryptsetup tcryptDump --dump-volume-key -q --hash sha512 \
             "$imgs/$image" <pw 2>/dev/null \
           | sed -n '/MK dump:/,$p' | sed 's/MK dump://' | tr -d ' \t\n')
    [ -n "$want" ] || fail "$image: cryptsetup tcryptDump gave no key"
    start_volume vk file="$imgs/$image" type=tcrypt passphrase=+pw \
      tcrypt-hash=sha512 || fail "$image did not start"
    got=$(ctl table --showkeys vk | cut -d' ' -f5)
    stop_volume vk
    expect_equal "$image: volume key" "$want" "$got"
  done
else
  echo "  (cryptsetup is not installed: no key comparison)"
fi

echo "libcryptsetup reads the header where it can, and agrees"
timeout "$compat_timeout" nbdkit -v -r -U - "$plugin" \
  "$imgs/tc_5-sha512-xts-aes" type=tcrypt passphrase=+pw tcrypt-hash=sha512 \
  --run 'nbdinfo --size "$uri"' </dev/null >lib.log 2>&1 \
  || { cat lib.log; fail "tc_5-sha512-xts-aes -v did not open"; }
grep -q "libcryptsetup reads the header: aes-xts-plain64" lib.log \
  || { grep TCRYPT lib.log; fail "libcryptsetup did not read the AES header"; }

echo "dmcryptctl: a cascade is one table line, the oracle decrypts it"
image=tc_5-sha512-xts-serpent-twofish-aes
cp "$imgs/$image" rw.img
start_volume cas file="$tmp/rw.img" type=tcrypt passphrase=+pw \
  tcrypt-hash=sha512 || fail "cascade did not start"
line=$(ctl table --showkeys cas) || fail "dmcryptctl table --showkeys"
ctl ls | grep -qw tcrypt || { ctl ls; fail "dmcryptctl ls: not tcrypt"; }
ctl info cas | grep -q "UUID: *CRYPT-TCRYPT-cas" \
  || { ctl info cas; fail "dmcryptctl info: no CRYPT-TCRYPT UUID"; }
stop_volume cas
set -- $line
# The images are named in TrueCrypt's order of the chain; cryptsetup
# names it the other way round.
expect_equal "cipher spec" aes-twofish-serpent-xts-plain64 "$4"
expect_equal "key size (3 x 64 bytes)" 384 "${#5}"
expect_equal "IV offset = data offset" "$8" "$6"
oracle decrypt rw.img oracle.img --table "$line" || fail "oracle decrypt"
uuid_of "$image" passphrase=+pw tcrypt-hash=sha512 >/dev/null
expect_same "oracle's plaintext, ours" oracle.img export.img

echo "write through the cascade, read back, reopen, headers unchanged"
offset_bytes=$(( $8 * 512 ))
head_sha=$(head -c "$offset_bytes" rw.img | sha256sum)
tail_sha=$(tail -c 131072 rw.img | sha256sum)
cp export.img plain.img
random_file chunk.bin 8192
dd if=chunk.bin of=plain.img bs=8192 seek=5000 oflag=seek_bytes \
  conv=notrunc status=none
expect_equal "the write stays inside the volume" "$(stat -c %s export.img)" \
  "$(stat -c %s plain.img)"
timeout "$compat_timeout" nbdkit -U - "$plugin" rw.img type=tcrypt \
  passphrase=+pw tcrypt-hash=sha512 --run 'nbdcopy plain.img "$uri"' \
  </dev/null || fail "write through the cascade"
uuid_of_rw () {
  rm -f back.img
  timeout "$compat_timeout" nbdkit -r -U - "$plugin" rw.img type=tcrypt \
    passphrase=+pw tcrypt-hash=sha512 --run 'nbdcopy "$uri" back.img' \
    </dev/null || fail "reopen after the write"
}
uuid_of_rw
expect_same "read back after reopening" plain.img back.img
expect_equal "header area unchanged" "$head_sha" \
  "$(head -c "$offset_bytes" rw.img | sha256sum)"
expect_equal "backup headers unchanged" "$tail_sha" \
  "$(tail -c 131072 rw.img | sha256sum)"
oracle decrypt rw.img oracle.img --table "$line" || fail "oracle decrypt"
expect_same "the oracle reads the write" plain.img oracle.img

echo "-r writes nothing"
before=$(sha256_of rw.img)
timeout "$compat_timeout" nbdkit -r -U - "$plugin" rw.img type=tcrypt \
  passphrase=+pw tcrypt-hash=sha512 \
  --run 'nbdcopy chunk.bin "$uri" 2>/dev/null; true' </dev/null \
  || fail "-r server"
expect_equal "-r: image sha256 unchanged" "$before" "$(sha256_of rw.img)"

echo "refusals"
refused "no type=: TCRYPT has no magic" "needs type=tcrypt" \
  tc_5-sha512-xts-aes passphrase=+pw
refused "wrong passphrase" "no TCRYPT header matched: wrong passphrase" \
  tc_5-sha512-xts-aes type=tcrypt passphrase=+pw-wrong tcrypt-hash=sha512
refused "Kuznyechik" "kuznyechik" vc_1-sha512-xts-kuznyechik type=tcrypt \
  passphrase=+pw tcrypt-hash=sha512
# cryptsetup: "Kernel does not support activation for this TCRYPT
# legacy mode" (the cascades' cbci-tcrypt, Blowfish's cbc-tcrypt).
for image in tc_1-sha1-cbc-blowfish tc_1-ripemd160-cbc-blowfish \
             tc_2-ripemd160-cbc-aes-blowfish \
             tc_2-ripemd160-cbc-aes-blowfish-serpent \
             tc_2-ripemd160-cbc-aes-twofish \
             tc_2-ripemd160-cbc-aes-twofish-serpent \
             tc_2-ripemd160-cbc-serpent-aes \
             tc_2-ripemd160-cbc-serpent-twofish-aes \
             tc_2-ripemd160-cbc-twofish-serpent; do
  refused "TrueCrypt CBC the kernel cannot map: $image" \
    "no TCRYPT header matched: .*TrueCrypt's CBC cascades and Blowfish" \
    "$image" type=tcrypt passphrase=+pw tcrypt-hash="$(hash_of "$image")"
done
refused "VeraCrypt Argon2id" "argon2id is not supported" \
  vc_1-argon2id-xts-aes type=tcrypt passphrase=+pw tcrypt-hash=argon2id
refused "VeraCrypt BLAKE2s" "blake2s-256 is not supported" \
  vc_1-blake2s-xts-aes type=tcrypt passphrase=+pw tcrypt-hash=blake2s-256
refused "VeraCrypt Streebog" "stribog512 is not supported" \
  vc_1-stribog512-xts-camellia type=tcrypt passphrase=+pw \
  tcrypt-hash=stribog512
refused "unknown hash" "unknown hash 'md5'" tc_5-sha512-xts-aes \
  type=tcrypt passphrase=+pw tcrypt-hash=md5
refused "tcrypt options without type=tcrypt" "need type=tcrypt" \
  tc_5-sha512-xts-aes passphrase=+pw tcrypt-hidden=1
refused "two key files for LUKS" "keyfile given more than once" \
  tc_5-sha512-xts-aes "${kf[@]}"
refused "key-slot" "no keyslots|not type=tcrypt" tc_5-sha512-xts-aes \
  type=tcrypt passphrase=+pw key-slot=0
refused "missing key file" "key file .*No such file" tc_5-sha512-xts-aes \
  type=tcrypt passphrase=+pw keyfile=/nonexistent tcrypt-hash=sha512
echo "PASS"
