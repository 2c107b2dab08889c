#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Random unaligned reads, writes and zeroes, many in flight on several
# connections at once, checked against an in-memory shadow (tests/stress.py),
# then checked again after a server restart, and the image decrypted by the
# independent oracle (tests/oracle.py) must equal the shadow too.  Run for
# a LUKS2 volume with 4096-byte encryption sectors and a plain one with
# 512-byte sectors.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit cryptsetup timeout
requires "$PY" -c 'import nbd'
requires "$PY" -c 'import cryptography'
[ -f "$srcdir/oracle.py" ] || fail "tests/oracle.py is missing"
plugin_built_or_fail
scratch

# DMCRYPT_STRESS_OPS=N runs a longer (or shorter) stress by hand.
ops=${DMCRYPT_STRESS_OPS:-20000}

# stress NAME SECTOR_BYTES IMAGE ORACLE_MAPPING plugin-args...: run,
# restart, verify, decrypt IMAGE with the oracle (ORACLE_MAPPING is its
# --table or --luks-key option, as one word "--opt=value").
stress ()
{
  local name=$1 ss=$2 image=$3 mapping=$4; shift 4
  local shadow="$tmp/$name.shadow"

  echo "== $name: $ops requests, ${ss}-byte sectors"
  timeout 120 nbdkit -U - "$plugin" "$@" --run \
    "'$PY' '$srcdir/stress.py' run \"\$uri\" '$shadow' --ops $ops \
       --seconds 40 --conns 4 --depth 16 --sector-size $ss --seed $RANDOM" \
    || fail "$name: stress run failed"
  timeout 60 nbdkit -U - "$plugin" "$@" --run \
    "'$PY' '$srcdir/stress.py' verify \"\$uri\" '$shadow'" \
    || fail "$name: content differs after a server restart"
  timeout 60 "$PY" "$srcdir/oracle.py" decrypt "$image" "$tmp/oracle.raw" \
    "$mapping" || fail "$name: the oracle cannot decrypt the image"
  cmp "$tmp/oracle.raw" "$shadow" \
    || fail "$name: the oracle's plaintext differs from the shadow"
  echo "the oracle's plaintext equals the shadow"
}

# LUKS2, 4096-byte sectors: 16 MiB of data after the 16 MiB header area.
printf %s "stress-pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" stress-pw --sector-size 4096
stress luks2-4096 4096 "$tmp/luks2.img" \
  --luks-key="$(luks_volume_key "$tmp/luks2.img" stress-pw)" \
  file="$tmp/luks2.img" passphrase=+"$tmp/pw"

# Plain aes-xts-plain64, 512-byte sectors, 16 MiB, with an IV offset so
# that sector numbers and IVs differ.
key=$(random_hex 64)
echo "$key" > "$tmp/key.hex"
truncate -s 16M "$tmp/plain.img"
stress plain-512 512 "$tmp/plain.img" \
  --table="0 32768 crypt aes-xts-plain64 $key 7 x 0" \
  file="$tmp/plain.img" cipher=aes-xts-plain64 \
  key=+"$tmp/key.hex" iv-offset=7 sector-size=512

echo "PASS"
