#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# BitLocker (type=bitlk): every image of cryptsetup's BitLocker test set
# that cryptsetup 2.6 activates opens with its passphrase, its recovery
# passphrase(s) and its startup key (.BEK) file, and shows the plaintext
# cryptsetup's test expects (sha256 of the whole mapping, images.conf);
# dmcryptctl table and status show the segments cryptsetup's activation
# has, line by line, from the offsets "cryptsetup bitlkDump" prints; what cryptsetup
# refuses is refused in one line; writes land in the crypt segments and
# never in the metadata; -r writes nothing.  BITLK_ALL=1: every image
# with every secret (the default opens each image once and the secrets
# on a few).
source "$(dirname "$0")/functions.sh"
source "$(dirname "$0")/control-functions.sh"   # scratch, ctl, start_volume
requires_cmd nbdkit nbdcopy nbdinfo tar xz sha256sum cryptsetup awk
requires "$PY" -c 'import nbd'
cd "$tmp" || fail "cd $tmp"

tarball=testdata/cryptsetup/bitlk-images.tar.xz
[ -f "$topdir/tests/data/$tarball" ] || fail "tests/data/$tarball is missing"
tar -xJSf "$topdir/tests/data/$tarball" --no-same-owner \
  || fail "cannot unpack $tarball"
dir=$tmp/bitlk-images
conf=$dir/images.conf
[ -f "$conf" ] || fail "$tarball holds no bitlk-images/images.conf"
sha_cmd='nbdcopy "$uri" - | sha256sum | cut -d" " -f1'

# field IMAGE KEY: KEY's value in IMAGE's section of images.conf.
field ()
{
  awk -v sec="[$1]" -v key="$2" '
    /^\[/ { inside = ($0 == sec) }
    inside && index($0, key "=") == 1 { print substr($0, length(key) + 2) }
  ' "$conf"
}

# opens WHAT IMAGE SHA ARGS...: the whole plaintext's sha256 is SHA.
opens ()
{
  local what=$1 image=$2 want=$3; shift 3
  expect_equal "$what" "$want" \
    "$(serve_dmcrypt "$sha_cmd" "$dir/$image.img" "$@" 2>"$tmp/err.log")" \
    || { cat "$tmp/err.log"; exit 1; }
}

# refused WHAT PATTERN IMAGE ARGS...: expect_refused of IMAGE's file.
refused ()
{
  local what=$1 pattern=$2 image=$dir/$3.img; shift 3
  expect_refused "$what" "$pattern" "$image" "$@"
}

echo "every image cryptsetup activates, with each kind of secret"
opened=0 first=1
for image in $(sed -n 's/^\[\(.*\)\]$/\1/p' "$conf"); do
  want=$(field "$image" SHA256SUM) pw=$(field "$image" PW)
  [ -n "$want" ] || continue
  [ "$(field "$image" CLEARKEY_VMK_GUID)" = "" ] || continue
  all=${BITLK_ALL:-$first}
  if [ -n "$pw" ]; then
    printf %s "$pw" > pw
    # libcryptsetup 2.6 turns a non-ASCII passphrase into UTF-16 wrongly
    # (fixed in 2.7): where cryptsetup refuses it, so must we.
    if cryptsetup open --test-passphrase --type bitlk --key-file pw \
         "$dir/$image.img" 2>/dev/null; then
      opens "$image: passphrase" "$image" "$want" passphrase=+pw
      opened=$((opened + 1))
    else
      refused "$image: passphrase cryptsetup refuses" "wrong passphrase" \
        "$image" passphrase=+pw
      pw=
    fi
  fi
  for rp in RP RP2; do
    secret=$(field "$image" $rp)
    [ -n "$secret" ] && { [ "$all" = 1 ] || [ -z "$pw" ]; } || continue
    opens "$image: recovery passphrase $rp" "$image" "$want" \
      passphrase="$secret"
    opened=$((opened + 1))
  done
  guid=$(field "$image" SK_VMK_GUID)
  if [ -n "$guid" ]; then
    bek=$dir/${guid^^}.BEK
    [ -f "$bek" ] || fail "$image: no startup key file $bek"
    opens "$image: startup key" "$image" "$want" keyfile="$bek"
    opened=$((opened + 1))
  fi
  first=0
done
[ "$opened" -ge 20 ] || fail "only $opened openings: images.conf changed?"
report "bitlk: $opened openings matched images.conf"

echo "the same through an explicit type=bitlk and a recovery passphrase"
img=bitlk-aes-xts-128-two-recovery
opens "type=bitlk, second recovery passphrase" "$img" \
  "$(field $img SHA256SUM)" type=bitlk passphrase="$(field $img RP2)"

echo "refusals"
refused "encrypt-on-write" "encrypt-on-write volume is not supported" \
  bitlk-aes-xts-128-eow passphrase=anaconda
refused "partially encrypted" "encrypt-on-write volume is not supported" \
  bitlk-partially-encrypted-aes-cbc-128 passphrase=anaconda
refused "clear key" "clear key .* is not supported" \
  bitlk-aes-xts-128-clearkey-only passphrase=anaconda
refused "wrong passphrase" "wrong passphrase: it does not unlock the BitLocker" \
  bitlk-aes-xts-128 passphrase=not-it
refused "smart card's volume, passphrase" "wrong passphrase" \
  bitlk-aes-xts-128-smart-card passphrase=anaconda
refused "key-slot=" "no keyslots" bitlk-aes-xts-128 passphrase=anaconda \
  key-slot=0
# Cut short: inside the volume header, and before the metadata areas end.
head -c 300 "$dir/bitlk-aes-xts-128.img" > "$dir/cut-300.img"
refused "cut in the volume header" "cannot read the BitLocker metadata" \
  cut-300 passphrase=anaconda
head -c 40M "$dir/bitlk-aes-xts-128.img" > "$dir/cut-40m.img"
refused "cut before the last metadata area" \
  "cannot map the BitLocker volume: .*leaves the device" \
  cut-40m passphrase=anaconda
head -c 1M /dev/zero > "$dir/zeros.img"
refused "type=bitlk on zeros" "no BitLocker signature" zeros type=bitlk \
  passphrase=anaconda
refused "no type=, zeros" "tried LUKS1, LUKS2, FileVault2 and BitLocker" \
  zeros passphrase=anaconda

# expected_table IMAGE: the lines cryptsetup's _activate loads, from
# bitlkDump's offsets: the moved volume header at 0, the three metadata
# areas and the volume header as zero, the rest as itself.
expected_table ()
{
  local image=$dir/$1.img dump size ss opts
  dump=$(cryptsetup bitlkDump "$image") || fail "bitlkDump $1"
  size=$(( $(stat -c %s "$image") / 512 ))
  ss=$(awk '/^Sector size:/ { print $3 }' <<<"$dump")
  opts=
  [ "$ss" = 512 ] || opts=" 2 sector_size:$ss iv_large_sectors"
  awk -v size="$size" -v opts="$opts" -v dev="$(realpath "$image")" \
      -v spec="$(awk '/^Cipher name:/ { n = $3 } /^Cipher mode:/ { m = $3 }
                     END { print n "-" m }' <<<"$dump")" '
    /Offset:/ { off[n + 0] = $2 / 512 }
    /Size:/ { len[n + 0] = $2 / 512; n++ }
    END {
      # n is 4: three metadata areas, then the volume header.
      for (i = 0; i < 4; i++) { zs[i] = off[i]; zl[i] = len[i] }
      for (i = 0; i < 4; i++) for (j = i + 1; j < 4; j++)
        if (zs[j] < zs[i]) { t = zs[i]; zs[i] = zs[j]; zs[j] = t;
                             t = zl[i]; zl[i] = zl[j]; zl[j] = t }
      crypt(0, len[3], off[3])
      pos = len[3]
      for (i = 0; i < 4; i++) {
        if (zs[i] > pos) crypt(pos, zs[i] - pos, pos)
        print zs[i] " " zl[i] " zero "
        pos = zs[i] + zl[i]
      }
      if (pos < size) crypt(pos, size - pos, pos)
    }
    function crypt(s, l, o) { print s " " l " crypt " spec " KEY " o " " dev " " o opts }
  ' <<<"$dump"
}

echo "dmcryptctl table: the segments of cryptsetup's activation"
for img in bitlk-aes-xts-128 bitlk-aes-cbc-128-4k; do
  start_volume bl file="$dir/$img.img" passphrase=anaconda \
    || fail "$img did not start"
  got=$(ctl table bl) || fail "dmcryptctl table"
  want=$(expected_table $img)
  [ "$(wc -l <<<"$want")" -ge 9 ] || fail "$img: bitlkDump gave too few areas"
  expect_equal "$img: table" "$want" \
    "$(sed -E 's/ crypt ([^ ]+) 0+ / crypt \1 KEY /' <<<"$got")"
  expect_equal "$img: status, a line per segment" \
    "$(awk '{ print $1, $2, $3 " " }' <<<"$want")" "$(ctl status bl)"
  ctl info bl | grep -Eq "Number of targets: *$(wc -l <<<"$want")\$" \
    || { ctl info bl; fail "$img: dmcryptctl info: targets"; }
  # cryptsetup 2.6's dm UUID for BitLocker holds no GUID.
  ctl info bl | grep -Eq "^UUID: *CRYPT-BITLK-bl\$" \
    || { ctl info bl; fail "$img: dmcryptctl info: UUID"; }
  ctl ls | grep -qw bitlk || { ctl ls; fail "dmcryptctl ls: not bitlk"; }
  ctl reload bl "$(ctl table --showkeys bl | head -n 1)" > reload.log 2>&1 \
    && fail "$img: reload of a multi-segment mapping succeeded"
  grep -q "cannot be reloaded" reload.log \
    || { cat reload.log; fail "$img: reload refused without the reason"; }
  stop_volume bl
done

echo "writes: through the crypt segments, never into the metadata"
img=bitlk-aes-xts-128-4k
cp --sparse=always "$dir/$img.img" rw.img
dump=$(cryptsetup bitlkDump rw.img) || fail "bitlkDump rw.img"
mapfile -t areas < <(awk '/Offset:/ { o = $2 } /Size:/ { print o, $2 }' \
                     <<<"$dump")
[ "${#areas[@]}" -eq 4 ] || fail "bitlkDump: ${#areas[@]} areas, not 4"
# area_sum OFFSET SIZE: sha256 of those bytes of the image.
area_sum ()
{
  dd if=rw.img bs=512 skip=$(($1 / 512)) count=$(($2 / 512)) status=none \
    | sha256sum
}
# The three metadata areas and the boot sector on disk.
disk_sums ()
{
  local a
  for a in "${areas[@]:0:3}" "0 8192"; do
    area_sum $a
  done
}
before=$(disk_sums) header_before=$(area_sum ${areas[3]})
read -r hdr_off hdr_size <<<"${areas[3]}"
# The second area: crypt segments on both sides (the first one has the
# volume header right after it).
read -r meta_off _ <<<"${areas[1]}"
# Writes at 0 (the moved header), across a metadata area's start and
# end, and inside the volume header's zero segment; a read of each.
write_code="
import os
h.pwrite(b'A' * 12288, 0)
h.pwrite(b'B' * 196608, $meta_off - 65536)
h.pwrite(b'C' * 4096, $hdr_off)
assert h.pread(12288, 0) == b'A' * 12288
got = h.pread(196608, $meta_off - 65536)
assert got[:65536] == b'B' * 65536, 'before the area'
assert got[65536:131072] == bytes(65536), 'the zero segment'
assert got[131072:] == b'B' * 65536, 'after the area'
assert h.pread(4096, $hdr_off) == bytes(4096), 'the header segment'
"
serve_dmcrypt "$PY -m nbd -u \"\$uri\" -c \"$write_code\"" rw.img \
  passphrase=anaconda || fail "writes through dmcrypt"
expect_equal "metadata areas and boot sector unchanged on disk" \
  "$before" "$(disk_sums)"
# Sector 0 of the mapping lives where the volume header says.
[ "$header_before" != "$(area_sum ${areas[3]})" ] \
  || fail "a write at 0 did not reach the volume header's sectors on disk"
# The plaintext after the server stopped: the same bytes.
serve_dmcrypt "$PY -m nbd -u \"\$uri\" -c \"
assert h.pread(12288, 0) == b'A' * 12288
assert h.pread(65536, $meta_off - 65536) == b'B' * 65536
\"" rw.img passphrase=anaconda || fail "the writes did not persist"

echo "-r: nothing is written"
before=$(sha256_of rw.img)
timeout "$compat_timeout" nbdkit -r -U - "$plugin" rw.img \
  passphrase=anaconda --run "$sha_cmd; $PY -m nbd -u \"\$uri\" -c \"
try:
    h.pwrite(b'x' * 512, 0)
    raise SystemExit('a write succeeded under -r')
except nbd.Error:
    pass
\"" </dev/null > ro.log 2>&1 || { cat ro.log; fail "-r run"; }
expect_equal "-r: image unchanged" "$before" "$(sha256_of rw.img)"
