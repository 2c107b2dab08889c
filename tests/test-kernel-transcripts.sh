#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the real-kernel transcripts in ../shared/reference/kernel-dmsetup
# let us check without their images or pattern.bin:
#   - every plain table the kernel accepted is served, with the size,
#     logical block size and read-only flag that blockdev printed, and
#     the control tool prints it as dmsetup did (table --showkeys, table,
#     status; the device field aside); every table the kernel refused
#     makes nbdkit exit with an error;
#   - the LUKS tables (with their hex keys) are served as plain tables
#     with the kernel's geometry;
#   - each LUKS image is re-made with the transcript's own luksFormat
#     command on an image of the transcript's geometry (data offset +
#     length); the table cryptsetup loaded has the same shape as the one
#     the oracle derives, which the plugin's control tool prints, key
#     included; the plugin's export has the kernel's size and
#     logical block size, and the transcript's two dd writes (1 MiB at 0
#     and at 4 KiB block 1283) read back identical through the plugin and
#     through the oracle.
source "$(dirname "$0")/functions.sh"
requires_shared reference/kernel-dmsetup
plugin_built_or_fail
requires_oracle
requires_cmd cryptsetup nbdkit nbdinfo
"$PY" -c "import nbd" 2>/dev/null \
  || skip "$PY lacks the nbd module (python3-libnbd)"
ref="$shared/reference/kernel-dmsetup"
scratch
cd "$tmp" || fail "cd $tmp"

oracle transcripts "$ref"/*.txt > records || fail "oracle transcripts"
record ()  # record KIND FILE NAME: the rest of the first matching record
{
  awk -F'\t' -v k="$1" -v f="$2" -v n="$3" \
    '$1 == k && $2 == f && $3 == n' records | head -n 1 | cut -f 4-
}

# "SIZE MIN_BLOCK READ_ONLY(0|1)" of the plugin's export, whose minimum
# block size is the encryption sector's, as the kernel's logical block
# size is (min-block-size=sector; the default is 1).
export_geometry ()  # export_geometry plugin-args...
{
  serve_dmcrypt 'nbdinfo --json "$uri"' min-block-size=sector "$@" \
    | "$PY" -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
print(e["export-size"], e.get("block_size_minimum", 1),
      int(e["is_read_only"]))'
}

# Compares a geometry with the transcript's blockdev line, if any.
check_blockdev ()  # check_blockdev FILE NAME "SIZE MIN RO"
{
  local geom kv size min ro
  read -r size min ro <<<"$3"
  geom=$(record GEOM "$1" "$2")
  [ -n "$geom" ] || { echo "  (no blockdev line for $2)"; return 0; }
  for kv in $geom; do
    case $kv in
      getss=*)     expect_equal "logical block size ($kv)" "${kv#*=}" "$min" ;;
      getsz=*)     expect_equal "512-byte sectors ($kv)" "${kv#*=}" \
                     $(( size / 512 )) ;;
      getsize64=*) expect_equal "size ($kv)" "${kv#*=}" "$size" ;;
      getro=*)     expect_equal "read-only flag ($kv)" "${kv#*=}" "$ro" ;;
      getpbsz=*)   echo "  (kernel physical block size ${kv#*=})" ;;
    esac
  done
}

# The plugin's "table --showkeys", "table" and "status" lines through
# its control socket, the device field (a path, not major:minor) masked.
ctl="$topdir/tools/dmcryptctl"
[ -x "$ctl" ] || fail "$ctl is not built: run make first"
plugin_tables ()  # plugin_tables plugin-args...
{
  local sock="$tmp/ctl.sock"
  serve_dmcrypt "'$ctl' table --showkeys '$sock' && '$ctl' table '$sock' &&
                 '$ctl' status '$sock'" control="$sock" "$@" \
    | awk 'NF >= 8 { $7 = "DEV" } { print }'
}
mask_dev () { awk '{ $7 = "DEV"; print }'; }
zero_key () { awk '{ gsub(/./, "0", $5); print }'; }

# ---- Plain tables ----------------------------------------------------
# The transcripts' /dev/vda has 32768 sectors.
truncate -s 16M vda.img
accepted=0 refused=0
while IFS=$'\t' read -r kind file name verdict table; do
  [ "$kind" = TABLE ] && [ "${file#plain-}" != "$file" ] || continue
  echo "$file $name ($verdict by the kernel): $table"
  if [ "$verdict" = accepted ]; then
    geo=$(export_geometry file=vda.img table="$table") \
      || fail "$name: the plugin refused a table the kernel accepted"
    read -r -a w <<<"$table"
    expect_equal "export size" $(( w[1] * 512 )) "${geo%% *}"
    check_blockdev "$file" "$name" "$geo"
    shown=$(record SHOWKEYS "$file" "$name")
    if [ -n "$shown" ]; then
      plugin_tables file=vda.img table="$table" > tables.out \
        || fail "$name: control socket"
      expect_equal "table --showkeys (device masked)" \
        "$(mask_dev <<<"$shown")" "$(sed -n 1p tables.out)"
      expect_equal "table (device masked)" \
        "$(mask_dev <<<"$shown" | zero_key)" "$(sed -n 2p tables.out)"
      expect_equal "status" "0 ${w[1]} crypt " "$(sed -n 3p tables.out)"
    fi
    accepted=$(( accepted + 1 ))
  else
    if serve_dmcrypt true file=vda.img table="$table" >out 2>&1; then
      fail "$name: the plugin accepted a table the kernel refused"
    fi
    grep -q . out || fail "$name: refused without a message"
    echo "  refused: $(grep -m1 . out)"
    refused=$(( refused + 1 ))
  fi
done < records
[ "$accepted" -ge 10 ] && [ "$refused" -ge 6 ] \
  || fail "found $accepted accepted and $refused refused tables only"

# ---- LUKS images -----------------------------------------------------
pw=vm-test-passphrase
printf %s "$pw" > pw
# The transcript's dd writes: pattern.bin (1 MiB, as its sha256 equals
# that of the first 16 x 64 KiB read back) at 0 and at 4 KiB block 1283,
# then both read back.
cat > rw.py <<'EOF'
import sys
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
data = open("pattern.bin", "rb").read()
for offset in (0, 1283 * 4096):
    h.pwrite(data, offset)
h.flush()
for offset in (0, 1283 * 4096):
    assert h.pread(len(data), offset) == data, "read back at %d" % offset
h.shutdown()
EOF
mask () { awk '{ $5 = "KEY"; $7 = "DEV"; print }'; }
for f in luks1-xts-512 luks2-xts-512 luks2-xts-4096; do
  args=$(record FORMAT "$f" -)
  kernel_table=$(record SHOWKEYS "$f" x)
  [ -n "$args" ] && [ -n "$kernel_table" ] || fail "$f: transcript unread"
  read -r -a w <<<"$kernel_table"
  img_bytes=$(( (w[7] + w[1]) * 512 ))
  echo "$f: the table cryptsetup loaded, served as a plain table"
  rm -f luks.img; truncate -s "$img_bytes" luks.img
  geo=$(export_geometry file=luks.img table="$kernel_table") \
    || fail "$f: plugin refused the kernel's table"
  check_blockdev "$f" x "$geo"

  echo "$f: $img_bytes-byte image, luksFormat $args"
  read -r -a fmt <<<"$args"
  printf %s "$pw" | cryptsetup luksFormat "${fmt[@]}" luks.img >/dev/null \
    || fail "$f: luksFormat"
  key=$(luks_volume_key luks.img "$pw")
  expect_equal "table shape (key and device masked)" \
    "$(mask <<<"$kernel_table")" \
    "$(oracle table-from-luks luks.img "$key" | mask)"

  geo=$(export_geometry file=luks.img passphrase=+pw) \
    || fail "$f: plugin did not serve"
  check_blockdev "$f" x "$geo"
  expect_equal "the plugin's table --showkeys, key included" \
    "$(oracle table-from-luks luks.img "$key" | mask_dev)" \
    "$(plugin_tables file=luks.img passphrase=+pw | sed -n 1p)"

  random_file pattern.bin $(( 1 << 20 ))
  serve_dmcrypt "$PY rw.py \"\$uri\"" file=luks.img passphrase=+pw \
    || fail "$f: plugin write/read back"
  echo "  same: 1 MiB at 0 and at 1283 * 4096 read back through the plugin"
  for seek in 0 $(( 1283 * 4096 )); do
    oracle decrypt luks.img got.bin --luks-key "$key" --seek "$seek" \
      --length $(( 1 << 20 )) || fail "oracle decrypt"
    expect_same "oracle read at $seek" pattern.bin got.bin
  done
done
echo "PASS"
