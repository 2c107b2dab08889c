#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile and unsupported dm-integrity superblocks, alone and under a
# LUKS2 header with integrity: each refused by the plugin with one error
# line that names the problem, exit 1, the image untouched -- never a
# crash, a hang or data served from a layout that does not fit.
source "$(dirname "$0")/functions.sh"
source "$srcdir/integrity-functions.sh"
requires_cmd xz nbdkit
plugin_built_or_fail
scratch
cd "$tmp" || fail "cd $tmp"

# poke IMAGE OFFSET FORMAT VALUE: little-endian field of the superblock
# (struct superblock, dm-integrity.c) set to VALUE.
poke ()
{
  "$PY" - "$@" <<'PYEOF'
import struct, sys
img, off, fmt, val = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4], 0)
with open(img, "r+b") as f:
    f.seek(off)
    f.write(struct.pack("<" + fmt, val))
PYEOF
}

xz -dc "$integrity_data/int-crc32c.img.xz" > clean.img || fail "xz -d"
case_of ()  # case_of WHAT PATTERN OFFSET FORMAT VALUE
{
  cp clean.img bad.img
  poke bad.img "$3" "$4" "$5"
  expect_refused "$1" "$2" "$tmp/bad.img" type=integrity
}
case_of "version 9" "version" 8 B 9
case_of "tag size 0" "tag size" 10 H 0
case_of "tag size 1000" "tag size" 10 H 1000
case_of "no journal sections" "journal" 12 I 0
case_of "a journal larger than the device" "journal" 12 I 0xfffffff
case_of "provided data beyond the device" "data|device" 16 Q 0xffffffffffffff
case_of "provided data that overflows" "data|overflow|device" 16 Q 0xffffffffffffffff
case_of "an unknown flag" "flag" 24 I 0x80
case_of "recalculating" "recalculat" 24 I 0x3
case_of "4 MiB blocks" "block|sectors per block" 28 B 13
case_of "interleave of 2^40 sectors" "interleave" 9 B 40

# No superblock at all, alone and under LUKS2 (its data area wiped).
head -c 4M /dev/zero > zero.img
expect_refused "no superblock" "superblock" "$tmp/zero.img" type=integrity
line=$(manifest_line luks2-hmac-sha256)
xz -dc "$integrity_data/$(field "$line" file)" > luks.img || fail "xz -d"
printf '%s' "$(field "$line" passphrase)" > pw
dd if=/dev/zero of=luks.img bs=512 seek=1088 count=8 conv=notrunc \
  status=none
expect_refused "LUKS2 without its dm-integrity superblock" "superblock" \
  "$tmp/luks.img" passphrase=+"$tmp/pw"
# A superblock whose tag size is not what the LUKS2 cipher stores.
xz -dc "$integrity_data/$(field "$line" file)" > luks.img || fail "xz -d"
poke luks.img $((1088 * 512 + 10)) H 28
expect_refused "LUKS2 over a 28-byte-tag superblock" "tag" \
  "$tmp/luks.img" passphrase=+"$tmp/pw"
# A dm-integrity device opened as if it were LUKS: named, not tried.
printf 'x' > pwx
expect_refused "a dm-integrity device without type=integrity" \
  "dm-integrity superblock.*type=integrity" "$tmp/clean.img" \
  passphrase=+"$tmp/pwx"
expect_refused "dm-integrity under the lab's device" "device=hdd" \
  "$tmp/clean.img" type=integrity device=hdd
# Parameters that do not go together.
expect_refused "integrity= without type=integrity" "type=integrity" \
  "$tmp/clean.img" integrity=sha256
expect_refused "a keyed hash without its key" "key" \
  "$tmp/clean.img" type=integrity integrity=hmac-sha256
expect_refused "an unknown hash" "hash|whirl" \
  "$tmp/clean.img" type=integrity integrity=nosuchhash
expect_refused "discards over integrity" "allow-discards" \
  "$tmp/clean.img" type=integrity allow-discards=true
expect_refused "an unknown mode" "integrity-mode" \
  "$tmp/clean.img" type=integrity integrity-mode=fast
echo PASS
