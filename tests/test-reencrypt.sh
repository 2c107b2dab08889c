#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# LUKS2 volumes in the middle of a re-encryption, made by cryptsetup's
# own offline re-encryption and interrupted with SIGINT: a cipher and
# sector-size change (aes-cbc-essiv:sha256 512 -> aes-xts-plain64 4096),
# an encryption with a data shift (--reduce-device-size, header in the
# image), an encryption and a decryption with a detached header.  Each
# must read through dmcrypt as the plaintext written before (size too),
# show its segments in "dmcryptctl table", take writes across the
# segment boundary, open read-only without changing a byte, and let
# "cryptsetup reencrypt --resume-only" finish with every byte as
# expected.  A re-encryption killed in its hot zone is refused with the
# line that says to run cryptsetup repair.
source "$(dirname "$0")/functions.sh"
source "$srcdir/control-functions.sh"
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
cd "$tmp" || fail "cd $tmp"

IMG_BYTES=$((160 * 1024 * 1024))
KDF=(--pbkdf pbkdf2 --pbkdf-force-iterations 1000)
printf %s "reenc-pw" > pw

# Both the old and the new kind of segment in use (that of
# backup-previous and that of backup-final): stopped between the first
# hot zone and the last.
in_reencryption ()
{
  cryptsetup luksDump --dump-json-metadata "$@" 2>/dev/null | "$PY" -c '
import json, sys
segs = list(json.load(sys.stdin)["segments"].values())
kind = lambda s: (s["type"], s.get("encryption"))
prev = [kind(s) for s in segs if "backup-previous" in s.get("flags", [])]
fin = [kind(s) for s in segs if "backup-final" in s.get("flags", [])]
used = [kind(s) for s in segs if not s.get("flags")]
sys.exit(0 if prev and fin and prev[0] in used and fin[0] in used else 1)'
}
crashed ()
{
  cryptsetup luksDump --dump-json-metadata "$@" 2>/dev/null \
    | grep -q 'in-reencryption'
}

# interrupt SIGNAL STATE-TEST SAVED IMG [--header HDR] -- reencrypt-args:
# runs cryptsetup reencrypt on a fresh copy of SAVED (and SAVED.hdr, if
# there is one)
# until a SIGNAL after some delay leaves the header in STATE.
interrupt ()
{
  local sig=$1 state=$2 saved=$3 img=$4 delay; shift 4
  local hdr=() args=()
  [ "${1:-}" = --header ] && { hdr=(--header "$2"); shift 2; }
  shift                                     # --
  args=("$@")
  for delay in 0.4 0.5 0.6 0.7 0.8 0.9 1.0 0.3 1.2 0.25 1.5 0.2 2 0.15 \
               3 0.1 4; do
    cp --sparse=always "$saved" "$img"
    # --encrypt --header makes the header file: it must not exist.
    [ ${#hdr[@]} -eq 0 ] || rm -f "${hdr[1]}"
    [ ! -e "$saved.hdr" ] || cp "$saved.hdr" "${hdr[1]}"
    timeout -s "$sig" "$delay" cryptsetup reencrypt --batch-mode \
      --disable-locks --force-offline-reencrypt "${KDF[@]}" --hotzone-size 64k \
      --key-file pw "${hdr[@]}" "${args[@]}" "$img" >/dev/null 2>&1
    if "$state" "${hdr[@]:1}" "$img"; then
      echo "  interrupted after ${delay}s ($sig)"
      return 0
    fi
  done
  fail "cryptsetup reencrypt ${args[*]} never stopped in the middle"
}

dm_write ()
{
  serve_dmcrypt "nbdcopy -- $1 \$uri" "${@:2}" || fail "write $1"
}
dm_read ()
{
  serve_dmcrypt "nbdcopy -- \$uri $1" "${@:2}" 2>"$1.log" \
    || { cat "$1.log"; fail "read through dmcrypt"; }
}
dm_size () { serve_dmcrypt 'nbdinfo --size $uri' "$@"; }

# Writes 1 MiB of random bytes centred on byte AT through dmcrypt and
# into the expected plaintext EXPECT.
write_across ()  # write_across AT EXPECT plugin-args...
{
  local at=$(( $1 - 512 * 1024 )) expect=$2 size; shift 2
  # Inside the volume whatever the boundary: an interruption may leave
  # one part shorter than half the window.
  size=$(stat -c %s "$expect")
  (( at > size - 1024 * 1024 )) && at=$(( size - 1024 * 1024 ))
  (( at < 0 )) && at=0
  random_file across.bin $((1024 * 1024))
  cat > pwrite.py <<'PYEOF'
import nbd, sys
h = nbd.NBD()
h.connect_uri(sys.argv[1])
h.pwrite(open(sys.argv[2], "rb").read(), int(sys.argv[3]))
h.flush()
h.shutdown()
PYEOF
  serve_dmcrypt "$PY pwrite.py \$uri across.bin $at" "$@" \
    || fail "write across the boundary"
  dd if=across.bin of="$expect" bs=512 seek=$((at / 512)) conv=notrunc \
    status=none
}

# The volume's table through dmcryptctl: its lines in table.txt.
show_table ()  # show_table plugin-args...
{
  start_volume rv "$@" || fail "start the volume"
  ctl table rv > table.txt || fail "dmcryptctl table"
  stop_volume rv
  sed 's/^/    /' table.txt
}

# The start (bytes) of the mapping's second line.
boundary () { awk 'NR == 2 { print $1 * 512 }' table.txt; }

# check_mid NAME IMG EXPECT KINDS plugin-args...: the interrupted volume
# read, shown, written across its boundary, and read-only untouched.
check_mid ()
{
  local name=$1 img=$2 expect=$3 kinds=$4 before got; shift 4
  expect_equal "$name: size mid-way" "$(stat -c %s "$expect")" \
    "$(dm_size "$@" file="$img" -r)"
  dm_read mid.out file="$img" "$@" -r
  expect_same "$name: plaintext mid-way" "$expect" mid.out
  show_table file="$img" "$@" -r
  got=$(awk '{ printf "%s%s", (NR > 1 ? " " : ""), $3 }' table.txt)
  echo "$got" | grep -Eq "$kinds" \
    || fail "$name: segment kinds '$got' do not match '$kinds'"
  echo "  segments: $got"
  before=$(sha256_of "$img")
  dm_read ro.out file="$img" "$@" -r
  expect_equal "$name: image unchanged read-only" "$before" \
    "$(sha256_of "$img")"
  write_across "$(boundary)" "$expect" file="$img" "$@"
  dm_read mid2.out file="$img" "$@" -r
  expect_same "$name: written across the boundary" "$expect" mid2.out
}

# finish NAME IMG EXPECT [--header HDR] plugin-args...
finish ()
{
  local name=$1 img=$2 expect=$3 hdr=(); shift 3
  [ "${1:-}" = --header ] && { hdr=(--header "$2"); shift 2; }
  cryptsetup reencrypt --batch-mode --disable-locks --resume-only \
    --force-offline-reencrypt \
    --key-file pw "${hdr[@]}" "$img" >resume.log 2>&1 \
    || { cat resume.log; fail "$name: cryptsetup reencrypt --resume-only"; }
}

# after NAME EXPECT SIZE plugin-args...: the finished volume is SIZE
# bytes and starts with EXPECT.
after ()
{
  local name=$1 expect=$2 size=$3; shift 3
  dm_read end.out "$@" -r
  expect_equal "$name: size after the re-encryption" "$size" \
    "$(stat -c %s end.out)"
  head -c "$(stat -c %s "$expect")" end.out > end.head
  expect_same "$name: plaintext after the re-encryption" "$expect" end.head
  show_table "$@" -r
  expect_equal "$name: one segment at the end" 1 "$(wc -l < table.txt)"
}

# ---- Re-encryption: new cipher and sector size ----
echo "re-encryption: aes-cbc-essiv:sha256 512 -> aes-xts-plain64 4096"
truncate -s $IMG_BYTES saved.img
luks_format luks2 saved.img reenc-pw -c aes-cbc-essiv:sha256 -s 256 \
  --sector-size 512
size=$(dm_size file=saved.img passphrase=+pw -r)
random_file plain.bin "$size"
dm_write plain.bin file=saved.img passphrase=+pw
interrupt INT in_reencryption saved.img r.img -- -c aes-xts-plain64 \
  -s 512 --sector-size 4096
check_mid reencrypt r.img plain.bin "^crypt crypt$" passphrase=+pw
grep -q "aes-cbc-essiv:sha256" table.txt \
  && grep -q "aes-xts-plain64" table.txt || fail "the table does not show both ciphers"
finish reencrypt r.img plain.bin
# cryptsetup's own reading of the finished volume, as a second opinion.
after reencrypt plain.bin "$size" file=r.img passphrase=+pw

# A wrong passphrase and the crash state are refused, the image intact.
printf %s wrong > wrong
interrupt INT in_reencryption saved.img r.img -- -c aes-xts-plain64 \
  -s 512 --sector-size 4096
expect_refused "wrong passphrase mid-way" "no keyslot opened" r.img \
  passphrase=+"$tmp/wrong"
expect_refused "no secret mid-way" \
  "passphrase= or keyfile=.*tokens are not tried" \
  r.img
crash_ok=0
for try in 1 2 3; do
  if interrupt KILL crashed saved.img c.img -- -c aes-xts-plain64 -s 512 \
       --sector-size 4096 2>/dev/null; then crash_ok=1; break; fi
done
[ "$crash_ok" = 1 ] || fail "no SIGKILL left the hot zone flagged"
expect_refused "crashed re-encryption" "cryptsetup repair" c.img \
  passphrase=+"$tmp/pw"

# ---- Encryption with a data shift, header in the image ----
echo "encryption: --reduce-device-size 32M"
random_file enc.img $IMG_BYTES
cp enc.img saved-enc.img
head -c $((IMG_BYTES - 32 * 1024 * 1024)) enc.img > enc.plain
interrupt INT in_reencryption saved-enc.img e.img -- --encrypt --type luks2 \
  -c aes-xts-plain64 -s 512 --reduce-device-size 32M
check_mid encrypt-shift e.img enc.plain "crypt.*linear|linear.*crypt" \
  passphrase=+pw
finish encrypt-shift e.img enc.plain
# The finished segment is dynamic: the device past its 16 MiB header,
# as cryptsetup open maps it.
after encrypt-shift enc.plain $((IMG_BYTES - 16 * 1024 * 1024)) file=e.img \
  passphrase=+pw

# ---- Encryption with a detached header ----
echo "encryption: --header"
random_file saved-det.img $IMG_BYTES
cp saved-det.img det.plain
interrupt INT in_reencryption saved-det.img d.img --header d.hdr -- \
  --encrypt --type luks2 -c aes-xts-plain64 -s 512
check_mid encrypt-detached d.img det.plain "crypt.*linear|linear.*crypt" \
  header=d.hdr \
  passphrase=+pw
finish encrypt-detached d.img det.plain --header d.hdr
after encrypt-detached det.plain $IMG_BYTES file=d.img header=d.hdr \
  passphrase=+pw

# ---- Decryption with a detached header ----
echo "decryption: --header"
truncate -s $IMG_BYTES saved-dec.img
truncate -s 16M saved-dec.img.hdr
luks_format luks2 saved-dec.img reenc-pw --header saved-dec.img.hdr \
  -c aes-xts-plain64 -s 512
random_file dec.plain "$(dm_size file=saved-dec.img \
  header=saved-dec.img.hdr passphrase=+pw -r)"
dm_write dec.plain file=saved-dec.img header=saved-dec.img.hdr passphrase=+pw
interrupt INT in_reencryption saved-dec.img x.img --header x.hdr -- --decrypt
check_mid decrypt-detached x.img dec.plain "crypt.*linear|linear.*crypt" \
  header=x.hdr \
  passphrase=+pw
finish decrypt-detached x.img dec.plain --header x.hdr
# Decrypted: the image itself is the plaintext.
expect_same "decrypt-detached: the image after the decryption" dec.plain x.img
echo "PASS"
