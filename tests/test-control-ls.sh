#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dmcryptctl ls with several instances running, one of them then killed
# with SIGKILL: its stale socket is skipped without a word, the others
# are still listed, a new instance may take the dead one's name, and a
# live instance's name may not be taken twice.  A dead or missing
# control socket given by its path is named as such.
source "$(dirname "$0")/functions.sh"
source "$srcdir/control-functions.sh"

key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
table="0 32768 crypt aes-cbc-essiv:sha256 $key 0 x 0"
for v in alpha beta gamma; do
  truncate -s 16M "$tmp/$v.img"
  start_volume $v file="$tmp/$v.img" table="$table" || fail "start $v"
done
# No name=: the image's file name without its extension.
truncate -s 16M "$tmp/disk-one.img"
start_volume @disk-one file="$tmp/disk-one.img" table="$table" \
  readonly=true || fail "start disk-one"

ctl ls > "$tmp/ls" 2> "$tmp/ls.err" || fail "ls failed"
cat "$tmp/ls"
[ "$(cut -f1 "$tmp/ls" | tr '\n' ' ')" = "alpha beta disk-one gamma " ] \
  || fail "ls: wrong names"
grep -qx "disk-one	(0:0)	plain	ACTIVE (READ-ONLY)	$tmp/disk-one.img" \
  "$tmp/ls" || fail "ls: wrong line for disk-one"
grep -qx "beta	(0:0)	plain	ACTIVE	$tmp/beta.img" "$tmp/ls" \
  || fail "ls: wrong line for beta"
[ -s "$tmp/ls.err" ] && fail "ls printed errors"
echo "ok: ls lists four volumes"

stop_volume beta KILL
[ -S "$sockdir/beta.sock" ] || fail "SIGKILL removed the socket (test broken)"
ctl ls > "$tmp/ls" 2> "$tmp/ls.err" || fail "ls failed after SIGKILL"
cat "$tmp/ls" "$tmp/ls.err"
[ "$(cut -f1 "$tmp/ls" | tr '\n' ' ')" = "alpha disk-one gamma " ] \
  || fail "ls after SIGKILL: wrong names"
[ -s "$tmp/ls.err" ] && fail "ls printed errors about the stale socket"
[ "$(ctl info | grep -c '^Name:')" = 3 ] || fail "info of all volumes"
[ "$(ctl table | cut -d: -f1 | tr '\n' ' ')" = "alpha disk-one gamma " ] \
  || fail "table of all volumes"
expect_fail "info of the killed volume" ctl info beta
grep -qx 'Device does not exist.' "$tmp/err" || fail "info beta: message"
expect_fail "status of the killed volume" ctl status beta
grep -qx "device-mapper: status ioctl on beta  failed: No such device \
or address" "$tmp/err" || fail "status beta: message"
echo "ok: the killed instance is gone from ls, its stale socket ignored"

# Reached by its socket's path, a volume that is not there is named by
# that path: dmsetup has no words for a socket.
expect_fail "info through the killed volume's socket" \
  ctl --control "$sockdir/beta.sock" info
[ "$(cat "$tmp/err")" = "dmcryptctl: $sockdir/beta.sock: nothing listens \
on this control socket
Command failed." ] || fail "info --control of a stale socket: message"
expect_fail "info through a missing socket" \
  ctl --control "$tmp/missing.sock" info
[ "$(cat "$tmp/err")" = "dmcryptctl: $tmp/missing.sock: no such control \
socket
Command failed." ] || fail "info --control of a missing socket: message"
DMCRYPT_CONTROL=$tmp/missing.sock expect_fail "table through a missing \
socket" ctl table
[ "$(cat "$tmp/err")" = "dmcryptctl: $tmp/missing.sock: no such control \
socket
Command failed." ] || fail "DMCRYPT_CONTROL of a missing socket: message"
echo "ok: a missing or dead control socket is named"

# The stale socket does not keep its name from a new instance.
start_volume beta file="$tmp/beta.img" table="$table" \
  || fail "cannot reuse the name of a killed instance"
[ "$(info_field beta State:)" = ACTIVE ] || fail "new beta"
# A live name cannot be taken twice (for another image: one image has
# one writer) ...
truncate -s 16M "$tmp/dup.img"
if nbdkit -U "$tmp/dup.nbd" "$plugin" file="$tmp/dup.img" name=beta \
     table="$table" --run true 2> "$tmp/dup.log"; then
  fail "a second instance took the live name beta"
fi
grep -q "name 'beta' is in use" "$tmp/dup.log" || fail "no 'in use' error"
# ... but a default name moves aside (a second reader of disk-one).
nbdkit -U "$tmp/dup2.nbd" "$plugin" file="$tmp/disk-one.img" \
  table="$table" readonly=true --run "'$ctl_bin' ls" > "$tmp/ls2" 2>&1 \
  || fail "a second instance of disk-one did not start"
cat "$tmp/ls2"
grep -q "^disk-one-2	" "$tmp/ls2" || fail "no disk-one-2"
echo "ok: names: stale ones reused, live ones refused, defaults moved"

for v in alpha beta gamma disk-one; do stop_volume $v; done
[ "$(ctl ls)" = "No devices found" ] || fail "ls after all stopped"
[ -z "$(ls "$sockdir")" ] || fail "sockets left behind: $(ls "$sockdir")"
[ -z "$(ls "$registry")" ] || fail "entries left behind: $(ls "$registry")"
echo "ok: stopped instances remove their sockets and registry entries"
