#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One writer per image.  A writable volume locks its image exclusively
# and a read-only one (readonly=true, nbdkit -r) shares it, so that
# - a second writer is refused at start-up, naming the first;
# - readers coexist with each other, and no reader starts beside a
#   writer, nor a writer beside readers;
# - the lock dies with its holder (SIGKILL);
# - a reload to read-write takes the exclusive lock or fails with
#   dmsetup's lines, leaving both tables as they were, and a read-only
#   reload gives it back;
# - a detached header is locked the same way.
source "$(dirname "$0")/functions.sh"
requires_plugin_frontend "the layer below is not dmcrypt's to lock"
requires_cmd cryptsetup
source "$srcdir/control-functions.sh"

key=$(random_hex 32)
table="0 32768 crypt aes-cbc-essiv:sha256 $key 0 x 0"
truncate -s 16M "$tmp/vol.img"
printf '%s\n' "$table" > "$tmp/table.txt"
V=(file="$tmp/vol.img" table=+"$tmp/table.txt")

# refused WHAT REGEX nbdkit-args...: a server that must not start.
refused ()
{
  local what=$1 regex=$2; shift 2
  if timeout 60 nbdkit -U - "$@" --run true </dev/null 2>"$tmp/err"; then
    fail "$what: started"
  fi
  cat "$tmp/err"
  [ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "$what: not one error line"
  grep -Eq -- "$regex" "$tmp/err" || fail "$what: the error lacks /$regex/"
  echo "ok: $what refused"
}
pid_of () { cat "$tmp/$1.pid"; }

start_volume w1 "${V[@]}" || fail "first writer"
refused "a second writer" \
  "vol.img is in use: dmcrypt volume 'w1' \(pid $(pid_of w1)\) has it open read-write" \
  "$plugin" "${V[@]}"
refused "a readonly=true reader beside a writer" \
  "in use: .*pid $(pid_of w1).*read-write" "$plugin" "${V[@]}" readonly=true
refused "an nbdkit -r reader beside a writer" "in use" \
  -r "$plugin" "${V[@]}"

stop_volume w1 KILL
start_volume w2 "${V[@]}" || fail "a writer after SIGKILL of the holder"
echo "ok: the lock went with the SIGKILLed holder"
stop_volume w2

# Readers share.
start_volume r1 "${V[@]}" readonly=true || fail "reader r1"
start_volume r2 "${V[@]}" readonly=true || fail "reader r2 beside r1"
if ! timeout 60 nbdkit -r -U - "$plugin" "${V[@]}" --run 'nbdinfo "$uri"' \
     >/dev/null 2>"$tmp/err"; then
  cat "$tmp/err"; fail "an nbdkit -r reader beside two readers"
fi
echo "ok: readonly=true and -r readers coexist"
refused "a writer beside readers" \
  "in use: dmcrypt volume 'r[12]' \(pid ($(pid_of r1)|$(pid_of r2))\) has it open read-only" \
  "$plugin" "${V[@]}"

# A reload to read-write needs the image alone.
refused_rw_reload r1 'Device or resource busy' 'vol.img is in use'
echo "ok: a read-write reload beside a reader fails, tables untouched"

stop_volume r2
ctl table --showkeys r1 | ctl reload r1 || fail "rw reload, r1 alone"
refused "a reader once a read-write table is loaded" "in use" \
  "$plugin" "${V[@]}" readonly=true
ctl resume r1 || fail "resume"
[ "$(info_field r1 'State:')" = ACTIVE ] || fail "r1 not read-write"
head -c 4096 /dev/urandom > "$tmp/data"
[ "$(nbdio "$(uri_of r1)" write 0 "$tmp/data")" = "" ] \
  || fail "r1 cannot write after the flip"
ctl table --showkeys r1 | ctl reload --readonly r1 \
  || fail "read-only reload"
ctl resume r1 || fail "resume read-only"
start_volume r3 "${V[@]}" readonly=true \
  || fail "a reader after the volume went back to read-only"
echo "ok: reload takes the exclusive lock and gives it back"
ctl clear r1
stop_volume r1; stop_volume r3

# A detached header is the volume's too.
printf %s hdr-pw > "$tmp/pw"
truncate -s 16M "$tmp/data1.img"
truncate -s 4M "$tmp/hdr.img"
luks_format luks2 "$tmp/data1.img" hdr-pw --header "$tmp/hdr.img" \
  || fail "luksFormat"
cp "$tmp/data1.img" "$tmp/data2.img"
H=(header="$tmp/hdr.img" passphrase=+"$tmp/pw")
start_volume h1 file="$tmp/data1.img" "${H[@]}" || fail "header writer"
refused "a second writer through the same detached header" \
  "hdr.img is in use: .*pid $(pid_of h1)\)" \
  "$plugin" file="$tmp/data2.img" "${H[@]}"
stop_volume h1
start_volume h2 file="$tmp/data2.img" "${H[@]}" readonly=true \
  || fail "header reader"
start_volume h3 file="$tmp/data1.img" "${H[@]}" readonly=true \
  || fail "two readers of one header"
echo "ok: the detached header is locked like the image"
echo PASS
