#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every bad input the contract names (docs/interface.md, "Errors"): nbdkit
# must exit non-zero, without a crash (exit status 128 or more) or a hang,
# with ONE error line that names the problem, and the image it was pointed
# at must be left byte for byte as it was.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit cryptsetup timeout
plugin_built_or_fail
scratch

checked=0

# bad NAME REGEX IMAGE plugin-args...
#   REGEX (grep -Ei) must match the error line with the scratch files'
#   names taken out (so that a file name cannot pass for a reason); IMAGE
#   ("-" for none) must keep its sha256.
bad ()
{
  local name=$1 regex=$2 image=$3; shift 3
  local before="" rc errors lines

  [ "$image" != - ] && before=$(sha256_of "$image")
  timeout -k 5 30 nbdkit -U - "$plugin" "$@" --run true \
    </dev/null >"$tmp/out" 2>"$tmp/err"
  rc=$?
  lines=$(grep -c . "$tmp/err")
  errors=$(grep -ci 'error' "$tmp/err")
  if [ $rc -eq 0 ]; then
    fail "$name: accepted (nbdkit $*)"
  elif [ $rc -eq 124 ] || [ $rc -ge 128 ]; then
    cat "$tmp/err" >&2
    fail "$name: crashed or hung, exit status $rc (nbdkit $*)"
  elif [ "$lines" -ne 1 ] || [ "$errors" -ne 1 ]; then
    cat "$tmp/err" >&2
    fail "$name: $lines lines on stderr, $errors errors; wanted one error line"
  elif ! sed "s|$tmp/[^ :,)]*|FILE|g" "$tmp/err" | grep -Eqi -- "$regex"
  then
    cat "$tmp/err" >&2
    fail "$name: the error does not say /$regex/"
  elif [ -n "$before" ] && [ "$(sha256_of "$image")" != "$before" ]; then
    fail "$name: $image was modified"
  fi
  printf 'ok: %-28s %s\n' "$name" "$(cat "$tmp/err")"
  checked=$((checked + 1))
}

# bad_exactly NAME LINE IMAGE plugin-args...
#   as bad, but the error must be LINE exactly (the scratch files' names
#   written FILE) and nbdkit's exit status 1.
bad_exactly ()
{
  local name=$1 line=$2 image=$3 rc; shift 3

  bad "$name" '.' "$image" "$@"
  timeout -k 5 30 nbdkit -U - "$plugin" "$@" --run true \
    </dev/null >/dev/null 2>"$tmp/err"
  rc=$?
  [ $rc -eq 1 ] || fail "$name: exit status $rc, wanted 1"
  [ "$(sed "s|$tmp/[^ :,)]*|FILE|g" "$tmp/err")" = "$line" ] \
    || fail "$name: the error is not: $line"
}

# A table line for a plain image: table SPEC HEXKEY [rest...]
xts_key=$(random_hex 64)

# --- images ---------------------------------------------------------------
printf %s "good-pw" > "$tmp/pw"
printf %s "wrong-pw" > "$tmp/wrongpw"
printf %s "other-pw" > "$tmp/otherpw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" good-pw
# A second keyslot (1) with another passphrase.
cryptsetup luksAddKey --batch-mode --pbkdf pbkdf2 \
  --pbkdf-force-iterations 1000 --key-file "$tmp/pw" --key-slot 1 \
  "$tmp/luks2.img" "$tmp/otherpw" || fail "luksAddKey"
truncate -s 16M "$tmp/luks1.img"
luks_format luks1 "$tmp/luks1.img" good-pw
head -c 16M /dev/urandom > "$tmp/random.img"
: > "$tmp/empty.img"
truncate -s 16M "$tmp/plain.img"
# The LUKS2 header with its data area cut short (data starts at 16 MiB).
head -c 8M "$tmp/luks2.img" > "$tmp/truncated.img"
# Cut inside the header: its binary header and JSON area are 16 KiB.
head -c 4K "$tmp/luks2.img" > "$tmp/truncated-4k.img"
# A LUKS1 header whose cipher field names a cipher we do not have
# (LUKS1 has no header checksum, so the header still loads).
cp "$tmp/luks1.img" "$tmp/cipher-edited.img"
printf 'kuznyechik\0' | dd of="$tmp/cipher-edited.img" bs=1 seek=8 conv=notrunc \
  status=none

L2=(file="$tmp/luks2.img")
P=(file="$tmp/plain.img")
sectors=$((16 * 1024 * 1024 / 512))

# --- LUKS -----------------------------------------------------------------
bad wrong-passphrase 'passphrase|no key ?slot' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/wrongpw"
bad wrong-passphrase-luks1 'passphrase|no key ?slot' "$tmp/luks1.img" \
  file="$tmp/luks1.img" passphrase=+"$tmp/wrongpw"
bad no-keyslot-matched 'key ?slot|passphrase' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/otherpw" key-slot=0
bad keyslot-not-in-use 'key ?slot.*(not|in use|inactive)' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/pw" key-slot=5
bad keyslot-out-of-range 'key ?-?slot.*(range|invalid)' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/pw" key-slot=99
bad keyslot-negative 'key-slot' - \
  "${L2[@]}" passphrase=+"$tmp/pw" key-slot=-1
bad not-a-luks-header 'not a LUKS' "$tmp/random.img" \
  file="$tmp/random.img" passphrase=+"$tmp/pw"
bad empty-file 'empty|small|short|not a LUKS' "$tmp/empty.img" \
  file="$tmp/empty.img" passphrase=+"$tmp/pw"
bad truncated-luks 'small|short|truncat|beyond' "$tmp/truncated.img" \
  file="$tmp/truncated.img" passphrase=+"$tmp/pw"
bad_exactly truncated-in-header "nbdkit: error: FILE: truncated: 4096 bytes, \
where its LUKS2 header needs 16384" \
  "$tmp/truncated-4k.img" file="$tmp/truncated-4k.img" passphrase=+"$tmp/pw"
bad luks1-type-on-luks2 'LUKS1|luks1' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/pw" type=luks1
bad luks2-type-on-luks1 'LUKS2|luks2' "$tmp/luks1.img" \
  file="$tmp/luks1.img" passphrase=+"$tmp/pw" type=luks2
bad luks1-kuznyechik-header 'unsupported cipher: kuznyechik' \
  "$tmp/cipher-edited.img" file="$tmp/cipher-edited.img" passphrase=+"$tmp/pw"
bad missing-passphrase 'passphrase|keyfile' "$tmp/luks2.img" "${L2[@]}"
bad passphrase-and-keyfile 'passphrase|keyfile' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/pw" keyfile="$tmp/pw"
bad missing-keyfile 'no such file' "$tmp/luks2.img" \
  "${L2[@]}" keyfile="$tmp/nokeyfile"
bad missing-passphrase-file 'no such file' - \
  "${L2[@]}" passphrase=+"$tmp/nopwfile"
bad missing-header 'no such file' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/pw" header="$tmp/nohdr"
bad plain-key-on-luks 'plain|table|cipher|key' "$tmp/luks2.img" \
  "${L2[@]}" passphrase=+"$tmp/pw" key="$xts_key"

# --- files and parameters -------------------------------------------------
bad missing-file 'no such file' - \
  file="$tmp/nofile" passphrase=+"$tmp/pw"
bad no-file-parameter 'file' - passphrase=+"$tmp/pw"
bad unknown-parameter 'frobnicate' - "${L2[@]}" frobnicate=1
bad unknown-type 'type|mystery' - "${L2[@]}" type=mystery
bad bad-boolean-discards 'maybe|bool' - \
  "${L2[@]}" passphrase=+"$tmp/pw" allow-discards=maybe
bad bad-boolean-readonly 'sometimes|bool' - \
  "${L2[@]}" passphrase=+"$tmp/pw" readonly=sometimes
bad bad-boolean-iv-large 'perhaps|bool' - \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" iv-large-sectors=perhaps
bad twice-given 'more than once|twice|already' - \
  "${L2[@]}" passphrase=+"$tmp/pw" passphrase=+"$tmp/pw"

# --- errors that point the right way ---------------------------------------
# nbdkit gives a bare word to file=: a bare "readonly" is not a file.
bad bare-readonly "'readonly' needs a value" - \
  "${L2[@]}" passphrase=+"$tmp/pw" readonly
bad bare-word-first "'readonly' needs a value" - \
  readonly "${L2[@]}" passphrase=+"$tmp/pw"
bad bare-word-alone "'allow-discards' needs a value" - allow-discards \
  passphrase=+"$tmp/pw"
bad key-without-cipher 'key= needs cipher= \(or table=\)' - \
  "${P[@]}" key="$xts_key"
bad passphrase-names-a-file 'no keyslot matched; did you mean passphrase=\+FILE' \
  "$tmp/luks2.img" "${L2[@]}" passphrase="$tmp/pw"
bad named-boolean "^nbdkit: error: allow-discards: 'maybe' is not a boolean" - \
  "${L2[@]}" passphrase=+"$tmp/pw" allow-discards=maybe
bad dm-spelling "unknown parameter 'allow_discards': did you mean 'allow-discards'" \
  - "${L2[@]}" passphrase=+"$tmp/pw" allow_discards=true
bad plain-over-luks-header 'LUKS header that this plain mapping would overwrite.*type=plain' \
  "$tmp/luks2.img" "${L2[@]}" cipher=aes-xts-plain64 key="$xts_key"
bad plain-table-over-luks-header 'LUKS header.*overwrite' "$tmp/luks2.img" \
  "${L2[@]}" table="0 $sectors crypt aes-xts-plain64 $xts_key 0 x 0"

# Ceph RBD clones (librbd's crypto/luks/Magic.cc): "RBDL" for "LUKS" at
# the start and, for LUKS2, "LDBR" for "SKUL" at the secondary header
# (hdr_size bytes in), so that libcryptsetup finds neither copy.
cp "$tmp/luks2.img" "$tmp/rbd2.img"; cp "$tmp/luks1.img" "$tmp/rbd1.img"
printf RBDL | dd of="$tmp/rbd2.img" conv=notrunc status=none
printf LDBR | dd of="$tmp/rbd2.img" bs=1 seek=16384 conv=notrunc status=none
printf RBDL | dd of="$tmp/rbd1.img" conv=notrunc status=none
rbd_line="a Ceph RBD clone's encryption header (magic RBDL, LUKS2): its \
data mixes the clone's key and its parent image's, so it opens only \
through librbd with the parent (rbd encryption load, or qemu's rbd \
driver), not as a LUKS volume"
bad_exactly rbd-clone-luks2 "nbdkit: error: FILE: $rbd_line" "$tmp/rbd2.img" \
  file="$tmp/rbd2.img" passphrase=+"$tmp/pw"
bad rbd-clone-luks1 "Ceph RBD clone's encryption header \(magic RBDL, LUKS1\)" \
  "$tmp/rbd1.img" file="$tmp/rbd1.img" passphrase=+"$tmp/pw"
bad rbd-clone-type-luks2 'Ceph RBD clone.*parent' "$tmp/rbd2.img" \
  file="$tmp/rbd2.img" passphrase=+"$tmp/pw" type=luks2
bad rbd-clone-detached 'Ceph RBD clone.*parent' "$tmp/rbd2.img" \
  file="$tmp/luks2.img" header="$tmp/rbd2.img" passphrase=+"$tmp/pw"
bad plain-over-rbd-clone 'Ceph RBD clone.*plain mapping would overwrite.*type=plain' \
  "$tmp/rbd2.img" file="$tmp/rbd2.img" cipher=aes-xts-plain64 key="$xts_key"

# --- numbers --------------------------------------------------------------
# Every numeric parameter is read by dmcrypt, whose refusal names the
# parameter and the value (nbdkit's own parsers name neither).
for key in keyfile-offset keyfile-size key-slot veracrypt-pim offset \
           iv-offset sector-size key-size workers max-read-size \
           max-write-size max-inflight max-write-rounds min-block-size \
           nr-requests device-speed hz; do
  bad "$key-not-a-number" "^nbdkit: error: $key: 'abc' is not a " - \
    "${L2[@]}" passphrase=+"$tmp/pw" "$key=abc"
done
# Lab settings without a device model: the error lists every model.
bad nr-requests-without-device \
  'need a device model: device= one of hdd usb ssd .*x25e-raid10' - \
  "${L2[@]}" passphrase=+"$tmp/pw" nr-requests=64
bad_exactly workers-abc \
  "nbdkit: error: workers: 'abc' is not a whole number from 1 to 1024" - \
  "${L2[@]}" passphrase=+"$tmp/pw" workers=abc
bad_exactly workers-too-many \
  "nbdkit: error: workers: '5000' is not a whole number from 1 to 1024" - \
  "${L2[@]}" passphrase=+"$tmp/pw" workers=5000
bad_exactly offset-negative \
  "nbdkit: error: offset: '-8' is not a whole number" - \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" offset=-8
bad_exactly max-inflight-suffix \
  "nbdkit: error: max-inflight: '1x' is not a size (bytes, or with a suffix: \
512s, 4K, 1M, 2G)" \
  - "${L2[@]}" passphrase=+"$tmp/pw" max-inflight=1x
bad_exactly max-write-size-3 \
  "nbdkit: error: max-write-size: '3' is less than one 512-byte sector" - \
  "${L2[@]}" passphrase=+"$tmp/pw" max-write-size=3
bad_exactly max-read-size-3 \
  "nbdkit: error: max-read-size: '3' is less than one 512-byte sector" - \
  "${L2[@]}" passphrase=+"$tmp/pw" max-read-size=3
bad_exactly passphrase-bad-fd \
  "nbdkit: error: passphrase: '-' must be followed by a file descriptor \
number (-FD), or be alone (ask on the terminal)" \
  - "${L2[@]}" passphrase=-x3

# --- plain mode: parameters -----------------------------------------------
bad plain-without-key 'key|table|cipher' "$tmp/plain.img" \
  "${P[@]}" type=plain
bad plain-cipher-without-key 'key' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64
bad plain-with-passphrase 'passphrase|plain' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" passphrase=+"$tmp/pw"
bad table-and-cipher 'table|cipher' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt aes-xts-plain64 $xts_key 0 x 0" \
  cipher=aes-xts-plain64
bad unsupported-kuznyechik 'unsupported cipher: kuznyechik' \
  "$tmp/plain.img" "${P[@]}" cipher=kuznyechik-xts-plain64 key="$xts_key"
bad unsupported-invented 'unsupported cipher: frobfish' "$tmp/plain.img" \
  "${P[@]}" cipher=frobfish-cbc-essiv:sha256 key="$(random_hex 32)"
# The kernel takes 192-bit Twofish keys; libgcrypt does not.
bad unsupported-twofish-192 'twofish.*192-bit' "$tmp/plain.img" \
  "${P[@]}" cipher=twofish-cbc-plain64 key="$(random_hex 24)"
bad bad-chain-mode 'cipher|mode|frob' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-frob-plain64 key="$xts_key"
bad bad-iv-mode 'IV|cipher|wobble' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-wobble key="$xts_key"
bad short-xts-key 'key|byte' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="$(random_hex 16)"
bad short-cbc-key 'key|byte' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-cbc-essiv:sha256 key="$(random_hex 5)"
bad odd-hex-key 'hex' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="${xts_key}a"
bad not-hex-key 'hex' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="${xts_key:2}zz"
bad bad-sector-size 'sector' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" sector-size=1000
bad sector-size-too-big 'sector' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" sector-size=8192
bad iv-offset-unaligned 'iv.?offset|multiple' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" sector-size=4096 \
  iv-offset=3
bad offset-beyond-file 'offset|beyond|small|room' "$tmp/plain.img" \
  "${P[@]}" cipher=aes-xts-plain64 key="$xts_key" offset=$((sectors + 8))

# --- plain mode: table= ---------------------------------------------------
T="crypt aes-xts-plain64 $xts_key"
bad table-start-not-0 'start' "$tmp/plain.img" \
  "${P[@]}" table="8 $((sectors - 8)) $T 0 /dev/x 0"
bad table-bigger-than-image 'smaller|small|beyond|size' "$tmp/plain.img" \
  "${P[@]}" table="0 $((sectors * 2)) $T 0 /dev/x 0"
bad table-offset-past-end 'smaller|small|beyond|size' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 8"
bad table-option-count-high 'argument|option|param|count' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 0 2 allow_discards"
# (A count lower than the words that follow is accepted by the kernel,
# which ignores the rest: see ../shared/reference/kernel-dmsetup.)
bad table-option-count-word 'argument|option|param|count|number' \
  "$tmp/plain.img" "${P[@]}" table="0 $sectors $T 0 /dev/x 0 x allow_discards"
bad table-unknown-option 'frobnicate' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 0 1 frobnicate"
bad table-iv-offset-unaligned 'iv.?offset|multiple' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 1 /dev/x 0 1 sector_size:4096"
bad table-length-unaligned 'length|multiple' "$tmp/plain.img" \
  "${P[@]}" table="0 $((sectors - 1)) $T 0 /dev/x 0 1 sector_size:4096"
bad table-offset-unaligned 'offset|multiple' "$tmp/plain.img" \
  "${P[@]}" table="0 $((sectors - 8)) $T 0 /dev/x 1 1 sector_size:4096"
bad table-sector-size-1000 'sector' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 0 1 sector_size:1000"
bad table-sector-size-256 'sector' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 0 1 sector_size:256"
bad table-sector-size-8192 'sector' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 0 1 sector_size:8192"
bad table-short-key 'key|byte' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt aes-xts-plain64 $(random_hex 16) 0 x 0"
bad table-odd-hex 'hex' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt aes-xts-plain64 ${xts_key}f 0 x 0"
bad table-keyring-key 'keyring' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt aes-xts-plain64 :64:logon:dm:k 0 x 0"
bad table-kuznyechik 'unsupported cipher: kuznyechik' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt kuznyechik-xts-plain64 $xts_key 0 x 0"
bad table-twofish-192 'twofish.*192-bit' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt twofish-xts-plain64 $(random_hex 48) 0 x 0"
bad table-not-crypt 'crypt|linear' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors linear /dev/x 0"
bad table-too-few-fields 'field|table' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors crypt aes-xts-plain64"
bad table-bad-number 'number|decimal|length|twelve' "$tmp/plain.img" \
  "${P[@]}" table="0 twelve $T 0 /dev/x 0"
bad table-integrity 'integrity|AEAD' "$tmp/plain.img" \
  "${P[@]}" table="0 $sectors $T 0 /dev/x 0 1 integrity:28:aead"

# The same images are accepted where the user means it: type=plain over
# a LUKS header, and a plain table of the LUKS data area (offset past
# the header, as "dmsetup table" of an open LUKS volume shows it).
good ()  # good NAME plugin-args...
{
  local name=$1; shift
  timeout -k 5 30 nbdkit -U - "$plugin" "$@" --run true </dev/null \
    2>"$tmp/err" || { cat "$tmp/err"; fail "$name: refused"; }
  echo "ok: $name accepted"
}
good plain-over-luks-with-type "${L2[@]}" type=plain \
  cipher=aes-xts-plain64 key="$xts_key"
# LUKS2 on a file has 4096-byte sectors: a smaller chunk size takes one
# sector, and says so in one notice.
timeout -k 5 30 nbdkit -U - "$plugin" "${L2[@]}" passphrase=+"$tmp/pw" \
  max-write-size=1K --run true </dev/null 2>"$tmp/err" \
  || { cat "$tmp/err"; fail "max-write-size under the sector: refused"; }
[ "$(cat "$tmp/err")" = "nbdkit: dmcrypt: note: max-write-size: 1024 bytes \
is less than the volume's 4096-byte encryption sector: chunks of one sector" ] \
  || { cat "$tmp/err"; fail "max-write-size under the sector: no notice"; }
echo "ok: max-write-size under the sector: $(cat "$tmp/err")"
# Numbers in nbdkit's forms, as before: hex, a size in sectors.
good numbers-in-nbdkit-forms "${L2[@]}" passphrase=+"$tmp/pw" workers=0x2 \
  max-write-size=8s max-read-size=4K keyfile-offset=0
good plain-table-of-luks-data-area "${L2[@]}" \
  table="0 $((sectors * 2 - 32768)) crypt aes-xts-plain64 $xts_key 0 x 32768"

echo "PASS: $checked bad inputs refused cleanly"
