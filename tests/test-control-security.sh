#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control socket's safety: mode 0600 in a 0700 directory; malformed,
# oversized, truncated and silent clients get an error or are dropped,
# and the server goes on serving; keys never reach the server's log; as
# root, a client of another uid is refused by the server (SO_PEERCRED)
# and dmcryptctl refuses to talk to a server of another uid.
source "$(dirname "$0")/functions.sh"
source "$srcdir/control-functions.sh"

key=$(random_hex 32)
table="0 32768 crypt aes-cbc-essiv:sha256 $key 0 x 0"
truncate -s 16M "$tmp/v.img"
start_volume v file="$tmp/v.img" table="$table" || fail "start"

[ "$(stat -c %a "$sockdir")" = 700 ] || fail "directory mode"
[ "$(stat -c %a "$sockdir/v.sock")" = 600 ] || fail "socket mode"
[ "$(stat -c %u "$sockdir/v.sock")" = "$(id -u)" ] || fail "socket owner"
echo "ok: socket 0600 in a 0700 directory"

# send PAYLOAD-PYTHON-EXPRESSION [SOCKET] -> the reply (may be empty)
send ()
{
  "$PY" - "${2:-$sockdir/v.sock}" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
try:
    s.sendall(eval(sys.argv[2]))
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
reply = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        reply += chunk
except OSError:
    pass
sys.stdout.write(reply.decode("ascii", "replace"))
EOF
}

# bad PAYLOAD WANT: the reply must hold WANT ("" = may be anything).
bad ()
{
  local reply
  reply=$(send "$1") || fail "client crashed on $1"
  if [ -n "$2" ] && ! grep -qx "$2" <<< "$reply"; then
    fail "$1: reply '$reply', wanted '$2'"
  fi
  ctl info v > /dev/null || fail "the server stopped answering after $1"
}
bad 'b"garbage without a newline"' ''
bad 'b"\n\n"' 'errno 22'
bad 'b"op info"' ''
bad 'b"op\0info\n\n"' 'errno 71'
bad 'b"OP info\n\n"' 'errno 71'
bad 'b"op info\n" + b"x" * 70000' 'errno 90'
bad 'b"k v\n" * 200 + b"\n"' 'errno 71'
bad 'b"op nosuch\n\n"' 'errno 22'
bad 'b"op reload\n\n"' 'errno 22'
bad 'b"op reload\ntable " + b"1 " * 20000 + b"\n\n"' 'errno 22'
bad 'b"op message\nsector x\ntext key wipe\n\n"' 'errno 22'
bad 'b"op message\nsector 99999999\ntext key wipe\n\n"' 'errno 22'
bad 'bytes(range(256)) * 4' ''
bad 'b"op table\ninactive 1\n\n"' 'result 0'
[ "$(ctl info v | sed -n 's/^State: *//p')" = ACTIVE ] || fail "state"
echo "ok: malformed requests refused, the server still serves"

# A client that connects and says nothing is dropped after 5 s.
"$PY" -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(8)
" "$sockdir/v.sock" &
silent=$!
sleep 0.5
start=$(date +%s)
ctl info v > /dev/null || fail "info behind a silent client"
[ $(( $(date +%s) - start )) -le 7 ] || fail "a silent client held the server"
wait $silent
echo "ok: a silent client does not hold the server"

# Keys do not reach the server's log, whatever the commands.
ctl table --showkeys v > /dev/null
ctl reload v "$(ctl table --showkeys v)" && ctl resume v || fail "reload"
ctl suspend v && echo "$key" | ctl message v 0 key set - && ctl resume v \
  || fail "key set"
ctl message v 0 key set 00 2> /dev/null
grep -qi "$key" "$tmp/v.log" && fail "the key is in the server's log"
echo "ok: no key in the log"

# dmcryptctl trusts no directory that others may write to.
mkdir -m 0777 "$tmp/open"
expect_fail "--dir of a world-writable directory" ctl --dir "$tmp/open" ls \
  || true
grep -q "writable by others" "$tmp/err" || fail "--dir: no reason given"

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null; then
  echo "skipped: the other-uid checks need root and setpriv"
  exit 0
fi
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# A socket reachable by everybody (control= in an open directory, then
# opened up): the server itself must refuse another uid.
truncate -s 16M "$tmp/w.img"
start_volume w file="$tmp/w.img" table="$table" control="$tmp/open/w.sock" \
  || fail "start w"
chmod 0666 "$tmp/open/w.sock"
chmod 0755 "$tmp"
reply=$("${nobody[@]}" "$PY" -c "
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
try:
    s.sendall(b'op table\nshowkeys 1\n\n')
except OSError:
    pass
print(s.recv(65536).decode())
" "$tmp/open/w.sock") || fail "the nobody client failed"
grep -qx "errno 13" <<< "$reply" || fail "another uid was served: $reply"
grep -q "$key" <<< "$reply" && fail "a key went to another uid"
echo "ok: the server refuses a client of another uid"

# A server of another uid (anyone can make a socket): dmcryptctl, as
# root, must not send it anything.
"${nobody[@]}" "$PY" -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.settimeout(5)
try:
    data = c.recv(65536)
except OSError:
    data = b''
open(sys.argv[2], 'wb').write(data)
" "$tmp/open/fake.sock" "$tmp/open/fake.got" &
fake=$!
for (( i = 0; i < 50; i++ )); do
  [ -S "$tmp/open/fake.sock" ] && break; sleep 0.1
done
echo "$table" | expect_fail "reload to a foreign server" \
  ctl reload "$tmp/open/fake.sock"
grep -q 'Permission denied' "$tmp/err" || fail "no 'Permission denied'"
wait $fake
[ -s "$tmp/open/fake.got" ] && fail "dmcryptctl sent the table to another uid"
echo "ok: dmcryptctl refuses a server of another uid"
