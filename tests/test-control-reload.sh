#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What reload, resume, clear and message may change on a live volume,
# and what they refuse: a bad table (also one sent straight to the
# server, past dmcryptctl's own checks) leaves both tables as they were;
# a change of the data's meaning needs --force; allow_discards follows
# the live table (old connections lose trim); the scheduler and worker
# count change; "key wipe" blocks resume until "key set".
source "$(dirname "$0")/functions.sh"
requires "$PY" -c 'import nbd'
source "$srcdir/control-functions.sh"

key=$(random_hex 64)
# line [IV_OFFSET [OPTIONS]]: a table of the volume.
line ()
{
  echo "0 32768 crypt aes-xts-plain64 $key ${1:-0} $tmp/v.img 0${2:+ $2}"
}
truncate -s 16M "$tmp/v.img"
start_volume v file="$tmp/v.img" table="$(line)" || fail "start"
head -c 65536 /dev/urandom > "$tmp/data"
nbdio "$(uri_of v)" write 0 "$tmp/data" || fail "first write"

# A good inactive table, then bad ones: the inactive one stays.
ctl reload v "$(line 0 '1 allow_discards')" || fail "reload allow_discards"
inactive=$(ctl table --showkeys --inactive v)
bad=("$(line 7)"                                # iv_offset: meaning
     "$(line | sed 's/^0 32768 /0 32760 /')"    # length: meaning
     "$(line | sed "s,$tmp/v.img,/dev/null,")"  # another device
     "$(line 0 '1 bogus_flag')"
     "0 65536 crypt aes-xts-plain64 $key 0 $tmp/v.img 0") # beyond image
for t in "${bad[@]}"; do
  expect_fail "reload of a bad table" ctl reload v "$t"
  [ "$(ctl table --showkeys --inactive v)" = "$inactive" ] \
    || fail "a bad reload changed the inactive table"
  [ "$(ctl table --showkeys v)" = "$(line)" ] \
    || fail "a bad reload changed the live table"
done
expect_fail "iv_offset change" ctl reload v "$(line 8)"
grep -q "iv_offset.*--force" "$tmp/err" || fail "no --force hint"
echo "ok: bad tables refused, both tables kept"

# The same through the raw protocol: the server checks too.
raw ()  # raw REQUEST-LINES... -> the reply
{
  "$PY" - "$sockdir/v.sock" "$@" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(("\n".join(sys.argv[2:]) + "\n\n").encode())
reply = b""
while not reply.endswith(b"\n\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    reply += chunk
print(reply.decode(), end="")
EOF
}
for t in "$(line 0 '2 bogus_flag')" "$(line 3 '1 sector_size:4096')" \
         "0 32768 crypt aes-xts-plain64 0011 0 $tmp/v.img 0"; do
  raw "op reload" "table $t" > "$tmp/reply"
  grep -qx 'result -1' "$tmp/reply" || fail "server accepted: $t"
  grep -qx 'errno 22' "$tmp/reply" || fail "server: not EINVAL"
done
[ "$(ctl table --showkeys --inactive v)" = "$inactive" ] \
  || fail "a raw bad reload changed the inactive table"
ctl clear v || fail "clear"
[ "$(info_field v 'Tables present:')" = LIVE ] || fail "clear kept a table"
echo "ok: the server refuses bad tables sent past dmcryptctl"

# allow_discards: a new connection gets trim; when discards are turned
# off again, an old connection's trim fails with EOPNOTSUPP.
[ "$(nbdio "$(uri_of v)" can-trim)" = 0 ] || fail "trim offered"
ctl reload v "$(line 0 '1 allow_discards')" && ctl resume v \
  || fail "reload + resume allow_discards"
[ "$(nbdio "$(uri_of v)" can-trim)" = 1 ] || fail "trim not offered"
nbdio "$(uri_of v)" trim 0 65536 || fail "trim failed"
[ "$(head -c 65536 "$tmp/v.img" | tr -d '\0' | wc -c)" = 0 ] \
  || fail "trim did not punch the ciphertext out"
nbdio "$(uri_of v)" write 0 "$tmp/data" || fail "write"
got=$(nbdio "$(uri_of v)" hold-trim 0 8192 \
        "'$ctl_bin' reload v '$(line)' && '$ctl_bin' resume v \
         && cp '$tmp/v.img' '$tmp/between.img'") \
  || fail "hold-trim: $got"
echo "$got"
# EOPNOTSUPP travels as EINVAL in NBD (only fast-zero carries ENOTSUP);
# that nothing more was punched out shows whose refusal it was.
case $got in
  "first:ok"$'\n'"second:EINVAL"|"first:ok"$'\n'"second:EOPNOTSUPP") ;;
  *) fail "trim on an old connection" ;;
esac
cmp "$tmp/v.img" "$tmp/between.img" || fail "the refused trim punched"
[ "$(dd if="$tmp/v.img" bs=4096 skip=2 count=2 status=none \
      | tr -d '\0' | wc -c)" -gt 0 ] || fail "the refused trim punched"
[ "$(nbdio "$(uri_of v)" can-trim)" = 0 ] || fail "trim still offered"
echo "ok: allow_discards follows the live table"

# --force: a new iv_offset changes what the same ciphertext means.
nbdio "$(uri_of v)" write 0 "$tmp/data" || fail "write"
ctl reload --force v "$(line 8)" && ctl resume v || fail "forced reload"
[ "$(ctl table --showkeys v)" = "$(line 8)" ] || fail "forced table"
nbdio "$(uri_of v)" read 0 65536 > "$tmp/other"
cmp -s "$tmp/data" "$tmp/other" && fail "iv_offset 8 reads the same data"
ctl reload --force v "$(line)" && ctl resume v || fail "forced back"
nbdio "$(uri_of v)" read 0 65536 | cmp - "$tmp/data" || fail "data lost"
echo "ok: --force changes the meaning, and back"

# Scheduler and workers: by reload options and by message.
ctl reload --scheduler fifo --workers 2 v "$(line)" && ctl resume v \
  || fail "reload --scheduler"
ctl status --stats v > "$tmp/stats"
grep -qx 'scheduler: fifo' "$tmp/stats" && grep -qx 'workers: 2' "$tmp/stats" \
  || fail "reload options not applied: $(cat "$tmp/stats")"
ctl message v 0 scheduler sorted && ctl message v 0 workers 3 \
  || fail "tunable messages"
ctl status --stats v > "$tmp/stats"
grep -qx 'scheduler: sorted' "$tmp/stats" \
  && grep -qx 'workers: 3' "$tmp/stats" \
  || fail "messages not applied"
head -1 "$tmp/stats" | grep -qx '0 32768 crypt ' || fail "status line"
grep -q '^writes: [1-9]' "$tmp/stats" || fail "no write counter"
# The cipher's sampled cost, summed over the tables reloaded so far:
# dmcryptctl prints it once a chunk of the direction was timed (its
# figure is what this machine measured, not judged here).
grep -Eq '^encrypt_cpu_ms_per_gib: [0-9]+\.[0-9]$' "$tmp/stats" \
  && grep -Eq '^decrypt_cpu_ms_per_gib: [0-9]+\.[0-9]$' "$tmp/stats" \
  || fail "no cipher cost: $(grep sample "$tmp/stats")"
expect_fail "unknown policy" ctl message v 0 scheduler nosuch
nbdio "$(uri_of v)" read 0 65536 | cmp - "$tmp/data" \
  || fail "data changed with the policy"
echo "ok: scheduler and workers changed live"

# key wipe / key set, as dm-crypt's messages.
expect_fail "key wipe while active" ctl message v 0 key wipe
grep -q 'not suspended' "$tmp/err" || fail "no 'not suspended'"
ctl suspend v && ctl message v 0 key wipe || fail "key wipe"
[ "$(ctl table --showkeys v | cut -d' ' -f5 | tr -d 0)" = "" ] \
  || fail "the wiped key is still shown"
expect_fail "resume without a key" ctl resume v
grep -q 'Resource temporarily unavailable' "$tmp/err" || fail "not EAGAIN"
[ "$(info_field v State:)" = SUSPENDED ] || fail "resumed without a key"
echo 0011 | { expect_fail "short key" ctl message v 0 key set -; }
echo "$key" | ctl message v 0 key set - || fail "key set"
ctl resume v || fail "resume after key set"
nbdio "$(uri_of v)" read 0 65536 | cmp - "$tmp/data" \
  || fail "data wrong after key set"
[ "$(ctl table --showkeys v)" = "$(line)" ] || fail "key not back"
echo "ok: key wipe blocks resume until key set"
