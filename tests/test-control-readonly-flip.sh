#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The dmsetup walkthrough of ../shared/reference/kernel-dmsetup/
# readonly-flip.txt on LUKS1 and LUKS2 images opened with readonly=true:
# info and table show a read-only volume and a write fails; "table
# --showkeys | reload" + "resume" makes it writable, and what is written
# lands encrypted as the kernel would write it (checked by decrypting the
# image with tests/oracle.py and the volume key from cryptsetup); a
# reload --readonly + resume makes writes fail again, also on a
# connection opened while the volume was writable.
source "$(dirname "$0")/functions.sh"
requires_cmd cryptsetup
requires "$PY" -c 'import nbd'
source "$srcdir/control-functions.sh"

head -c 65536 /dev/urandom > "$tmp/pattern.bin"
head -c 4096 /dev/urandom > "$tmp/second.bin"
printf %s 'flip-pw' > "$tmp/pw"

walkthrough ()  # walkthrough luks1|luks2
{
  local type=$1 name=ro-$1 img="$tmp/$1.img" key uuid table masked
  local offset=$((224 * 65536)) sum got
  truncate -s 64M "$img"
  luks_format "$type" "$img" flip-pw
  key=$(luks_volume_key "$img" flip-pw)
  uuid=$(cryptsetup luksUUID "$img" | tr -d -- '-')
  [ ${#key} -eq 128 ] || fail "$type: no volume key from cryptsetup"
  # The table the kernel would be given, from an implementation that is
  # not ours, with our device field (the image's absolute path).
  table=$("$PY" "$srcdir/oracle.py" table-from-luks "$img" "$key" \
            | awk -v dev="$(realpath "$img")" '{ $7 = dev; print }')
  masked=$(echo "$table" | awk '{ gsub(/./, "0", $5); print }')

  start_volume "$name" file="$img" passphrase=+"$tmp/pw" readonly=true \
    || fail "$type: cannot start the volume"
  ctl info "$name" > "$tmp/info" || fail "$type: info failed"
  printf '%s\n' "Name:              $name" \
    "State:             ACTIVE (READ-ONLY)" "Read Ahead:        256" \
    "Tables present:    LIVE" "Open count:        0" \
    "Event number:      0" "Major, minor:      0, 0" \
    "Number of targets: 1" \
    "UUID: CRYPT-${type^^}-$uuid-$name" "" > "$tmp/info.want"
  diff -u "$tmp/info.want" "$tmp/info" || fail "$type: info (read-only)"
  [ "$(ctl table "$name")" = "$masked" ] || fail "$type: masked table"
  [ "$(ctl table --showkeys "$name")" = "$table" ] \
    || fail "$type: table --showkeys"

  # A write fails: the export is read-only, and a client that sends a
  # write anyway is refused.
  [ "$(nbdio "$(uri_of "$name")" ro)" = 1 ] \
    || fail "$type: export not read-only"
  sum=$(sha256_of "$img")
  got=$(nbdio "$(uri_of "$name")" write "$offset" "$tmp/pattern.bin")
  case $got in EPERM|EROFS) ;; *) fail "$type: write gave '$got'" ;; esac
  [ "$(sha256_of "$img")" = "$sum" ] || fail "$type: the image changed"

  # table --showkeys | reload, then resume.
  ctl table --showkeys "$name" | ctl reload "$name" \
    || fail "$type: reload failed"
  sed 's/^Tables present:    LIVE$/Tables present:    LIVE \& INACTIVE/' \
    "$tmp/info.want" > "$tmp/info2.want"
  ctl info "$name" | diff -u "$tmp/info2.want" - \
    || fail "$type: info after reload"
  [ "$(ctl table --inactive "$name")" = "$masked" ] \
    || fail "$type: table --inactive"
  ctl resume "$name" || fail "$type: resume failed"
  sed 's/ (READ-ONLY)$//' "$tmp/info.want" > "$tmp/info3.want"
  ctl info "$name" | diff -u "$tmp/info3.want" - \
    || fail "$type: info after resume"
  [ "$(ctl table --showkeys "$name")" = "$table" ] \
    || fail "$type: table --showkeys after resume"
  [ -z "$(ctl table --inactive "$name")" ] \
    || fail "$type: an inactive table is left after resume"

  # Writes work and land encrypted as dm-crypt would write them.
  [ "$(nbdio "$(uri_of "$name")" ro)" = 0 ] \
    || fail "$type: export still read-only"
  nbdio "$(uri_of "$name")" write "$offset" "$tmp/pattern.bin" \
    || fail "$type: write after resume failed"
  "$PY" "$srcdir/oracle.py" decrypt "$img" "$tmp/decrypted" \
    --luks-key "$key" --seek "$offset" --length 65536 \
    || fail "$type: oracle decrypt failed"
  cmp "$tmp/pattern.bin" "$tmp/decrypted" \
    || fail "$type: the oracle does not decrypt what was written"
  echo "ok: $type: writable after reload + resume, data correct"

  # Back to read-only, with a connection opened while writable.
  sum=$(sha256_of "$img")
  got=$(nbdio "$(uri_of "$name")" hold-write 0 "$tmp/second.bin" \
          "'$ctl_bin' table --showkeys '$name' \
             | '$ctl_bin' reload --readonly '$name' \
           && '$ctl_bin' resume '$name' \
           && cp '$img' '$tmp/between.img'") \
    || fail "$type: hold-write failed: $got"
  echo "$got"
  [ "$(echo "$got" | head -1)" = first:ok ] || fail "$type: first write"
  case $(echo "$got" | tail -1) in
    second:EPERM|second:EROFS) ;;
    *) fail "$type: a write after the read-only reload was not refused" ;;
  esac
  [ "$(sha256_of "$img")" = "$(sha256_of "$tmp/between.img")" ] \
    || fail "$type: the refused write changed the image"
  [ "$(info_field "$name" State:)" = "ACTIVE (READ-ONLY)" ] \
    || fail "$type: not read-only again"
  [ "$(nbdio "$(uri_of "$name")" ro)" = 1 ] \
    || fail "$type: a new connection is not read-only"
  nbdio "$(uri_of "$name")" read "$offset" 65536 > "$tmp/readback" \
    || fail "$type: read on the read-only volume failed"
  cmp "$tmp/pattern.bin" "$tmp/readback" || fail "$type: read back"
  echo "ok: $type: read-only again after reload --readonly + resume"
  stop_volume "$name"
}

walkthrough luks1
walkthrough luks2
