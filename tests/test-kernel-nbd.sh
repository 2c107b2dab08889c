#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's NBD client against dmcrypt (tests/kernel/kernel.sh,
# docs/kernel-tests.md).  Two LUKS2 images are served by the plugin with
# allow-discards on Unix sockets, which the guest reaches through QEMU's
# user network (restrict=on, guestfwd: no real network).  One boot, in
# two parts.  First the NBD client: in the guest, nbd-client connects to
# one with 4 connections, to the other with one; on each, mkfs.ext4,
# mount, files copied and written with fsync, a file removed and fstrim,
# unmount, e2fsck -fn, disconnect.  Then the kernel's dm-crypt opens
# both images, which the guest has as virtio drives besides (untouched
# until then; QEMU takes no lock on them, as the servers hold theirs):
# e2fsck -fn is clean and every file is identical.  On the host, nbdkit's
# stats filter shows the trims and flushes that reached dmcrypt, and
# e2fsck -fn of the plaintext read through dmcrypt is clean too.  The
# quick run and the full run are the same: one boot covers it all.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/kernel/kernel.sh"
plugin_built_or_fail
requires_cmd cryptsetup nbdkit nbdcopy e2fsck
scratch
cd "$tmp" || fail "cd $tmp"
kernel_setup

pw=kernel-test-passphrase
printf %s "$pw" > pw
mkdir -p boot/guest
cp pw boot/guest/pw
random_file boot/guest/f1 1048576
random_file boot/guest/f2 100000
random_file boot/guest/f3 5000
random_file boot/guest/big 4194304
# multi: LUKS2 as cryptsetup makes it on a file, 4096-byte sectors, so
# that the kernel's mapping has 4096-byte logical blocks and the file
# system must have blocks as large; single: 512-byte sectors, and the
# file system mkfs.ext4 picks for 48 MiB (1024-byte blocks).
names=(multi single)
truncate -s 64M multi.img single.img
luks_format luks2 multi.img "$pw" --sector-size 4096 \
  || fail "luksFormat multi"
luks_format luks2 single.img "$pw" --sector-size 512 \
  || fail "luksFormat single"

# The servers: one per image, in the background on a Unix socket.
pids=()
for n in "${names[@]}"; do
  nbdkit -f -U "$tmp/$n.sock" --filter=stats "$plugin" file="$n.img" \
    passphrase=+pw allow-discards=true statsfile="$tmp/$n.stats" \
    </dev/null >"$n.log" 2>&1 &
  pids+=($!)
  cleanup_fn "kill $! 2>/dev/null"
done
for n in "${names[@]}"; do
  for (( i = 0; i < 300; i++ )); do
    [ -S "$n.sock" ] && break
    sleep 0.1
  done
  [ -S "$n.sock" ] || fail "nbdkit did not start for $n: $(cat "$n.log")"
done
kernel_guestfwd 10809 "$tmp/multi.sock" 10810 "$tmp/single.sock"

# ---- The boot: the kernel's NBD client, then its dm-crypt --------------
cat > guest.sh <<'G'
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
fs ()  # fs NAME DEV PORT MKFS-OPTIONS NBD-CLIENT-OPTIONS...
{
  name=$1 dev=$2 port=$3 mkfs=$4; shift 4
  echo "$name: begin"
  nbd-client 10.0.2.100 "$port" "$dev" "$@" || return 1
  echo "$name: logical block size $(blockdev --getss "$dev")"
  mkfs.ext4 -q -F $mkfs "$dev" || return 1
  mkdir -p "/mnt/$name"
  mount -t ext4 "$dev" "/mnt/$name" || return 1
  cp /guest/f1 /guest/f2 /guest/f3 "/mnt/$name/" || return 1
  mkdir "/mnt/$name/dir"
  dd if=/guest/f1 of="/mnt/$name/dir/direct" bs=65536 oflag=direct \
    conv=fsync status=none || return 1
  dd if=/guest/big of="/mnt/$name/dir/gone" bs=65536 conv=fsync \
    status=none || return 1
  sync
  rm "/mnt/$name/dir/gone"
  sync
  echo "$name: fstrim $(fstrim -v "/mnt/$name")"
  (cd "/mnt/$name" && sha256sum f1 f2 f3 dir/direct) | sed "s/^/$name: sum /"
  umount "/mnt/$name" || return 1
  e2fsck -fn "$dev" > /tmp/fsck.out 2>&1
  echo "$name: e2fsck $?"
  sed "s/^/$name: fsck: /" /tmp/fsck.out
  nbd-client -d "$dev" || return 1
  echo "$name: end"
}
fs multi /dev/nbd0 10809 "-b 4096" -C 4 || echo "multi: error"
fs single /dev/nbd1 10810 "" || echo "single: error"
check ()  # check NAME DEV: lines of "dm-NAME: "
{
  echo "dm-$1: begin"
  cryptsetup open --key-file /guest/pw "$2" "$1" || return 1
  e2fsck -fn "/dev/mapper/$1" > /tmp/fsck.out 2>&1
  echo "dm-$1: e2fsck $?"
  sed "s/^/dm-$1: fsck: /" /tmp/fsck.out
  mkdir -p "/mnt/dm-$1"
  mount -t ext4 -o ro "/dev/mapper/$1" "/mnt/dm-$1" || return 1
  (cd "/mnt/dm-$1" && sha256sum f1 f2 f3 dir/direct) | sed "s/^/dm-$1: sum /"
  ls "/mnt/dm-$1/dir" | sed "s/^/dm-$1: dir /"
  umount "/mnt/dm-$1"
  cryptsetup close "$1" || return 1
  echo "dm-$1: end"
}
check multi /dev/vda || echo "dm-multi: error"
check single /dev/vdb || echo "dm-single: error"
G
echo "quick and full run alike: one boot, the kernel's NBD client, then its dm-crypt"
kernel_drive_opts=,file.locking=off
kernel_boot boot guest.sh multi.img single.img
rc=$?
sed 's/^/  guest | /' boot/out
[ $rc -eq 0 ] || fail "the guest script exited $rc"
for p in "${pids[@]}"; do kill "$p"; wait "$p"; done

# ---- The verdicts ------------------------------------------------------
(cd boot/guest && sha256sum f1 f2 f3) > want
sed 's/ f1$/ dir\/direct/;t;d' want >> want
nfail=0
for n in "${names[@]}"; do
  why=
  g1 () { sed -n "s/^$n: $1 \{0,1\}//p" boot/out; }
  g2 () { sed -n "s/^dm-$n: $1 \{0,1\}//p" boot/out; }
  grep -qx "$n: end" boot/out || why="the NBD part did not finish"
  if [ -z "$why" ]; then
    [ "$(g1 'logical block size')" = 512 ] \
      || why="logical block size $(g1 'logical block size'), not 512"
  fi
  [ -z "$why" ] && [ "$(g1 e2fsck)" != 0 ] \
    && why="e2fsck -fn through NBD: exit $(g1 e2fsck)"
  [ -z "$why" ] && [ "$(g1 sum)" != "$(cat want)" ] \
    && why="files read back through NBD differ"
  if [ -z "$why" ]; then
    trimmed=$(g1 fstrim | awk '{ print $2 }' | tr -d '()')
    [ "${trimmed:-0}" -gt 0 ] 2>/dev/null \
      || why="fstrim trimmed nothing: $(g1 fstrim)"
  fi
  [ -z "$why" ] && ! grep -qx "dm-$n: end" boot/out \
    && why="the dm-crypt part did not finish"
  [ -z "$why" ] && [ "$(g2 e2fsck)" != 0 ] \
    && why="e2fsck -fn on the kernel's dm-crypt: exit $(g2 e2fsck)"
  [ -z "$why" ] && [ "$(g2 sum)" != "$(cat want)" ] \
    && why="files read through the kernel's dm-crypt differ"
  [ -z "$why" ] && [ "$(g2 dir)" != direct ] \
    && why="dir holds $(g2 dir | tr '\n' ' ')"
  if [ -z "$why" ]; then
    for op in trim flush; do
      grep -qE "^ *$op: [1-9]" "$n.stats" \
        || why="no $op reached dmcrypt: $(tr '\n' ' ' < "$n.stats")"
    done
  fi
  if [ -z "$why" ]; then
    serve_dmcrypt 'nbdcopy "$uri" plain.img' file="$n.img" passphrase=+pw \
      || why="nbdcopy through dmcrypt failed"
  fi
  if [ -z "$why" ]; then
    e2fsck -fn plain.img > fsck.out 2>&1 \
      || why="e2fsck -fn of dmcrypt's plaintext: $(tail -n 3 fsck.out)"
    rm -f plain.img
  fi
  kernel_verdict "nbd-client $n" "$why"
done
echo "requests that reached the servers (nbdkit's stats filter):"
grep -hE '^ *[a-z]+: [0-9]+ ops' multi.stats single.stats | sed 's/^ */  /'
[ $nfail -eq 0 ]
