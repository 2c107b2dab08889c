#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Crash consistency (tests/crash.py): a random write + flush workload on
# two connections with many requests in flight, the server SIGKILLed at
# a random moment, restarted, and the whole export checked, sector by
# encryption sector: every write acknowledged before a completed flush
# (or with FUA) is there, and every sector holds its durable content or
# the content of a later write -- never an older one, never garbage; the
# independent oracle decrypts the image to the same bytes, over three
# volumes (plain 512-byte sectors, plain 4096-byte sectors with an IV
# offset, LUKS2).  Then the same killing against nbdkit -r: the image's
# SHA-256 never changes.  Images live on tmpfs when there is one
# (/dev/shm), 16 MiB of data each.
# The quick run (default) does 6 read-write rounds on each volume (the
# checker's self-check included) and 5 read-only rounds on two of them;
# the full run (DMCRYPT_TEST_FULL=1) does 17 + 17 + 16 = 50 read-write
# and 25 + 25 read-only rounds.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit cryptsetup timeout
requires "$PY" -c 'import nbd'
requires_oracle
plugin_built_or_fail
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
scratch

# DMCRYPT_CRASH_ROUNDS=N sets the rounds of each run by hand, in either
# variant.
rounds=${DMCRYPT_CRASH_ROUNDS:-}
if full_run; then
  echo "full run: 50 read-write rounds, 50 read-only"
else
  echo "quick run: 6 read-write rounds a volume, 5 read-only;" \
       "DMCRYPT_TEST_FULL=1 for 50 + 50"
fi
crash ()  # crash MODE FULL_ROUNDS QUICK_ROUNDS NAME crash.py-args... -- ...
{
  local mode=$1 n=$2 name=$4
  full_run || n=$3
  n=${rounds:-$n}
  shift 4
  echo "== $name: $mode, $n rounds"
  timeout 300 "$PY" "$srcdir/crash.py" "$mode" --rounds "$n" "$@" \
    || { tail -n 20 "$tmp/$name.img.crash.log" >&2
         fail "$name: $mode crash rounds"; }
}

key512=$(random_hex 64)
table512="0 32768 crypt aes-xts-plain64 $key512 0 x 0"
truncate -s 16M "$tmp/p512.img"
crash rw 17 6 p512 --sector-size 512 --image "$tmp/p512.img" \
  --table "$table512" -- "$plugin" file="$tmp/p512.img" table="$table512"

key4k=$(random_hex 64)
table4k="0 32768 crypt aes-xts-plain64 $key4k 64 x 0 1 sector_size:4096"
truncate -s 16M "$tmp/p4k.img"
crash rw 17 6 p4k --sector-size 4096 --image "$tmp/p4k.img" \
  --table "$table4k" -- "$plugin" file="$tmp/p4k.img" table="$table4k"

printf %s "crash-pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" crash-pw --sector-size 4096
vk=$(luks_volume_key "$tmp/luks2.img" crash-pw)
crash rw 16 6 luks2 --sector-size 4096 --image "$tmp/luks2.img" \
  --luks-key "$vk" -- "$plugin" file="$tmp/luks2.img" passphrase=+"$tmp/pw"

# Read-only: the images as the rw rounds left them.
crash ro 25 5 luks2 --sector-size 4096 --image "$tmp/luks2.img" \
  --luks-key "$vk" -- "$plugin" file="$tmp/luks2.img" passphrase=+"$tmp/pw"
crash ro 25 5 p512 --sector-size 512 --image "$tmp/p512.img" \
  --table "$table512" -- "$plugin" file="$tmp/p512.img" table="$table512"
echo "PASS"
