#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Load soak (tests/soak.py): 32 connections with 16 requests in flight
# each for 30 s of mixed reads, writes, zeroes, trims and flushes
# (allow-discards=on) against a LUKS2 volume with 4096-byte sectors: no
# request fails, every read returns what the model says (trimmed
# sectors are "don't care" until rewritten), the server's RSS stays
# under its cap (the engine's max-inflight + nbdkit's request buffers +
# a margin, see docs/reliability.md), and at the end the export and
# the oracle's decryption of the image equal the model.
# The quick run soaks for 8 s: every kind of request, the RSS cap and
# the final comparison, on fewer requests; the full run
# (DMCRYPT_TEST_FULL=1) for 30 s.  DMCRYPT_SOAK_SECONDS=N sets the length
# in either.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit cryptsetup timeout
requires "$PY" -c 'import nbd'
requires_oracle
plugin_built_or_fail
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
scratch

if full_run; then
  seconds=${DMCRYPT_SOAK_SECONDS:-30}
  echo "full run: ${seconds} s"
else
  seconds=${DMCRYPT_SOAK_SECONDS:-8}
  echo "quick run: ${seconds} s; DMCRYPT_TEST_FULL=1 for 30 s"
fi
# A sanitizer's runtime has memory of its own: RSS is then only shown.
rss_cap=()
[ -n "${DMCRYPT_SANITIZER:-}" ] && rss_cap=(--no-rss-cap)
max_inflight_mib=8       # the engine's cap, set low so that it bites

printf %s "soak-pw" > "$tmp/pw"
truncate -s 48M "$tmp/soak.img"
luks_format luks2 "$tmp/soak.img" soak-pw --sector-size 4096
vk=$(luks_volume_key "$tmp/soak.img" soak-pw)

timeout $(( seconds + 240 )) "$PY" "$srcdir/soak.py" --image "$tmp/soak.img" \
  --luks-key "$vk" --sector-size 4096 --seconds "$seconds" --conns 32 \
  --depth 16 --max-inflight-mib $max_inflight_mib "${rss_cap[@]}" -- \
  -v "$plugin" file="$tmp/soak.img" passphrase=+"$tmp/pw" \
  allow-discards=on max-inflight=${max_inflight_mib}M \
  || { grep -v 'debug:' "$tmp/soak.img.soak.log" | tail -n 20 >&2
       fail "soak"; }
# The engine's own account (nbdkit -v prints it at exit).
grep -o 'stats: .*' "$tmp/soak.img.soak.log" | tail -n 1
grep -q 'errors 0' "$tmp/soak.img.soak.log" \
  || fail "the engine counted failed requests"
echo "PASS"
