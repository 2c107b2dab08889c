#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The user's registry of running volumes (control/registry.h).  A volume
# whose socket is at control=PATH and one started under another
# XDG_RUNTIME_DIR are both listed by dmcryptctl ls and answer by name;
# names are unique across all of them (a default name moves to NAME-2,
# a given one is refused, naming the other's socket wherever it is);
# --control and DMCRYPT_CONTROL reach a volume by its socket; the image
# holder lookup (control/holder.h) names the volume and pid serving an
# image; a SIGKILLed volume leaves ls without a word and its entry is
# swept; stopped volumes leave nothing behind.
source "$(dirname "$0")/functions.sh"
source "$srcdir/control-functions.sh"

holder=("$topdir/tests/unit/test-registry" holder)
[ -x "${holder[0]}" ] || fail "${holder[0]} is not built: run make first"

key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
table="0 32768 crypt aes-cbc-essiv:sha256 $key 0 x 0"
for v in pathvol xdgvol spare; do truncate -s 16M "$tmp/$v.img"; done
mkdir -m 0700 "$tmp/elsewhere" "$tmp/run2"
start_volume pathvol file="$tmp/pathvol.img" table="$table" \
  control="$tmp/elsewhere/p.sock" || fail "start pathvol"
# As after su, sudo, ssh, or in another CI job: another runtime dir.
XDG_RUNTIME_DIR="$tmp/run2" start_volume @xdgvol file="$tmp/xdgvol.img" \
  table="$table" || fail "start xdgvol"

[ "$(stat -c %a "$registry")" = 700 ] || fail "registry mode"
[ -S "$tmp/run2/dmcrypt/xdgvol.sock" ] || fail "xdgvol's socket not in run2"
[ "$(readlink "$registry/xdgvol.sock")" = "$tmp/run2/dmcrypt/xdgvol.sock" ] \
  || fail "xdgvol's registry entry"
[ "$(readlink "$registry/pathvol.sock")" = "$tmp/elsewhere/p.sock" ] \
  || fail "pathvol's registry entry"
[ -e "$sockdir" ] && fail "a socket in our own default directory"

ctl ls > "$tmp/ls" 2> "$tmp/ls.err" || fail "ls failed"
cat "$tmp/ls" "$tmp/ls.err"
[ "$(cut -f1 "$tmp/ls" | tr '\n' ' ')" = "pathvol xdgvol " ] \
  || fail "ls: wrong names"
grep -qx "xdgvol	(0:0)	plain	ACTIVE	$tmp/xdgvol.img" "$tmp/ls" \
  || fail "ls: wrong line for xdgvol"
[ -s "$tmp/ls.err" ] && fail "ls printed errors"
[ "$(info_field pathvol Name:)" = pathvol ] || fail "info pathvol"
[ "$(info_field xdgvol Name:)" = xdgvol ] || fail "info xdgvol"
[ "$(ctl status xdgvol)" = "0 32768 crypt " ] || fail "status xdgvol"
[ "$(ctl info | grep -c '^Name:')" = 2 ] || fail "info of all volumes"
[ "$(ctl table | cut -d: -f1 | tr '\n' ' ')" = "pathvol xdgvol " ] \
  || fail "table of all volumes"
echo "ok: volumes at control=PATH and under another XDG_RUNTIME_DIR listed"

# info's new fields do not change what dmcryptctl prints.
ctl info pathvol > "$tmp/info"
[ "$(grep -c . "$tmp/info")" = 8 ] && ! grep -qi image "$tmp/info" \
  || { cat "$tmp/info"; fail "info prints more than dmsetup's fields"; }
echo "ok: info output unchanged"

# --control and DMCRYPT_CONTROL: one volume, by its socket.
[ "$(ctl --control "$tmp/elsewhere/p.sock" info | sed -n 's/^Name: *//p')" \
    = pathvol ] || fail "--control info"
[ "$(cd "$tmp/elsewhere" && ctl --control p.sock status)" = "0 32768 crypt " ] \
  || fail "--control with a relative path"
[ "$(DMCRYPT_CONTROL="$tmp/run2/dmcrypt/xdgvol.sock" ctl table | cut -d' ' -f7)" \
    = "$tmp/xdgvol.img" ] || fail "DMCRYPT_CONTROL table"
[ "$(DMCRYPT_CONTROL="$tmp/elsewhere/p.sock" ctl ls | cut -f1)" = pathvol ] \
  || fail "DMCRYPT_CONTROL ls"
ctl --control "$tmp/elsewhere/p.sock" suspend || fail "--control suspend"
[ "$(info_field pathvol State:)" = SUSPENDED ] || fail "not suspended"
DMCRYPT_CONTROL="$tmp/elsewhere/p.sock" ctl resume || fail "resume"
[ "$(info_field pathvol State:)" = ACTIVE ] || fail "not resumed"
ctl --control "$tmp/elsewhere/p.sock" info pathvol > "$tmp/out" 2> "$tmp/err" \
  && fail "--control with a NAME too was accepted"
grep -q "give no NAME" "$tmp/err" || fail "--control with NAME: message"
expect_fail "--control of a missing socket" \
  ctl --control "$tmp/elsewhere/none.sock" status
echo "ok: --control and DMCRYPT_CONTROL address one volume"

# The holder of an image, by its identity.
"$PY" - "$registry/pathvol.sock" > "$tmp/raw" <<'PYEOF' || fail "raw info"
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
s.sendall(b"op info\n\n")
out = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    out += chunk
sys.stdout.write(out.decode())
PYEOF
grep -qx "image_dev $(stat -c %d "$tmp/pathvol.img")" "$tmp/raw" \
  && grep -qx "image_ino $(stat -c %i "$tmp/pathvol.img")" "$tmp/raw" \
  && grep -qx "image_rdev 0" "$tmp/raw" \
  || { cat "$tmp/raw"; fail "info: the image's identity"; }
[ "$("${holder[@]}" "$tmp/pathvol.img")" = "pathvol $(cat "$tmp/pathvol.pid")" ] \
  || fail "holder of pathvol.img"
ln -s xdgvol.img "$tmp/alias.img"
[ "$("${holder[@]}" "$tmp/alias.img")" = "xdgvol $(cat "$tmp/xdgvol.pid")" ] \
  || fail "holder of xdgvol.img through a symlink"
[ "$("${holder[@]}" "$tmp/spare.img")" = none ] \
  || fail "a holder for an image nobody serves"
echo "ok: the holder lookup names the volume and its pid"

# Names are unique across the registry, wherever the sockets are (an
# image of the same name elsewhere: xdgvol.img itself has its writer).
mkdir "$tmp/again"
truncate -s 16M "$tmp/again/xdgvol.img"
nbdkit -U "$tmp/dup.nbd" "$plugin" file="$tmp/again/xdgvol.img" table="$table" \
  --run "'$ctl_bin' ls" > "$tmp/ls2" 2>&1 || fail "default-named start"
cat "$tmp/ls2"
grep -q "^xdgvol-2	" "$tmp/ls2" || fail "no xdgvol-2"
if nbdkit -U "$tmp/dup.nbd" "$plugin" file="$tmp/spare.img" name=pathvol \
     table="$table" --run true 2> "$tmp/dup.log"; then
  fail "a second instance took the name pathvol"
fi
cat "$tmp/dup.log"
grep -q "name 'pathvol' is in use by another dmcrypt instance \
($tmp/elsewhere/p.sock)" "$tmp/dup.log" || fail "no 'in use' error for pathvol"
if nbdkit -U "$tmp/dup.nbd" "$plugin" file="$tmp/spare.img" name=xdgvol \
     control="$tmp/other.sock" table="$table" --run true 2> "$tmp/dup.log"
then
  fail "a second instance took the name xdgvol"
fi
grep -q "name 'xdgvol' is in use by another dmcrypt instance \
($tmp/run2/dmcrypt/xdgvol.sock)" "$tmp/dup.log" \
  || fail "no 'in use' error for xdgvol"
[ -e "$tmp/other.sock" ] && fail "a refused instance left its socket"
echo "ok: names unique across the registry"

# SIGKILL: gone from ls without a word, the entry swept.
stop_volume xdgvol KILL
[ -L "$registry/xdgvol.sock" ] || fail "SIGKILL removed the entry (test broken)"
[ "$("${holder[@]}" "$tmp/spare.img")" = none ] || fail "holder past a stale entry"
ctl ls > "$tmp/ls" 2> "$tmp/ls.err" || fail "ls failed after SIGKILL"
cat "$tmp/ls" "$tmp/ls.err"
[ "$(cut -f1 "$tmp/ls")" = pathvol ] || fail "ls after SIGKILL: wrong names"
[ -s "$tmp/ls.err" ] && fail "ls printed errors about the stale entry"
[ -L "$registry/xdgvol.sock" ] && fail "the stale entry was not swept"
expect_fail "info of the killed volume" ctl info xdgvol
grep -qx 'Device does not exist.' "$tmp/err" || fail "info xdgvol: message"
start_volume xdgvol file="$tmp/xdgvol.img" table="$table" \
  || fail "cannot reuse the name of a killed instance"
[ "$(info_field xdgvol State:)" = ACTIVE ] || fail "new xdgvol"
echo "ok: a killed volume is skipped, its entry swept, its name free"

for v in pathvol xdgvol; do stop_volume $v; done
[ "$(ctl ls)" = "No devices found" ] || fail "ls after all stopped"
[ -z "$(ls "$registry")" ] || fail "entries left behind: $(ls "$registry")"
[ -e "$tmp/elsewhere/p.sock" ] && fail "pathvol's socket left behind"
[ -z "$(ls "$sockdir")" ] || fail "sockets left behind: $(ls "$sockdir")"
echo "ok: stopped volumes remove their sockets and entries"
