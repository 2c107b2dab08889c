#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The read-only flip with a file system, through nbdfuse: a LUKS2 volume
# opened with readonly=true cannot be formatted; after "table --showkeys
# | reload" + "resume" a new mount can make ext4 and write a file; after
# "reload --readonly" + "resume" writing through the mount that was
# opened read-write fails and leaves the image as it was, while a new
# read-only mount still reads the file back and e2fsck finds it clean.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdfuse mkfs.ext4 debugfs e2fsck cryptsetup
[ -r /dev/fuse ] && [ -w /dev/fuse ] \
  || skip "/dev/fuse is not usable by $(id -un) (nbdfuse needs FUSE)"
fusermount=$(command -v fusermount3 || command -v fusermount) \
  || skip "fusermount is not installed"
source "$srcdir/control-functions.sh"
mnt="$tmp/mnt"
mkdir "$mnt"

# mount_volume: nbdfuse on $mnt for volume fs (a new NBD connection).
mount_volume ()
{
  local i
  nbdfuse "$mnt" "$(uri_of fs)" 2>> "$tmp/fuse.log" &
  fuse_pid=$!
  for (( i = 0; i < 100; i++ )); do
    [ -e "$mnt/nbd" ] && return 0
    kill -0 $fuse_pid 2>/dev/null || break
    sleep 0.1
  done
  return 1
}
umount_volume ()
{
  local i
  "$fusermount" -u "$mnt" 2>/dev/null || { sleep 1; "$fusermount" -u "$mnt"; }
  for (( i = 0; i < 100; i++ )); do
    kill -0 $fuse_pid 2>/dev/null || break
    sleep 0.1
  done
  kill $fuse_pid 2>/dev/null
  wait $fuse_pid 2>/dev/null
  return 0
}

printf %s 'fs-pw' > "$tmp/pw"
truncate -s 64M "$tmp/fs.img"
luks_format luks2 "$tmp/fs.img" fs-pw
# The default minimum block size (1) takes mke2fs's writes, smaller than
# the 4096-byte sectors.
start_volume fs file="$tmp/fs.img" passphrase=+"$tmp/pw" readonly=true \
  || fail "start"
if ! mount_volume; then
  kill $fuse_pid 2>/dev/null
  skip "nbdfuse cannot mount here (FUSE not usable)"
fi
cleanup_fn "'$fusermount' -u '$mnt' 2>/dev/null"
sum=$(sha256_of "$tmp/fs.img")
mkfs.ext4 -q -F "$mnt/nbd" > "$tmp/mkfs.log" 2>&1 \
  && fail "mkfs.ext4 succeeded on a read-only volume"
[ "$(sha256_of "$tmp/fs.img")" = "$sum" ] || fail "the image changed"
umount_volume
echo "ok: read-only: mkfs.ext4 fails, the image is unchanged"

ctl table --showkeys fs | ctl reload fs && ctl resume fs || fail "flip"
mount_volume || fail "mount after the flip"
mkfs.ext4 -q -F -E nodiscard "$mnt/nbd" || fail "mkfs.ext4 after the flip"
head -c 300001 /dev/urandom > "$tmp/file"
debugfs -w -R "write $tmp/file file" "$mnt/nbd" > "$tmp/debugfs.log" 2>&1 \
  || fail "debugfs write"
echo "ok: read-write: ext4 made, a file written"

# Read-only again: the mount opened read-write is refused now.
ctl table --showkeys fs | ctl reload --readonly fs && ctl resume fs \
  || fail "flip back"
sync
sum=$(sha256_of "$tmp/fs.img")
head -c 5000 /dev/urandom > "$tmp/file2"
debugfs -w -R "write $tmp/file2 file2" "$mnt/nbd" > "$tmp/debugfs2.log" 2>&1
cat "$tmp/debugfs2.log"
grep -q 'Operation not permitted' "$tmp/debugfs2.log" \
  || fail "debugfs was not refused with EPERM"
umount_volume
[ "$(sha256_of "$tmp/fs.img")" = "$sum" ] \
  || fail "a write reached the image after the read-only flip"
mount_volume || fail "read-only mount"
e2fsck -fn "$mnt/nbd" > "$tmp/fsck.log" 2>&1 \
  || { cat "$tmp/fsck.log"; fail "e2fsck"; }
debugfs -R "cat file" "$mnt/nbd" 2>/dev/null > "$tmp/file.back"
cmp "$tmp/file" "$tmp/file.back" || fail "the file does not read back"
debugfs -R "stat file2" "$mnt/nbd" 2>&1 | grep -q 'File not found' \
  || fail "file2 exists"
umount_volume
echo "ok: read-only again: writes refused, the file system intact"
