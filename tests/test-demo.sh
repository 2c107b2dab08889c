#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make demo's script, as the README's first command runs it: it must
# round-trip the plaintext, show ciphertext in the image and agree with
# the oracle, and say so on its last line.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_oracle
requires_cmd nbdkit nbdinfo nbdcopy cryptsetup
scratch
DEMO_DIR="$tmp/demo" timeout 300 "$topdir/tools/demo.sh" > "$tmp/out" 2>&1 \
  || { cat "$tmp/out"; fail "tools/demo.sh failed"; }
cat "$tmp/out"
grep -q '^demo: OK' "$tmp/out" || fail "the demo did not report success"
[ -s "$tmp/demo/demo.img" ] || fail "no demo image"
echo PASS
