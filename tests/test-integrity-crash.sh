#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Crash consistency under dm-integrity (tests/crash.py with
# tests/crash_integrity.py): a random write + flush workload, the server
# SIGKILLed at a random moment, restarted, and then every sector must
# read without EIO and hold its flushed content or a later one, and the
# independent oracle (tests/oracle_integrity.py: it replays the journal
# and checks every tag) must find no bad block and read what the server
# returns.  On images the kernel made (tests/data/integrity/MANIFEST):
# LUKS2 aes-xts-plain64 + hmac-sha256, LUKS2 aes-gcm-random, and
# integritysetup's crc32c alone; the whole run adds the 2 MiB journal
# the kernel left dirty (23 sections, so that commits wrap the ring)
# and 4096-byte sectors.  Then nbdkit -r killed likewise must leave the
# image as it was, its committed journal replayed in memory only.
# The quick run (default) does 4 + 4 + 3 + 2 read-write rounds and 3
# read-only; the full run (DMCRYPT_TEST_FULL=1) 25 + 25 + 12 + 8 + 12
# and 20.
source "$(dirname "$0")/functions.sh"
source "$srcdir/integrity-functions.sh"
requires_cmd nbdkit xz timeout
requires "$PY" -c 'import nbd'
requires_oracle
plugin_built_or_fail
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
scratch
cd "$tmp" || fail "cd $tmp"

rounds=${DMCRYPT_CRASH_ROUNDS:-}
if full_run; then
  echo "full run: 82 read-write rounds on 5 images, 20 read-only"
else
  echo "quick run: 13 read-write rounds on 4 images, 3 read-only;" \
       "DMCRYPT_TEST_FULL=1 for 82 + 20"
fi

# crash MODE FULL_ROUNDS QUICK_ROUNDS NAME: crash.py on the copy of the
# kernel's image NAME, with its MANIFEST's keys.
crash ()
{
  local mode=$1 n=$2 name=$4 line args
  full_run || n=$3
  n=${rounds:-$n}
  line=$(manifest_line "$name")
  [ -e "$name.img" ] || xz -dc "$integrity_data/$(field "$line" file)" \
    > "$name.img" || fail "$name: xz -d"
  if [ "$(field "$line" kind)" = luks2 ]; then
    printf %s "$(field "$line" passphrase)" > "$name.pw"
    args=(--luks-key "$(field "$line" volume_key)" --
          "$plugin" file="$tmp/$name.img" passphrase=+"$tmp/$name.pw")
  else
    args=(--internal-hash "$(internal_hash "$line")" --
          "$plugin" file="$tmp/$name.img" type=integrity
          integrity="$(internal_hash "$line")")
  fi
  echo "== $name: $mode, $n rounds"
  timeout 300 "$PY" "$srcdir/crash.py" "$mode" --rounds "$n" \
    --sector-size "$(field "$line" sector_bytes)" --image "$name.img" \
    "${args[@]}" \
    || { tail -n 20 "$name.img.crash.log" >&2
         fail "$name: $mode crash rounds"; }
}

crash rw 25 4 luks2-hmac-sha256
crash rw 25 4 luks2-aes-gcm
crash rw 12 3 int-crc32c
crash rw 8 2 int-dirty
full_run && crash rw 12 0 luks2-hmac-sha256-4k
crash ro 20 3 luks2-hmac-sha256
echo PASS
