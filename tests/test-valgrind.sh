#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# valgrind memcheck on nbdkit serving a LUKS2 image: start-up and
# unlock, a short mixed workload (aligned and unaligned writes, reads,
# flush, zero, trim) from a separate client, control socket requests
# (status, table, suspend, resume), then shutdown.  Any memory error or
# definite leak fails the test; tests/valgrind.supp holds the few
# reports that belong to nbdkit and its libraries, not to dmcrypt.
source "$(dirname "$0")/functions.sh"
requires_cmd valgrind nbdkit cryptsetup timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
[ -z "${DMCRYPT_SANITIZER:-}" ] \
  || skip "valgrind cannot run a $DMCRYPT_SANITIZER build"
ctl_bin="$topdir/tools/dmcryptctl"
[ -x "$ctl_bin" ] || fail "$ctl_bin is not built: run make first"
scratch

printf %s "valgrind-pw" > "$tmp/pw"
truncate -s 24M "$tmp/v.img"
luks_format luks2 "$tmp/v.img" valgrind-pw || fail "luksFormat"

# nbdkit runs in the foreground under valgrind; --trace-children is off
# (nbdkit does not fork with -f).
timeout 600 valgrind --tool=memcheck --error-exitcode=99 \
  --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --track-origins=yes \
  --suppressions="$srcdir/valgrind.supp" --gen-suppressions=all \
  --log-file="$tmp/vg.log" \
  "$nbdkit_program" -f -U "$tmp/v.sock" -P "$tmp/v.pid" "${dmcrypt_entry[@]}" \
  file="$tmp/v.img" passphrase=+"$tmp/pw" allow-discards=1 workers=2 \
  control="$tmp/v.ctl" name=vg 2>"$tmp/nbdkit.log" &
server=$!
cleanup_fn "kill $server 2>/dev/null"

for (( i = 0; i < 1200; i++ )); do
  [ -S "$tmp/v.ctl" ] && [ -S "$tmp/v.sock" ] && break
  kill -0 "$server" 2>/dev/null \
    || { cat "$tmp/nbdkit.log" "$tmp/vg.log"; fail "server died"; }
  sleep 0.1
done
[ -S "$tmp/v.ctl" ] || fail "server not up after 120 s"

timeout 300 "$PY" - "nbd+unix:///?socket=$tmp/v.sock" <<'EOF' \
  || fail "client workload"
import os, sys
import nbd
h = nbd.NBD()
h.set_strict_mode(0)           # unaligned requests reach the plugin
h.connect_uri(sys.argv[1])
size = h.get_size()
shadow = bytearray(h.pread(1 << 20, 0))
for off, n in [(0, 65536), (4096, 4096), (1000, 3000), (70000, 9),
               (511, 1026), (300000, 131072)]:
    data = os.urandom(n)
    h.pwrite(data, off)
    if off + n <= len(shadow):
        shadow[off:off + n] = data
h.flush()
h.zero(8192, 16384)
shadow[16384:16384 + 8192] = bytes(8192)
if h.pread(1 << 20, 0)[:300000] != bytes(shadow[:300000]):
    sys.exit("read back differs")
h.trim(1 << 20, 1 << 20)
h.flush()
h.pread(65536, size - 65536)
h.shutdown()
print("client: ok")
EOF
for cmd in "status" "status --stats" "table" "info"; do
  # shellcheck disable=SC2086
  timeout 120 "$ctl_bin" $cmd "$tmp/v.ctl" >/dev/null \
    || fail "dmcryptctl $cmd"
done
timeout 120 "$ctl_bin" suspend "$tmp/v.ctl" \
  && timeout 120 "$ctl_bin" resume "$tmp/v.ctl" || fail "suspend/resume"

kill "$server"
wait "$server"
rc=$?
tail -n 15 "$tmp/vg.log"
grep -q 'ERROR SUMMARY: 0 errors' "$tmp/vg.log" || {
  grep -B2 -A30 -m3 \
    -E '^==[0-9]+== (Invalid|Conditional|Use of|Syscall|.*definitely lost)' \
    "$tmp/vg.log"
  fail "valgrind found errors (exit $rc)"
}
[ $rc -ne 99 ] || fail "valgrind's error exit"
grep -q 'definitely lost: 0 bytes' "$tmp/vg.log" \
  || grep -q 'All heap blocks were freed' "$tmp/vg.log" \
  || fail "definite leaks"
echo PASS
