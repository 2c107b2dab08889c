#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dmcryptctl's output compared field by field with the real dmsetup
# transcripts in ../shared/reference/kernel-dmsetup/: the same volumes
# (the same tables; LUKS images made with the transcripts' luksFormat
# commands on images of the same size) must print the same info, info
# -c, table, table --showkeys, status and ls.  Only what cannot be the
# same differs, and is checked for what it must be instead: the device
# field (the image's path, not the guest's 254:0), Major/minor (0, 0: no
# kernel device), the keys and UUIDs of our own LUKS images.
source "$(dirname "$0")/functions.sh"
requires_shared reference/kernel-dmsetup/readonly-flip.txt
requires_cmd cryptsetup
source "$srcdir/control-functions.sh"
ref="$shared/reference/kernel-dmsetup"

# output FILE 'COMMAND' [N]: what the Nth (default: last) "$ COMMAND" of
# a transcript printed.
output ()
{
  awk -v cmd="\$ $2" -v want="${3:-0}" '
    $0 == cmd { n++; grab = 1; buf = ""; next }
    /^\$ / || /^# / { if (grab) last[n] = buf; grab = 0; next }
    grab { buf = buf $0 "\n" }
    END { if (grab) last[n] = buf; printf "%s", last[want ? want : n] }
  ' "$1"
}

# same_fields WHAT WANT GOT [SKIP...]: the lines of WANT and GOT split
# into fields must be equal but for the (1-based) fields in SKIP.
same_fields ()
{
  local what=$1 want=$2 got=$3; shift 3
  "$PY" - "$want" "$got" "$@" <<'EOF' || fail "$what"
import sys
want, got, skip = sys.argv[1], sys.argv[2], {int(i) for i in sys.argv[3:]}
w, g = want.split("\n"), got.split("\n")
if len(w) != len(g):
    sys.exit("%d lines, expected %d:\n%s" % (len(g), len(w), got))
for wl, gl in zip(w, g):
    wf, gf = wl.split(" "), gl.split(" ")
    if len(wf) != len(gf) or any(a != b for i, (a, b)
                                 in enumerate(zip(wf, gf), 1)
                                 if i not in skip):
        sys.exit("got      %r\nexpected %r" % (gl, wl))
EOF
}

# check_plain FILE NAME: NAME was made with "dmsetup create [--readonly]
# NAME --table T" in FILE; serve the same table and compare.
check_plain ()
{
  local f=$1 name=$2 create table ro=false dev want got
  create=$(grep -m1 "^\$ dmsetup create .*\b$name --table" "$ref/$f" \
           || grep -m1 "^\$ dmsetup create --readonly $name " "$ref/$f")
  table=$(echo "$create" | sed -n "s/.*--table '\(.*\)'$/\1/p")
  [ -n "$table" ] || fail "$f: no table for $name"
  case $create in *--readonly*) ro=true ;; esac
  truncate -s 16M "$tmp/$name.img"
  start_volume "$name" file="$tmp/$name.img" table="$table" readonly=$ro \
    || fail "$f: $name: cannot start"
  dev=$(realpath "$tmp/$name.img")

  # table and table --showkeys: every field but the device (7th).
  for opt in "" --showkeys; do
    want=$(output "$ref/$f" "dmsetup table $opt${opt:+ }$name" 1)
    [ -n "$want" ] || continue
    got=$(ctl table $opt "$name")
    same_fields "$f: table $opt $name" "$want" "$got" 7
    [ "$(echo "$got" | cut -d' ' -f7)" = "$dev" ] \
      || fail "$f: table $opt $name: device field is not $dev"
    echo "ok: $f: table $opt $name"
  done

  # status: byte for byte, trailing space included.
  want=$(output "$ref/$f" "dmsetup status $name")
  if [ -n "$want" ]; then
    [ "$(ctl status "$name")" = "$want" ] \
      || fail "$f: status $name: '$(ctl status "$name")' != '$want'"
    echo "ok: $f: status $name"
  fi

  # info: every line the same but "Major, minor:".
  want=$(output "$ref/$f" "dmsetup info $name" 1)
  if [ -n "$want" ]; then
    diff -u <(output "$ref/$f" "dmsetup info $name" 1 \
                | grep -v '^Major, minor:') \
      <(ctl info "$name" | grep -v '^Major, minor:') \
      || fail "$f: info $name"
    [ "$(info_field "$name" 'Major, minor:')" = "0, 0" ] \
      || fail "$f: info $name: Major, minor"
    echo "ok: $f: info $name"
  fi

  # info -c: the same heading, the same row but Maj and Min.
  want=$(output "$ref/$f" "dmsetup info -c $name")
  if [ -n "$want" ]; then
    got=$(ctl info -c "$name")
    [ "$(echo "$got" | head -1)" = "$(echo "$want" | head -1)" ] \
      || fail "$f: info -c heading"
    same_fields "$f: info -c $name" \
      "$(echo "$want" | tail -1 | sed 's/ 253   0 / MAJ MIN /')" \
      "$(echo "$got" | tail -1 | sed 's/   0   0 / MAJ MIN /')"
    echo "ok: $f: info -c $name"
  fi

  # ls: dmsetup's "name<TAB>(major:minor)" first.
  want=$(output "$ref/$f" "dmsetup ls" 1)
  if [ -n "$want" ] && [ "$want" != "No devices found" ]; then
    ctl ls | grep -q "^$name	(0:0)	plain	" || fail "$f: ls"
    echo "ok: $f: ls"
  fi
  stop_volume "$name"
}

check_plain plain-cbc-essiv.txt p1
check_plain readonly-flip.txt ro1
for n in p2 p3 p4 p5 p8 p10 p6 p7 e1; do
  check_plain plain-optional-args.txt $n
done

# "info -c --noheadings -o name,blkdevname,major,minor" has a field we
# lack (no block device); the same layout without it:
truncate -s 16M "$tmp/p2.img"
start_volume p2 file="$tmp/p2.img" table="0 32768 crypt aes-cbc-essiv:sha256 \
000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 0 x 0"
[ "$(ctl info -c --noheadings -o name,major,minor p2)" = "p2:0:0" ] \
  || fail "info -c --noheadings"
stop_volume p2
echo "ok: info -c --noheadings -o"

# The refused tables of plain-optional-args.txt: dmsetup's failure lines.
truncate -s 16M "$tmp/e.img"
start_volume e0 file="$tmp/e.img" \
  table="$(output "$ref/plain-optional-args.txt" \
             'dmsetup table --showkeys p4' | sed 's,254:0,/dev/null,')"
for e in e2 e3 e4 e5 e6 e7; do
  table=$(grep -m1 "^\$ dmsetup create $e --table" \
            "$ref/plain-optional-args.txt" | sed "s/.*--table '\(.*\)'$/\1/")
  expect_fail "reload $e" ctl reload e0 "${table//\/dev\/vda/$tmp/e.img}"
  grep -qx "device-mapper: reload ioctl on e0  failed: Invalid argument" \
    "$tmp/err" || fail "reload $e: no dmsetup failure line"
  [ "$(info_field e0 'Tables present:')" = LIVE ] \
    || fail "reload $e: an inactive table was loaded"
done
echo "ok: the kernel's refused tables are refused"
expect_fail "table of a missing volume" ctl table --showkeys e7
grep -qx "device-mapper: table ioctl on e7  failed: No such device or \
address" "$tmp/err" || fail "missing volume: not dmsetup's line"
expect_fail "info of a missing volume" ctl info e7
grep -qx 'Device does not exist.' "$tmp/err" || fail "info e7"
stop_volume e0
[ "$(ctl ls)" = "No devices found" ] || fail "ls of nothing"
echo "ok: missing volumes, empty ls"

# LUKS: images made with the transcripts' own luksFormat commands, of
# the size that gives the transcripts' lengths (64 MiB).
for f in luks1-xts-512 luks2-xts-512 luks2-xts-4096; do
  args=$(sed -n '1s/.*cryptsetup luksFormat \(.*\) IMAGE$/\1/p' "$ref/$f.txt")
  [ -n "$args" ] || fail "$f: no luksFormat command"
  truncate -s 64M "$tmp/$f.img"
  # shellcheck disable=SC2086
  printf %s vm-test-passphrase | cryptsetup luksFormat $args "$tmp/$f.img" \
    >/dev/null || fail "$f: luksFormat"
  printf %s vm-test-passphrase > "$tmp/$f.pw"
  start_volume x file="$tmp/$f.img" passphrase=+"$tmp/$f.pw" \
    || fail "$f: cannot start"
  key=$(luks_volume_key "$tmp/$f.img" vm-test-passphrase)
  # The --disable-keyring table: same fields but key (5) and device (7).
  want=$(output "$ref/$f.txt" "dmsetup table --showkeys x")
  got=$(ctl table --showkeys x)
  same_fields "$f: table --showkeys" "$want" "$got" 5 7
  [ "$(echo "$got" | cut -d' ' -f5)" = "$key" ] || fail "$f: key"
  same_fields "$f: table" "$(output "$ref/$f.txt" "dmsetup table x")" \
    "$(ctl table x)" 7
  [ "$(ctl status x)" = "$(output "$ref/$f.txt" 'dmsetup status x')" ] \
    || fail "$f: status"
  uuid=$(cryptsetup luksUUID "$tmp/$f.img" | tr -d -- -)
  diff -u <(output "$ref/$f.txt" 'dmsetup info x' \
              | sed -e '/^Major, minor:/d' -e 's/^UUID: .*/UUID:/') \
    <(ctl info x | sed -e '/^Major, minor:/d' -e 's/^UUID: .*/UUID:/') \
    || fail "$f: info"
  [ "$(info_field x UUID:)" = "$(output "$ref/$f.txt" 'dmsetup info x' \
        | sed -n 's/^UUID: CRYPT-\(LUKS.\)-.*/CRYPT-\1/p')-$uuid-x" ] \
    || fail "$f: UUID"
  stop_volume x
  echo "ok: $f: table, table --showkeys, status, info"
done
