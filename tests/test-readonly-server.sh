#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbdkit -r says so: the image (and a detached header) is open O_RDONLY
# in the server, dmcryptctl info shows ACTIVE (READ-ONLY), a read-write
# reload is refused with dmsetup's lines and changes nothing, and every
# connection is read-only.  Without -r the same volume is open O_RDWR
# (the control, so that the check above can fail).
source "$(dirname "$0")/functions.sh"
requires_cmd cryptsetup nbdinfo
source "$srcdir/control-functions.sh"

# access_mode PID FILE: "ro" or "rw", how process PID has FILE open.
access_mode ()
{
  local fd target flags
  target=$(realpath "$2")
  for fd in /proc/"$1"/fd/*; do
    [ "$(readlink "$fd")" = "$target" ] || continue
    flags=$(awk '/^flags:/ { print $2 }' "/proc/$1/fdinfo/${fd##*/}")
    case $(( 8#$flags & 3 )) in 0) echo ro ;; *) echo rw ;; esac
    return 0
  done
  echo none
}

printf %s ro-pw > "$tmp/pw"
truncate -s 16M "$tmp/data.img"
truncate -s 4M "$tmp/hdr.img"
luks_format luks2 "$tmp/data.img" ro-pw --header "$tmp/hdr.img" \
  || fail "luksFormat"
V=(file="$tmp/data.img" header="$tmp/hdr.img" passphrase=+"$tmp/pw")

# Control: a writable server has both files open for writing.
start_volume rw "${V[@]}" || fail "start rw"
pid=$(cat "$tmp/rw.pid")
[ "$(access_mode "$pid" "$tmp/data.img")" = rw ] \
  || fail "control: the writable server has no O_RDWR image"
stop_volume rw

rm -f "$tmp/ro.pid"
nbdkit -r --log=stderr -U "$tmp/ro.nbd" -P "$tmp/ro.pid" "$plugin" \
  name=ro "${V[@]}" 2>>"$tmp/ro.log" || fail "start with -r"
for (( i = 0; i < 100; i++ )); do [ -s "$tmp/ro.pid" ] && break; sleep 0.1; done
cleanup_fn "stop_volume ro"
pid=$(cat "$tmp/ro.pid")
for f in data.img hdr.img; do
  [ "$(access_mode "$pid" "$tmp/$f")" = ro ] \
    || fail "-r: $f is open $(access_mode "$pid" "$tmp/$f"), not read-only"
done
echo "ok: -r opens the image and the header read-only"

[ "$(info_field ro State:)" = "ACTIVE (READ-ONLY)" ] \
  || fail "-r: info does not say READ-ONLY"
ctl ls | grep -q "^ro	.*ACTIVE (READ-ONLY)" || fail "-r: ls"
echo "ok: info and ls say READ-ONLY"

refused_rw_reload ro 'Permission denied' 'nbdkit runs with -r'
ctl reload --readonly ro "$tmp/ro.table" || fail "a --readonly reload under -r"
ctl resume ro || fail "resume of the read-only table"
[ "$(info_field ro State:)" = "ACTIVE (READ-ONLY)" ] || fail "after resume"
echo "ok: read-write reloads refused under -r, read-only ones work"

[ "$(nbdio "$(uri_of ro)" ro)" = 1 ] || fail "-r: a connection is writable"
sum=$(sha256_of "$tmp/data.img")
got=$(nbdio "$(uri_of ro)" write 0 "$tmp/pw")
case $got in EPERM|EROFS) ;; *) fail "-r: a write gave '$got'" ;; esac
[ "$(sha256_of "$tmp/data.img")" = "$sum" ] || fail "-r: the image changed"
echo "ok: connections are read-only and the image is unchanged"
echo PASS
