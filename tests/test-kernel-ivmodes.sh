#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's last IV modes, tcw (TrueCrypt CBC before 4.1) and lmk
# (loop-AES), against the real kernel in one boot (tests/kernel/kernel.sh,
# docs/kernel-tests.md).  The cases: dmsetup tables with tcw (a 16- and
# an 8-byte block cipher) and lmk (64 keys, 64 keys and an IV seed, the
# capi: form); "cryptsetup loopaesOpen" with key files of 1, 64 and 65
# keys against type=loopaes keyfile=; "cryptsetup tcryptOpen" of
# TrueCrypt 1 and 2 CBC images against type=tcrypt.  For each:
#   A. the host writes random data over the whole mapping through
#      dmcrypt; the kernel's mapping has its sha256;
#   B. the guest writes other data over the second half and a known
#      pattern at sectors KAT_SECTOR and the next (the tables' cases);
#      dmcrypt reads the whole mapping as the kernel reads it;
#   C. dmsetup table --showkeys and dmsetup info equal dmcryptctl's
#      (device field, open count and device numbers aside);
#   D. the tables' cases: the ciphertext the kernel wrote for the
#      pattern equals tests/data/kernel-ivmodes.kat, the known answers
#      that tests/unit/test-ivmodes checks without the kernel.
#      DMCRYPT_KAT_WRITE=FILE writes them there instead.
# Each case prints PASS or FAIL with its name.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/kernel/kernel.sh"
plugin_built_or_fail
ctl="$topdir/tools/dmcryptctl"
[ -x "$ctl" ] || fail "$ctl is not built: run make first"
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo python3 tar xz
kat=$topdir/tests/data/kernel-ivmodes.kat
kat_write=${DMCRYPT_KAT_WRITE:-}
[ -n "$kat_write" ] || [ -f "$kat" ] || fail "$kat is missing"
scratch
cd "$tmp" || fail "cd $tmp"
kernel_setup
mkdir -p boot/guest

KAT_SECTOR=70        # 70 and 71: two of lmk's 64 keys, past sector 64

# The known-answer keys: SHA-512 of "NAME-I", I = 0, 1 ..., cut to
# BYTES; the pattern: byte I of mapping sector S is (7 I + 13 S + 1)
# mod 256 (tests/unit/test-ivmodes.c makes the same).
kat_key () { python3 -c 'import hashlib, sys
n, size = sys.argv[1], int(sys.argv[2])
k = b"".join(hashlib.sha512(f"{n}-{i}".encode()).digest()
             for i in range(size // 64 + 1))
print(k[:size].hex())' "$1" "$2"; }
pattern () { python3 -c 'import sys
s = int(sys.argv[1])
sys.stdout.buffer.write(bytes((7 * i + 13 * (s + i // 512) + 1) % 256
                              for i in range(1024)))' "$1"; }
pattern "$KAT_SECTOR" > boot/guest/pattern

# NAME SPEC KEY_BYTES IV_OFFSET OFFSET: dmsetup tables over 4 MiB images.
table_cases=(
  "tcw-aes aes-cbc-tcw 64 3 8"
  "tcw-des3 des3_ede-cbc-tcw 48 0 0"
  "lmk-v2 aes:64-cbc-lmk 1024 0 0"
  "lmk-v3 aes:64-cbc-lmk 2080 7 8"
  "lmk-capi capi:cbc(aes)-lmk 1040 0 0"
)
# NAME KEYS cryptsetup-loopaesOpen-options: the same in dmcrypt's names.
loopaes_cases=(
  "loopaes-v1 1"
  "loopaes-v2 64 --key-size 128"
  "loopaes-v3 65 --offset 8 --skip 3 --hash sha256"
)
# TrueCrypt images of cryptsetup's test set (passphrase aaaaaaaaaaaa).
tcrypt_cases="tc_1-sha1-cbc-aes tc_2-ripemd160-cbc-twofish tc_1-sha1-cbc-cast5"

drives=() names=() i=0
next_dev () { dev=/dev/vd$(printf "\\x$(printf %x $((97 + i)))"); i=$((i + 1)); }
echo 'set -u' > guest.sh

# host_a NAME ARGS...: step A on the host, and dmcrypt's table and info;
# the guest's data for the second half, from sector $c.half on.
host_a ()
{
  local c=$1 size; shift
  size=$(serve_dmcrypt 'nbdinfo --size "$uri"' "$@") \
    || fail "$c: dmcrypt did not open"
  random_file "$c.a" "$size"
  echo $(( size / 1024 )) > "$c.half"
  random_file "boot/guest/$c.b" $(( size - size / 1024 * 512 ))
  serve_dmcrypt 'nbdcopy "'"$c.a"'" "$uri" &&
    nbdcopy "$uri" - | sha256sum | cut -d" " -f1 > "'"$c.host-a"'" &&
    '"'$ctl'"' table --showkeys "'"$tmp/ctl.sock"'" > "'"$c.host-table"'" &&
    '"'$ctl'"' info "'"$tmp/ctl.sock"'" > "'"$c.host-info"'"' \
    "$@" name="$c" control="$tmp/ctl.sock" 2> "$c.err" \
    || fail "$c: dmcrypt: $(head -n 1 "$c.err")"
  printf '%s\n' "$@" > "$c.args"
}

# guest_case NAME OPEN-COMMAND [KAT]: the guest's steps for one case.
guest_case ()
{
  local c=$1 open=$2 kat_dd= half
  half=$(cat "$c.half")
  [ -n "${3:-}" ] && kat_dd="dd if=/guest/pattern of=/dev/mapper/$c bs=512 seek=$KAT_SECTOR oflag=direct conv=fsync status=none || echo '$c: error dd kat'"
  cat >> guest.sh <<G
echo "$c: begin"
if $open; then
  echo "$c: sha-a \$(sha256sum < /dev/mapper/$c | cut -d' ' -f1)"
  dmsetup table --showkeys $c | sed 's/^/$c: table /'
  dmsetup info $c | sed 's/^/$c: info /'
  dd if=/guest/$c.b of=/dev/mapper/$c bs=512 seek=$half conv=fsync status=none || echo "$c: error dd"
  $kat_dd
  echo "$c: sha-b \$(sha256sum < /dev/mapper/$c | cut -d' ' -f1)"
  dmsetup remove $c || echo "$c: error remove"
else
  echo "$c: error open"
fi
echo "$c: end"
G
}

for spec_line in "${table_cases[@]}"; do
  read -r c spec key_bytes iv_off off <<<"$spec_line"
  truncate -s 4M "$c.img"
  key=$(kat_key "$c" "$key_bytes")
  len=$(( 8192 - off ))
  printf '0 %s crypt %s %s %s %s %s\n' "$len" "$spec" "$key" "$iv_off" \
    "$tmp/$c.img" "$off" > "$c.table"
  host_a "$c" file="$c.img" table=+"$tmp/$c.table"
  next_dev
  guest_case "$c" "dmsetup create $c --table '0 $len crypt $spec $key $iv_off $dev $off'" kat
  drives+=("$tmp/$c.img") names+=("$c")
  echo "$c $spec $iv_off $KAT_SECTOR $key" > "$c.kat-head"
done

for spec_line in "${loopaes_cases[@]}"; do
  read -r c keys opts <<<"$spec_line"
  truncate -s 4M "$c.img"
  python3 -c 'import hashlib, sys
n, c = int(sys.argv[1]), sys.argv[2]
for i in range(n):
    print(hashlib.sha256(f"{c}-{i}".encode()).hexdigest()[:40])' \
    "$keys" "$c" > "boot/guest/$c.keys"
  args=(file="$c.img" type=loopaes keyfile="$tmp/boot/guest/$c.keys")
  read -r -a o <<<"$opts"
  for (( j = 0; j < ${#o[@]}; j += 2 )); do
    case ${o[j]} in
      --key-size) args+=(key-size="${o[j+1]}") ;;
      --offset) args+=(offset="${o[j+1]}") ;;
      --skip) args+=(iv-offset="${o[j+1]}") ;;
      --hash) args+=(hash="${o[j+1]}") ;;
    esac
  done
  host_a "$c" "${args[@]}"
  next_dev
  guest_case "$c" "cryptsetup loopaesOpen --disable-keyring $opts --key-file /guest/$c.keys $dev $c"
  drives+=("$tmp/$c.img") names+=("$c")
done

tarball=$topdir/tests/data/testdata/cryptsetup/tcrypt-images.tar.xz
members=()
for c in $tcrypt_cases; do members+=("tcrypt-images/$c"); done
tar -xJf "$tarball" --no-same-owner "${members[@]}" \
  || fail "cannot unpack the TrueCrypt images"
printf %s aaaaaaaaaaaa > pw
for c in $tcrypt_cases; do
  mv "tcrypt-images/$c" "$c.img"
  hash=${c#*-}; hash=${hash%%-*}
  host_a "$c" file="$c.img" type=tcrypt passphrase=+pw tcrypt-hash="$hash"
  next_dev
  guest_case "$c" "echo aaaaaaaaaaaa | cryptsetup tcryptOpen --disable-keyring -h $hash $dev $c"
  drives+=("$tmp/$c.img") names+=("$c")
done

# ---- The boot ---------------------------------------------------------
echo "booting $kver with ${#drives[@]} images"
kernel_boot_cases boot guest.sh "${drives[@]}"

# ---- After the boot ---------------------------------------------------
[ -z "$kat_write" ] || : > "$kat_write"
nfail=0
for c in "${names[@]}"; do
  g () { sed -n "s/^$c: $1 \{0,1\}//p" guest.out; }
  why=
  [ -n "$(g error)" ] && why="the guest's $(g error | head -n 1) failed"
  grep -qx "$c: end" guest.out || why=${why:-"the guest did not reach the end"}
  [ -n "$why" ] || [ "$(g sha-a)" = "$(cat "$c.host-a")" ] \
    || why="A: the kernel reads $(g sha-a), dmcrypt $(cat "$c.host-a")"
  [ -n "$why" ] || [ "$(g table | kernel_mask_device)" = "$(kernel_mask_device < "$c.host-table")" ] \
    || why="table: kernel '$(g table | kernel_mask_device)', dmcryptctl '$(kernel_mask_device < "$c.host-table")'"
  [ -n "$why" ] || [ "$(g info | kernel_info_fields)" = "$(kernel_info_fields < "$c.host-info")" ] \
    || why="info: kernel '$(g info | kernel_info_fields | tr '\n' ';')', dmcryptctl '$(kernel_info_fields < "$c.host-info" | tr '\n' ';')'"
  if [ -z "$why" ]; then
    mapfile -t args < "$c.args"
    back=$(serve_dmcrypt 'nbdcopy "$uri" - | sha256sum | cut -d" " -f1' \
             "${args[@]}" 2> "$c.err") || why="dmcrypt: $(head -n 1 "$c.err")"
    [ -n "$why" ] || [ "$back" = "$(g sha-b)" ] \
      || why="B: dmcrypt reads $back, the kernel wrote $(g sha-b)"
  fi
  if [ -z "$why" ] && [ -f "$c.kat-head" ]; then
    off=$(cut -d' ' -f8 "$c.table")
    ct=$(od -An -v -tx1 -j $(( (off + KAT_SECTOR) * 512 )) -N 1024 "$c.img" \
           | tr -d ' \n')
    line="$(cat "$c.kat-head") $ct"
    if [ -n "$kat_write" ]; then
      echo "$line" >> "$kat_write"
    elif ! grep -qxF "$line" "$kat"; then
      why="D: the kernel's ciphertext at sector $KAT_SECTOR is not $kat's"
    fi
  fi
  kernel_verdict "$c" "$why"
done
if [ $nfail -ne 0 ]; then
  echo "the guest's output:"
  sed 's/^/    /' guest.out
  exit 1
fi
