#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The recipes of docs/clients.md, each client with the DEFAULT parameters,
# against a LUKS2 image with 4096-byte encryption sectors and a LUKS1
# image (512-byte sectors): nbdfuse + mkfs.ext4 + fuse2fs (where FUSE
# mounts), nbdcopy in and out, nbdsh and qemu-io writing single bytes
# inside a sector, qemu-img convert and compare, fio's nbd engine with
# crc32c verification of 512-byte random writes, 16 in flight.  What
# each client wrote is checked in the image itself, decrypted by the
# independent oracle (tests/oracle.py).  The recipes the page names as
# not run here (nbd-client: no nbd kernel module) are listed with the
# reason; a recipe of the page that this test neither runs nor lists
# fails it.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdinfo nbdcopy cryptsetup qemu-img qemu-io timeout
requires_oracle
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch
doc="$topdir/docs/clients.md"

# The page's recipes: each "## CLIENT..." section is run below by a
# function recipe_CLIENT, or named under "Not run here".
run_recipes="nbdfuse nbdcopy nbdsh qemu-img fio"
not_run="nbd-client qemu guestfish"
while read -r word; do
  case " $run_recipes " in *" $word "*) continue ;; esac
  fail "docs/clients.md has a recipe for $word that this test does not run"
done < <(awk '/^## Not run here/ { exit }
              /^## / { w = $2; sub(/:$/, "", w); print w }' "$doc" \
         | grep -Ev '^(Block|A|Stopping)$')
for word in $not_run; do
  grep -q "^\*\*$word[ ,.*]" "$doc" \
    || fail "docs/clients.md does not say why $word is not run"
done
echo "not run here (docs/clients.md says why): $not_run"

# With the oracle: the plaintext of the volume now, as $tmp/plain.
plain_now ()
{
  oracle decrypt "$img" "$tmp/plain" --luks-key "$key" \
    || fail "$kind: the oracle cannot decrypt the image"
}

# Bytes of a file as hex.
hex_of () { od -An -v -tx1 -j "$2" -N "$3" "$1" | tr -d ' \n'; }  # FILE OFF N

fuse_usable ()
{
  local probe=$tmp/probe pid
  [ -r /dev/fuse ] && [ -w /dev/fuse ] || {
    echo "/dev/fuse is not usable by $(id -un)"; return 1; }
  command -v fusermount3 >/dev/null || { echo "no fusermount3"; return 1; }
  command -v fuse2fs >/dev/null || { echo "no fuse2fs"; return 1; }
  mkdir -p "$probe"
  nbdfuse "$probe" --command nbdkit -s memory 1M 2>/dev/null &
  pid=$!
  if ! fuse_wait_ready $pid "$probe/nbd"; then
    kill $pid 2>/dev/null; wait $pid
    echo "nbdfuse cannot mount here (FUSE not usable by $(id -un))"
    return 1
  fi
  fusermount3 -u "$probe"; wait $pid
}

recipe_nbdfuse ()
{
  local why mnt=$tmp/mnt fs=$tmp/fs fuse_pid f2_pid i
  if ! why=$(fuse_usable); then
    echo "skip: $kind: nbdfuse: $why"
    return 0
  fi
  mkdir -p "$mnt" "$fs"
  nbdfuse "$mnt" --unix "$sock" 2>"$tmp/nbdfuse.log" &
  fuse_pid=$!
  fuse_wait_ready $fuse_pid "$mnt/nbd" || fail "$kind: nbdfuse did not mount"
  # The root directory the user's (root's otherwise), to write into it.
  timeout 120 mkfs.ext4 -q -E root_owner "$mnt/nbd" \
    || fail "$kind: mkfs.ext4 through nbdfuse"
  fuse2fs -f "$mnt/nbd" "$fs" 2>"$tmp/fuse2fs.log" &
  f2_pid=$!
  for (( i = 0; i < 100; i++ )); do
    mountpoint -q "$fs" && break
    kill -0 $f2_pid 2>/dev/null || break
    sleep 0.1
  done
  mountpoint -q "$fs" || fail "$kind: fuse2fs did not mount"
  echo hello > "$fs/hello.txt" || fail "$kind: writing through fuse2fs"
  fusermount3 -u "$fs"
  wait $f2_pid || fail "$kind: fuse2fs failed"
  timeout 60 e2fsck -fn "$mnt/nbd" >"$tmp/fsck.log" 2>&1 \
    || { cat "$tmp/fsck.log"; fail "$kind: e2fsck -fn through nbdfuse"; }
  fusermount3 -u "$mnt"
  wait $fuse_pid || fail "$kind: nbdfuse failed"
  cat "$tmp/nbdfuse.log"
  ! grep -i 'unaligned\|invalid' "$tmp/nbdfuse.log" \
    || fail "$kind: nbdfuse complained"
  # The file system as the oracle decrypts it, with no dmcrypt between.
  plain_now
  e2fsck -fn "$tmp/plain" >"$tmp/fsck.log" 2>&1 || {
    cat "$tmp/fsck.log"; fail "$kind: e2fsck -fn of the oracle's plaintext"; }
  expect_equal "hello.txt in the oracle's plaintext" hello \
    "$(debugfs -R 'cat hello.txt' "$tmp/plain" 2>/dev/null)"
  echo "ok: $kind: nbdfuse: mkfs.ext4, fuse2fs, e2fsck -fn clean, also" \
       "on the oracle's plaintext"
}

recipe_nbdcopy ()
{
  random_file "$tmp/data.bin" $(( 8 << 20 ))
  nbdcopy "$tmp/data.bin" "$uri" || fail "$kind: nbdcopy in"
  nbdcopy "$uri" "$tmp/out.bin" || fail "$kind: nbdcopy out"
  cmp -n 8M "$tmp/data.bin" "$tmp/out.bin" || fail "$kind: nbdcopy out differs"
  plain_now
  cmp -n 8M "$tmp/data.bin" "$tmp/plain" \
    || fail "$kind: the oracle's plaintext differs from what nbdcopy wrote"
  echo "ok: $kind: nbdcopy in and out, the oracle agrees"
}

# One byte with nbdsh, three with qemu-io, inside sectors: the bytes
# around them keep what nbdcopy wrote.
recipe_nbdsh ()
{
  "$PY" -m nbd -u "$uri" -c '
h.pwrite(b"!", 4097)
old = open("'"$tmp/data.bin"'", "rb").read(8192)
assert h.pread(8192, 0) == old[:4097] + b"!" + old[4098:]
h.pwrite(b"?", 5000001)
assert h.pread(1, 5000001) == b"?"
' || fail "$kind: nbdsh"
  plain_now
  expect_equal "byte 4097" 21 "$(hex_of "$tmp/plain" 4097 1)"
  expect_equal "byte 5000001" 3f "$(hex_of "$tmp/plain" 5000001 1)"
  cmp -n 4097 "$tmp/data.bin" "$tmp/plain" || fail "$kind: nbdsh: before 4097"
  cmp -i 4098 -n $(( 5000001 - 4098 )) "$tmp/data.bin" "$tmp/plain" \
    || fail "$kind: nbdsh: bytes between"
  echo "ok: $kind: nbdsh 1-byte pwrite/pread, the oracle agrees"
}

recipe_qemu_img ()
{
  random_file "$tmp/q.bin" $(( 4 << 20 ))
  qemu-img info "$uri" >/dev/null || fail "$kind: qemu-img info"
  qemu-img convert -n -f raw -O raw "$tmp/q.bin" "$uri" \
    || fail "$kind: qemu-img convert in"
  rm -f "$tmp/copy.img"
  qemu-img convert -f raw -O raw "$uri" "$tmp/copy.img" \
    || fail "$kind: qemu-img convert out"
  qemu-img compare -f raw -F raw "$tmp/copy.img" "$uri" \
    || fail "$kind: qemu-img compare"
  cmp -n 4M "$tmp/q.bin" "$tmp/copy.img" || fail "$kind: qemu-img round trip"
  qemu-io -f raw -c 'write -P 0x5a 4097 3' -c 'read -P 0x5a 4097 3' \
    "$uri" >/dev/null || fail "$kind: qemu-io"
  plain_now
  cmp -n 4097 "$tmp/q.bin" "$tmp/plain" || fail "$kind: qemu: before 4097"
  expect_equal "bytes 4097-4099" 5a5a5a "$(hex_of "$tmp/plain" 4097 3)"
  cmp -i 4100 "$tmp/copy.img" "$tmp/plain" \
    || fail "$kind: the oracle's plaintext differs from qemu-img's copy"
  echo "ok: $kind: qemu-img convert and compare, qemu-io 3 bytes," \
       "the oracle agrees"
}

# 512-byte random writes, 16 in flight: read-modify-writes of the same
# encryption sector at once, none of them lost (crc32c of every block).
recipe_fio ()
{
  if ! fio --enghelp=nbd >/dev/null 2>&1; then
    echo "skip: $kind: fio: no nbd engine in this fio"
    return 0
  fi
  (cd "$tmp" && timeout 300 fio --name=verify --ioengine=nbd --uri="$uri" \
     --rw=randwrite --bs=512 --size=4M --iodepth=16 --verify=crc32c \
     --verify_fatal=1 --randseed=$RANDOM > "$tmp/fio.log" 2>&1) \
    || { cat "$tmp/fio.log"; fail "$kind: fio verify"; }
  grep -q 'err= 0' "$tmp/fio.log" || { cat "$tmp/fio.log"; fail "$kind: fio"; }
  nbdcopy "$uri" "$tmp/out.bin" || fail "$kind: nbdcopy out"
  plain_now
  cmp "$tmp/out.bin" "$tmp/plain" \
    || fail "$kind: the oracle's plaintext differs from the export after fio"
  echo "ok: $kind: fio --ioengine=nbd, 512-byte writes verified," \
       "the oracle agrees"
}

# clients KIND IMAGE: every recipe against one volume, served with the
# default parameters on a socket, as the page does.
clients ()
{
  kind=$1 img=$2
  key=$(luks_volume_key "$img" clients-pw) || fail "$kind: volume key"
  sock=$tmp/$kind.sock
  uri="nbd+unix:///?socket=$sock"
  echo "== $kind"
  nbdkit -U "$sock" -P "$tmp/$kind.pid" "$plugin" file="$img" \
    passphrase=+"$tmp/pw" || fail "$kind: the server did not start"
  cleanup_fn "[ -f '$tmp/$kind.pid' ] && kill \$(cat '$tmp/$kind.pid')"
  nbdinfo --json "$uri" | "$PY" -c '
import json, sys
e = json.load(sys.stdin)["exports"][0]
print("block sizes: minimum %d, preferred %d"
      % (e["block_size_minimum"], e["block_size_preferred"]))'
  for word in $run_recipes; do
    "recipe_${word//-/_}"
  done
  kill "$(cat "$tmp/$kind.pid")" && rm "$tmp/$kind.pid"
}

printf %s clients-pw > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" clients-pw --sector-size 4096
truncate -s 32M "$tmp/luks1.img"
luks_format luks1 "$tmp/luks1.img" clients-pw
clients luks2-4096 "$tmp/luks2.img"
clients luks1-512 "$tmp/luks1.img"
echo PASS
