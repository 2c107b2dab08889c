#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No secret has to appear on the command line: for each form the man
# page recommends (+FILE, -FD, - at the terminal, key files), neither
# any process's command line (what "ps" shows every user) nor nbdkit's
# -v log (which prints every "config key=..., value=...") holds the key
# or passphrase -- while the literal forms, shown as a control, do put
# them in both.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_cmd nbdkit nbdinfo ps cryptsetup timeout
scratch
cd "$tmp" || fail "cd $tmp"

key=$(random_hex 64)
KEY=$(tr a-f A-F <<<"$key")
pass="Tr0ub4dor-$(random_hex 6)"
table="0 32768 crypt aes-xts-plain64 $key 0 x 0"
truncate -s 16M plain.img
printf '%s\n' "$table" > table.txt
printf '%s\n' "$key" > key.hex
printf '%s' "$key" | "$PY" -c \
  'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read()))' \
  > key.bin
printf '%s' "$pass" > pw.txt
truncate -s 32M luks.img
luks_format luks2 luks.img "$pass"

# serve TITLE plugin-args...: runs the server with -v, records every
# command line on the machine while it runs, and the size it serves.
serve ()
{
  local title=$1; shift
  rm -f ps.txt log.txt size.txt
  timeout 60 nbdkit -v --log=stderr -U - "$plugin" "$@" \
    --run 'ps -ww -eo args > ps.txt; nbdinfo --size "$uri" > size.txt' \
    2> log.txt || { tail -5 log.txt; fail "$title: the server failed"; }
  [ -s size.txt ] || fail "$title: no size served"
  grep -q 'config key=' log.txt \
    || fail "$title: no config lines in the -v log (test broken)"
  grep -q "nbdkit.*$plugin" ps.txt \
    || fail "$title: the server is not in the ps output (test broken)"
}

# holds FILE: does FILE hold the key (either case) or the passphrase?
holds () { grep -q -e "$key" -e "$KEY" -e "$pass" "$1"; }

secret_free ()  # secret_free TITLE plugin-args...
{
  local title=$1
  serve "$@"
  holds ps.txt && fail "$title: a secret is in the ps output"
  holds log.txt && fail "$title: a secret is in the -v log"
  echo "ok: $title: ps and -v log hold no secret"
}

secret_free "table=+FILE" file=plain.img table=+table.txt
exec 7<table.txt
secret_free "table=-FD" file=plain.img table=-7
exec 7<&-
secret_free "key=+FILE" file=plain.img cipher=aes-xts-plain64 key=+key.hex
exec 7<key.hex
secret_free "key=-FD" file=plain.img cipher=aes-xts-plain64 key=-7
exec 7<&-
secret_free "key-file=FILE" file=plain.img cipher=aes-xts-plain64 \
  key-file=key.bin key-size=512
secret_free "passphrase=+FILE (LUKS)" file=luks.img passphrase=+pw.txt
exec 7<pw.txt
secret_free "passphrase=-FD (LUKS)" file=luks.img passphrase=-7
exec 7<&-
secret_free "keyfile=FILE (LUKS)" file=luks.img keyfile=pw.txt
secret_free "passphrase=+FILE (plain, hashed)" file=plain.img type=plain \
  passphrase=+pw.txt

# table=- asks on the terminal: nbdkit gets a pseudo-terminal, and the
# line is typed once the prompt is there (nbdkit flushes earlier input
# when it turns echo off).
rm -f ps.txt size.txt
printf '%s\n' "$table" > typed.txt
timeout 60 "$PY" - "$plugin" > tty.txt <<'PYEOF' || fail "table=-: failed"
import os, pty, sys, time
cmd = ["nbdkit", "-v", "--log=stderr", "-U", "-", sys.argv[1],
       "file=plain.img", "table=-", "--run",
       'ps -ww -eo args > ps.txt; nbdinfo --size "$uri" > size.txt']
pid, fd = pty.fork()
if pid == 0:
    os.dup2(os.open("log.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.execvp(cmd[0], cmd)
seen = b""
while b"password:" not in seen:
    seen += os.read(fd, 1024)
time.sleep(0.2)                 # echo is off once the prompt is out
os.write(fd, open("typed.txt", "rb").read())
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
PYEOF
[ -s size.txt ] || { cat tty.txt log.txt; fail "table=-: nothing served"; }
grep -q 'password:' tty.txt || fail "table=-: no prompt on the terminal"
holds ps.txt && fail "table=-: a secret is in the ps output"
holds log.txt && fail "table=-: a secret is in the -v log"
holds tty.txt && fail "table=-: the typed table was echoed"
echo "ok: table=- (asked at the terminal): no secret in ps, log or echo"

# The control: literal forms do expose the secret, so the checks above
# would have seen one.
serve "literal table=" file=plain.img table="$table"
holds ps.txt || fail "control: the literal table is not in ps (test broken)"
holds log.txt || fail "control: the literal table is not in the -v log"
serve "literal passphrase=" file=luks.img passphrase="$pass"
holds ps.txt || fail "control: the literal passphrase is not in ps"
echo "ok: the literal forms do show the secret in ps and the -v log"
echo PASS
