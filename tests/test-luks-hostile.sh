#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Damaged and malicious LUKS images through the plugin (tests/unit/
# test-luks.c holds luks/ itself to the same images): every image is
# either refused cleanly (non-zero exit, no crash or hang, ONE error
# line) or served correctly (the plaintext that cryptsetup's key and the
# independent oracle give for the same damaged image), and is never
# written to.
#   - ../shared's evil_hdr-*, luks2_header_requirements,
#     luks2_invalid_cipher and every luks2_mda_images size;
#   - single bit flips in LUKS2 binary headers (one copy, both copies),
#     in the LUKS2 JSON (both copies, checksums made valid again), in the
#     LUKS1 header and key material;
#   - truncation at every header boundary, either side;
#   - the primary LUKS2 header destroyed, the secondary intact: served
#     with -r (and without), the right plaintext, nothing written.
# The quick run (default) keeps every kind of case: all the third-party
# images but three of the nine mda sizes (the smallest, a middle one,
# the largest), every primary-header case, truncation to one byte short
# of and exactly at every boundary, and a fifth of the bit flips, spread
# over the same byte ranges.  The full run (DMCRYPT_TEST_FULL=1) adds the
# other mda sizes, truncation one byte past each boundary and all the
# flips (40 + 30 + 60 LUKS2, 60 + 5 LUKS1).
# HOSTILE_SCALE (default 1) multiplies the number of bit flips;
# HOSTILE_SECONDS (default 600) cuts them short on a slow machine.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy cryptsetup timeout
requires_oracle
plugin_built_or_fail
scratch

budget_seconds=${HOSTILE_SECONDS:-600}
scale=${HOSTILE_SCALE:-1}
if full_run; then
  echo "full run: every mda size, truncations, all bit flips"
  flip_div=1 mda_sizes="16 32 64 128 256 512 1024 2048 4096" sides="-1 0 1"
else
  echo "quick run: 3 mda sizes, truncation short of and at each" \
       "boundary, a fifth of the bit flips; DMCRYPT_TEST_FULL=1 for all"
  flip_div=5 mda_sizes="16 256 4096" sides="-1 0"
fi
start_seconds=$SECONDS
served=0 refused=0 skipped=0

# ---- LUKS2 header surgery (test input only) ------------------------------
# luks2.py json-range IMG        first and last byte of the JSON text
# luks2.py flip OFFSET BIT IMG   flips a bit at OFFSET of both header copies
# luks2.py flip-fix OFFSET BIT IMG  the same, then makes both checksums
#                                valid again
cat > "$tmp/luks2.py" <<'EOF'
import hashlib, struct, sys
CSUM_AT, CSUM_BYTES, BIN_BYTES = 448, 64, 4096
cmd, img = sys.argv[1], sys.argv[-1]
f = open(img, "r+b")
hdr_size = struct.unpack(">Q", f.read(16)[8:16])[0]

def fix(at):
    f.seek(at)
    h = bytearray(f.read(hdr_size))
    h[CSUM_AT:CSUM_AT + CSUM_BYTES] = bytes(CSUM_BYTES)
    f.seek(at + CSUM_AT)
    f.write(hashlib.sha256(h).digest().ljust(CSUM_BYTES, b"\0"))

if cmd == "json-range":
    f.seek(BIN_BYTES)
    js = f.read(hdr_size - BIN_BYTES).split(b"\0", 1)[0]
    print(BIN_BYTES, BIN_BYTES + len(js) - 1)
elif cmd in ("flip", "flip-fix"):
    offset, bit = int(sys.argv[2]), int(sys.argv[3])
    for at in (0, hdr_size):
        f.seek(at + offset)
        b = f.read(1)[0] ^ (1 << bit)
        f.seek(at + offset)
        f.write(bytes([b]))
        if cmd == "flip-fix":
            fix(at)
EOF
luks2 () { "$PY" "$tmp/luks2.py" "$@"; }

# ---- the check -----------------------------------------------------------
# What cryptsetup says the mapping of IMG is (its key and data segment;
# and the file's size, which sets the export's), on a copy, since
# cryptsetup may repair a damaged LUKS2 header.
mapping_of ()  # mapping_of IMG PWFILE > OUT
{
  cp "$1" "$tmp/ck.img"
  echo "file size $(stat -c %s "$1")"
  cryptsetup luksDump --dump-volume-key --batch-mode --key-file "$2" \
    "$tmp/ck.img" 2>/dev/null | grep -v '^UUID:\|^LUKS header information'
  cryptsetup luksDump "$tmp/ck.img" 2>/dev/null \
    | sed -n '/^Data segments:/,/^Keyslots:/p'
}

# check NAME IMG PWFILE ORIG_MAPPING ORIG_PLAIN [nbdkit options --]
#   Serves IMG with passphrase=+PWFILE and copies the plaintext out.
#   Refused: one error line, no crash.  Served: cryptsetup must unlock it
#   too, and the plaintext must be ORIG_PLAIN when cryptsetup's mapping
#   is ORIG_MAPPING, else what the oracle decrypts.  IMG never changes.
check ()
{
  local name=$1 img=$2 pw=$3 orig_map=$4 orig_plain=$5; shift 5
  local opts=() before rc lines key
  if [ $# -gt 0 ]; then
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
  fi
  before=$(sha256_of "$img")
  rm -f "$tmp/out"
  timeout -k 5 60 nbdkit -U - "${opts[@]}" "$plugin" file="$img" \
    passphrase=+"$pw" --run "nbdcopy \"\$uri\" '$tmp/out'" \
    </dev/null >"$tmp/stdout" 2>"$tmp/err"
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -ge 128 ]; then
    cat "$tmp/err" >&2
    fail "$name: crashed or hung (exit $rc)"
  fi
  [ "$(sha256_of "$img")" = "$before" ] || fail "$name: the image changed"
  if [ $rc -ne 0 ]; then
    lines=$(grep -c . "$tmp/err")
    if [ "$lines" -ne 1 ] || ! grep -q 'error' "$tmp/err"; then
      cat "$tmp/err" >&2
      fail "$name: refused with $lines lines on stderr, not one error"
    fi
    refused=$((refused + 1))
    [ -n "${verbose:-}" ] && echo "refused: $name: $(cat "$tmp/err")"
    return 0
  fi
  mapping_of "$img" "$pw" > "$tmp/map"
  grep -q 'MK dump' "$tmp/map" \
    || fail "$name: served, but cryptsetup cannot unlock it"
  if [ -n "$orig_map" ] && cmp -s "$tmp/map" "$orig_map"; then
    cmp -s "$tmp/out" "$orig_plain" \
      || fail "$name: served plaintext differs from the original"
  else
    key=$(awk '/MK dump:/ {p=1; sub(/.*MK dump:/, ""); print; next}
               p && /^[ \t]/ {print; next} {p=0}' "$tmp/map" \
          | tr -d ' \t\n:')
    oracle decrypt "$tmp/ck.img" "$tmp/expected" --luks-key "$key" \
      >/dev/null 2>&1 || fail "$name: served, but the oracle cannot read it"
    cmp -s "$tmp/out" "$tmp/expected" \
      || fail "$name: served plaintext differs from the oracle's"
    [ -n "$orig_map" ] && echo "served, mapping changed: $name"
  fi
  served=$((served + 1))
}

# flips NAME TYPE FIRST LAST COUNT EDIT...: COUNT bit flips spread over
# bytes FIRST..LAST, each checked on a fresh copy; EDIT gets the byte's
# offset and a bit number (with the image's path after them).
flips ()
{
  local name=$1 type=$2 first=$3 last=$4 i off
  local count=$(( ($5 * scale + flip_div - 1) / flip_div ))
  shift 5
  for (( i = 0; i < count; i++ )); do
    over_budget && return 0
    off=$(( first + i * (last - first + 1) / count ))
    is_cost_byte "$type" "$off" && off=$((off + 1))
    damaged "$name byte $off bit $(( (off + i) % 8 ))" "$type" \
      "$@" "$off" $(( (off + i) % 8 ))
  done
}

# The top byte of a LUKS1 iteration count (the master key digest's at
# byte 164, each keyslot's at 212 + 48 n): a flip there asks the KDF for
# up to 2^31 iterations, which libcryptsetup runs, as cryptsetup does,
# for hours.  A header may set any KDF cost; that is not tested here.
is_cost_byte ()  # is_cost_byte TYPE OFFSET
{
  [ "$1" = luks1 ] || return 1
  [ "$2" -eq 164 ] || { [ "$2" -ge 212 ] && [ $(( ($2 - 212) % 48 )) -eq 0 ]; }
}

over_budget ()
{
  if [ $((SECONDS - start_seconds)) -ge "$budget_seconds" ]; then
    skipped=$((skipped + 1))
    return 0
  fi
  return 1
}

summary ()
{
  echo "ok: $1: $served served, $refused refused so far" \
       "($((SECONDS - start_seconds)) s)"
}

# ---- 1. images from the cryptsetup project -------------------------------
data="$shared/testdata/cryptsetup"
if [ -d "$data" ]; then
  mkdir "$tmp/third"
  ( cd "$tmp/third" &&
    for f in "$data"/evil_hdr-*.xz "$data"/luks2_invalid_cipher.img.xz; do
      xz -dc "$f" > "$(basename "${f%.xz}")"
    done &&
    tar xJf "$data/luks2_header_requirements.tar.xz" &&
    tar xJf "$data/luks2_mda_images.tar.xz" ) || fail "unpacking ../shared"
  printf %s compatkey > "$tmp/compatkey"
  n=0
  for img in "$tmp"/third/evil_hdr-*; do
    check "$(basename "$img")" "$img" "$tmp/compatkey" "" ""
    n=$((n + 1))
  done
  [ $n -ge 5 ] || fail "only $n evil_hdr images"
  [ $served -eq 0 ] || fail "an evil header was served"
  printf %s blablabl > "$tmp/reqpw"
  check requirements "$tmp/third/luks2_header_requirements" "$tmp/reqpw" \
    "" ""
  grep -q 'requirements' "$tmp/err" || fail "requirements: $(cat "$tmp/err")"
  printf %s 93R4P4pIqAH8 > "$tmp/icpw"
  check invalid-cipher "$tmp/third/luks2_invalid_cipher.img" "$tmp/icpw" \
    "" ""
  grep -q 'cipher' "$tmp/err" || fail "invalid cipher: $(cat "$tmp/err")"
  [ $served -eq 0 ] || fail "a refused third-party image was served"
  printf %s Qx3qn46vq0v > "$tmp/mdapw"
  n=0
  for kib in $mda_sizes; do
    check "mda $kib KiB" "$tmp/third/test_image_$kib" "$tmp/mdapw" "" ""
    n=$((n + 1))
  done
  [ $served -eq $n ] || fail "only $served of the $n mda images were served"
  rm -rf "$tmp/third"
  summary "../shared images"
else
  echo "note: ../shared/testdata is absent: third-party images skipped"
fi

# ---- images made here ----------------------------------------------------
pw_file="$tmp/pw"
printf %s "hostile-pw" > "$pw_file"
data_bytes=$((256 * 1024))
random_file "$tmp/plain" $data_bytes

# make_image TYPE IMG: formats, writes $tmp/plain through the plugin, and
# records cryptsetup's mapping in IMG.map.
make_image ()
{
  local type=$1 img=$2
  if [ "$type" = luks2 ]; then
    # Data at 512 KiB after a 16 KiB header pair and 256 KiB of keyslots.
    truncate -s $((512 * 1024 + data_bytes)) "$img"
    luks_format luks2 "$img" hostile-pw -s 256 --offset 1024 \
      --luks2-keyslots-size 256k || fail "luksFormat luks2"
  else
    truncate -s $((2 * 1024 * 1024 + data_bytes)) "$img"
    printf %s hostile-pw | cryptsetup luksFormat --batch-mode --type luks1 \
      --pbkdf pbkdf2 --iter-time 1 -s 256 --key-file - "$img" >/dev/null \
      || fail "luksFormat luks1"
  fi
  timeout 60 nbdkit -U - "$plugin" file="$img" passphrase=+"$pw_file" \
    --run "nbdcopy '$tmp/plain' \"\$uri\"" || fail "writing $img"
  mapping_of "$img" "$pw_file" > "$img.map"
  check "$type undamaged" "$img" "$pw_file" "$img.map" "$tmp/plain"
  [ $served -gt 0 ] || fail "$type: the undamaged image was not served"
}

# damaged NAME TYPE EDIT...: a fresh copy of the TYPE image, EDIT run on
# it (with the image's path appended), then checked.
damaged ()
{
  local name=$1 type=$2; shift 2
  cp "$tmp/$type.img" "$tmp/d.img"
  "$@" "$tmp/d.img" || fail "$name: cannot damage the image"
  check "$name" "$tmp/d.img" "$pw_file" "$tmp/$type.img.map" "$tmp/plain"
}

flip_at ()  # flip_at OFFSET BIT IMG
{
  local byte
  byte=$(od -An -tu1 -j "$1" -N1 "$3" | tr -d ' ')
  printf "$(printf '\\%03o' $((byte ^ (1 << $2))))" \
    | dd of="$3" bs=1 seek="$1" conv=notrunc status=none
}
truncate_to () { truncate -s "$1" "$2"; }
zero_range ()  # zero_range OFFSET BYTES IMG
{
  dd if=/dev/zero of="$3" bs=1 seek="$1" count="$2" conv=notrunc \
    status=none
}
garbage_range ()  # garbage_range OFFSET BYTES IMG
{
  head -c "$2" /dev/urandom \
    | dd of="$3" bs=1 seek="$1" conv=notrunc status=none
}

make_image luks2 "$tmp/luks2.img"
make_image luks1 "$tmp/luks1.img"
summary "fresh images"

# ---- 2. primary LUKS2 header destroyed, secondary intact -----------------
hdr=16384                  # cryptsetup's default LUKS2 header size
for how in "zero_range 0 $hdr" "garbage_range 0 $hdr" "zero_range 0 4096" \
           "garbage_range 4096 $((hdr - 4096))"; do
  before=$served
  # shellcheck disable=SC2086
  damaged "primary: $how, -r" luks2 $how
  cp "$tmp/d.img" "$tmp/d0.img"
  check "primary: $how, read-write" "$tmp/d0.img" "$pw_file" \
    "$tmp/luks2.img.map" "$tmp/plain"
  [ $served -eq $((before + 2)) ] \
    || fail "primary: $how: not served from the secondary header"
done
# Also when the secondary is not at the default offset (64 KiB headers).
truncate -s $((1024 * 1024 + data_bytes)) "$tmp/m64.img"
luks_format luks2 "$tmp/m64.img" hostile-pw -s 256 --offset 2048 \
  --luks2-metadata-size 64k --luks2-keyslots-size 256k \
  || fail "luksFormat 64k"
timeout 60 nbdkit -U - "$plugin" file="$tmp/m64.img" passphrase=+"$pw_file" \
  --run "nbdcopy '$tmp/plain' \"\$uri\"" || fail "writing m64.img"
mapping_of "$tmp/m64.img" "$pw_file" > "$tmp/m64.map"
zero_range 0 65536 "$tmp/m64.img"
before=$served
check "primary 64 KiB header zeroed, -r" "$tmp/m64.img" "$pw_file" \
  "$tmp/m64.map" "$tmp/plain" -r --
[ $served -eq $((before + 1)) ] || fail "64 KiB: secondary not used"
summary "primary header destroyed"

# ---- 3. truncation at every header boundary ------------------------------
json_end=$(luks2 json-range "$tmp/luks2.img" | cut -d' ' -f2)
for b in 0 512 4096 $((json_end + 1)) $hdr $((2 * hdr)) $((2 * hdr + 4096)) \
         $((2 * hdr + 131072)) $((2 * hdr + 262144)) $((512 * 1024)) \
         $((512 * 1024 + 4096)); do
  for d in $sides; do
    size=$((b + d))
    [ $size -ge 0 ] || continue
    damaged "luks2 truncated to $size" luks2 truncate_to $size
  done
done
# LUKS1: the 592-byte header (keyslots from byte 208), the key material
# of slot 0 (from sector 8, 128000 bytes for a 256-bit key), the payload
# at 4096 sectors.
for b in 0 208 592 4096 $((4096 + 128000)) $((4096 * 512)) \
         $((4096 * 512 + 512)); do
  for d in $sides; do
    size=$((b + d))
    [ $size -ge 0 ] || continue
    damaged "luks1 truncated to $size" luks1 truncate_to $size
  done
done
summary "truncation"

# ---- 4. bit flips --------------------------------------------------------
# LUKS2 binary header: one copy (the other one takes over), both copies.
flips "luks2 primary" luks2 0 511 40 flip_at
flips "luks2 both copies" luks2 0 511 30 luks2 flip
# The JSON text of both copies, their checksums made valid again: what
# libcryptsetup's JSON validation and luks/ must cope with.
read -r json_start json_end < <(luks2 json-range "$tmp/luks2.img")
flips "luks2 JSON" luks2 "$json_start" "$json_end" 60 luks2 flip-fix
summary "LUKS2 bit flips"
# The LUKS1 header has no checksum: every field is taken as it is.  Then
# the key material of slot 0.
flips "luks1 header" luks1 0 591 60 flip_at
flips "luks1 key material" luks1 4096 $((4096 + 127999)) 5 flip_at
summary "LUKS1 bit flips"

[ $skipped -eq 0 ] \
  || echo "note: $skipped flip loops cut short after $budget_seconds s"
[ $served -gt 0 ] && [ $refused -gt 0 ] \
  || fail "expected both served and refused cases"
echo "PASS: $served served, $refused refused cleanly, none written"
