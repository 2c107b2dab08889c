#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An ext4 file system made on the export through nbdfuse and filled with
# debugfs; the server is restarted, then e2fsck -fn must be clean, every
# file must read back with the same checksum, and the whole plaintext must
# equal the same file system made the same way on an ordinary file
# that started from the same bytes (mke2fs and debugfs are made
# deterministic with a fixed UUID, hash seed and E2FSPROGS_FAKE_TIME; no
# discards, so blocks they never write keep their old bytes on both).
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdfuse mkfs.ext4 debugfs e2fsck cryptsetup timeout
plugin_built_or_fail
[ -r /dev/fuse ] && [ -w /dev/fuse ] \
  || skip "/dev/fuse is not usable by $(id -un) (nbdfuse needs FUSE)"
fusermount=$(command -v fusermount3 || command -v fusermount) \
  || skip "fusermount is not installed"
scratch
mnt="$tmp/mnt"
mkdir "$mnt"

# with_fuse NAME CMD nbdkit-args...: mount the export on $mnt (as the file
# $mnt/nbd), run CMD, unmount.  Returns CMD's status, 100 when nothing
# could be mounted.  nbdfuse's messages go to $tmp/NAME.fuse.log.
with_fuse ()
{
  local name=$1 cmd=$2 i rc fuse_pid; shift 2
  nbdfuse "$mnt" --command nbdkit -s "$@" 2>"$tmp/$name.fuse.log" &
  fuse_pid=$!
  if ! fuse_wait_ready $fuse_pid "$mnt/nbd"; then
    kill $fuse_pid 2>/dev/null; wait $fuse_pid
    return 100
  fi
  timeout 120 bash -c "$cmd"; rc=$?
  "$fusermount" -u "$mnt" || { sleep 1; "$fusermount" -u "$mnt"; }
  # nbdfuse exits once unmounted; its nbdkit exits when it disconnects.
  for (( i = 0; i < 100; i++ )); do
    kill -0 $fuse_pid 2>/dev/null || break
    sleep 0.1
  done
  kill -0 $fuse_pid 2>/dev/null && { kill $fuse_pid; rc=101; }
  wait $fuse_pid
  return $rc
}

# Fails when a log holds a complaint.
clean_log ()  # clean_log FILE WHAT
{
  if grep -Ei 'error|invalid|unaligned|could not|wrong|fix\?|corrupt' "$1"
  then
    fail "$2 complained (above)"
  fi
}

# FUSE may be present but not work here (a container): find out with a
# plugin that is not ours, so that our failures are not taken for skips.
with_fuse probe "test -s '$mnt/nbd'" memory 1M
[ $? -eq 100 ] && skip "nbdfuse cannot mount here (FUSE not usable)"

printf %s "ext4-pw" > "$tmp/pw"
truncate -s 64M "$tmp/luks2.img"
# 4096-byte encryption sectors (LUKS2's default), served with the default
# parameters.  nbdfuse refuses any write smaller than the advertised
# minimum block size, and a file system writes its superblock in pieces
# of a few bytes: the default minimum (1) lets the plugin's
# read-modify-write take them, as the kernel's page cache does above
# /dev/mapper.
luks_format luks2 "$tmp/luks2.img" ext4-pw --sector-size 4096
serve=("$plugin" file="$tmp/luks2.img" passphrase=+"$tmp/pw")

# Files to put in: sizes that end inside an encryption sector, and more.
mkdir "$tmp/files" "$tmp/out"
head -c 1 /dev/urandom > "$tmp/files/one-byte"
head -c 4097 /dev/urandom > "$tmp/files/page-plus-one"
head -c 300001 /dev/urandom > "$tmp/files/odd-size"
head -c 3M /dev/urandom > "$tmp/files/three-mib"
seq 1 200000 > "$tmp/files/numbers.txt"
{
  echo "mkdir dir"
  for f in "$tmp"/files/*; do
    b=$(basename "$f")
    echo "write $f $b"
    echo "write $f dir/copy-of-$b"
  done
} > "$tmp/write.cmds"
{
  for f in "$tmp"/files/*; do
    b=$(basename "$f")
    echo "dump $b $tmp/out/$b"
    echo "dump dir/copy-of-$b $tmp/out/copy-of-$b"
  done
} > "$tmp/dump.cmds"

# make_fs FILE LOG: the same file system, byte for byte, wherever it is.
export E2FSPROGS_FAKE_TIME=1700000000
uuid=0b3e7c1a-4f5d-4c2b-9a6e-2d1f3c4b5a69
cat > "$tmp/make-fs.sh" <<EOF
set -e
mkfs.ext4 -q -F -U $uuid \
  -E hash_seed=$uuid,nodiscard,lazy_itable_init=0,lazy_journal_init=0 \
  "\$1" >"\$2" 2>&1
debugfs -w -f '$tmp/write.cmds' "\$1" >>"\$2" 2>&1
sync "\$1"
EOF

# The control starts as a copy of the export's fresh plaintext (garbage: the
# fresh LUKS data area was never written).
with_fuse make "cp '$mnt/nbd' '$tmp/control' &&
                bash '$tmp/make-fs.sh' '$mnt/nbd' '$tmp/make.log'" \
  "${serve[@]}"
rc=$?
cat "$tmp/make.log" "$tmp/make.fuse.log"
[ $rc -eq 0 ] || fail "mkfs.ext4/debugfs through nbdfuse failed ($rc)"
clean_log "$tmp/make.log" "mkfs.ext4/debugfs"
clean_log "$tmp/make.fuse.log" "nbdfuse"
echo "ok: ext4 made and filled through nbdfuse"

# The server is restarted: a new nbdkit, read-only this time.
with_fuse check "e2fsck -fn '$mnt/nbd' > '$tmp/fsck.log' 2>&1 &&
                 debugfs -f '$tmp/dump.cmds' '$mnt/nbd' \
                   > '$tmp/dump.log' 2>&1 &&
                 cp '$mnt/nbd' '$tmp/plaintext'" -r "${serve[@]}"
rc=$?
cat "$tmp/fsck.log" "$tmp/check.fuse.log"
[ $rc -eq 0 ] || fail "e2fsck -fn or debugfs dump failed after restart ($rc)"
clean_log "$tmp/fsck.log" "e2fsck -fn"
clean_log "$tmp/dump.log" "debugfs dump"
echo "ok: e2fsck -fn clean after a restart"

for f in "$tmp"/files/*; do
  b=$(basename "$f")
  [ "$(sha256_of "$f")" = "$(sha256_of "$tmp/out/$b")" ] \
    || fail "$b differs after a restart"
  [ "$(sha256_of "$f")" = "$(sha256_of "$tmp/out/copy-of-$b")" ] \
    || fail "dir/copy-of-$b differs after a restart"
done
echo "ok: $(ls "$tmp/files" | wc -l) files x 2 read back with equal sha256"

# The same file system on an ordinary file.
bash "$tmp/make-fs.sh" "$tmp/control" "$tmp/control.log" \
  || fail "making the control file system failed"
cmp "$tmp/control" "$tmp/plaintext" \
  || fail "the export's plaintext differs from the same ext4 on a file"
echo "ok: plaintext equals the same ext4 made on an ordinary file"
echo PASS
