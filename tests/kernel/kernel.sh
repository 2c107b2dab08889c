# SPDX-License-Identifier: GPL-2.0-or-later
# The real-kernel harness (docs/kernel-tests.md), sourced after
# functions.sh: Debian's cloud kernel, fetched with apt and unpacked in a
# cache outside the tree, boots in QEMU (KVM when a trial boot works,
# else TCG with -cpu max, which has AES-NI) on a small initramfs made
# here from busybox-static and the host's cryptsetup, integritysetup,
# dmsetup, mkfs.ext4, e2fsck and nbd-client with their libraries.  A guest script runs as
# root; its output and exit status come back over virtio-serial.
#
#   kernel_setup                   fetch, unpack, initramfs, accelerator;
#                                  skips the test with the reason if any
#                                  of them cannot be had
#   kernel_boot DIR SCRIPT [DRIVE...]
#                                  one boot: SCRIPT as /guest/script, the
#                                  files of DIR/guest/ beside it, each
#                                  DRIVE (an image) as /dev/vda, vdb ...;
#                                  the guest's output in DIR/out, the
#                                  kernel's console in DIR/console;
#                                  returns the script's exit status,
#                                  125 if the guest did not finish
#   kernel_guestfwd PORT SOCK ...  a network for the next boots in which
#                                  10.0.2.100:PORT is the host's Unix
#                                  socket SOCK
#
# The array kernel_qemu_args adds QEMU arguments to the next boots (a
# network, say); kernel_drive_opts options to each -drive (",file.locking=off"
# for images a server on the host holds locked while the guest boots).
kernel_qemu_args=()
kernel_drive_opts=

kernel_dir="$srcdir/kernel"

# The cache: DMCRYPT_KERNEL_CACHE, else XDG_CACHE_HOME or ~/.cache when
# writable, else a directory of this user's in TMPDIR ("nobody" has a
# HOME of /nonexistent).
kernel_cache ()
{
  local base
  if [ -n "${DMCRYPT_KERNEL_CACHE:-}" ]; then
    kcache=$DMCRYPT_KERNEL_CACHE
  else
    base=${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}
    if mkdir -p "$base" 2>/dev/null && [ -w "$base" ]; then
      kcache=$base/dmcrypt-kernel
    else
      kcache=${TMPDIR:-/tmp}/dmcrypt-kernel-$(id -u)
    fi
  fi
  mkdir -p -m 0700 "$kcache" 2>/dev/null \
    || skip "cannot make the kernel cache $kcache"
  [ -O "$kcache" ] || skip "the kernel cache $kcache is not $(id -un)'s"
}

# apt's package lists are stale when older than a week: the versioned
# kernel they name may be gone from the mirror.
_kernel_lists_stale ()
{
  local l
  l=$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mtime -7 \
        2>/dev/null | head -n 1)
  [ -z "$l" ]
}

# Sets kpkg (linux-image-6.1.0-NN-cloud-amd64) and kpkgver.
_kernel_resolve ()
{
  kpkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null \
           | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  [ -n "$kpkg" ] || return 1
  kpkgver=$(apt-cache show --no-all-versions "$kpkg" 2>/dev/null \
              | awk '/^Version:/ { print $2; exit }')
  [ -n "$kpkgver" ]
}

# Sets kver, ktree (the unpacked package, depmod run) and kvmlinuz.
kernel_fetch ()
{
  local deb log
  requires_cmd apt-cache apt-get dpkg-deb
  type -P depmod >/dev/null || PATH=$PATH:/usr/sbin:/sbin
  requires_cmd depmod
  if [ "$(id -u)" -eq 0 ] && _kernel_lists_stale; then
    echo "kernel: package lists older than a week: apt-get update"
    apt-get update -qq >/dev/null 2>&1 || echo "kernel: apt-get update failed"
  fi
  _kernel_resolve || skip "apt knows no linux-image-cloud-amd64"
  ktree=$kcache/$kpkg-$kpkgver
  if [ ! -e "$ktree/.done" ]; then
    ( flock 9
      [ -e "$ktree/.done" ] && exit 0
      deb=$kcache/${kpkg}_${kpkgver}_amd64.deb
      if [ ! -s "$deb" ]; then
        log=$kcache/download.log
        rm -rf "$kcache/dl"; mkdir "$kcache/dl"
        if ! (cd "$kcache/dl" && apt-get download "$kpkg=$kpkgver") \
               >"$log" 2>&1; then
          if [ "$(id -u)" -eq 0 ]; then
            apt-get update -qq >/dev/null 2>&1
            (cd "$kcache/dl" && apt-get download "$kpkg=$kpkgver") \
              >"$log" 2>&1 || exit 3
          elif _kernel_lists_stale; then
            exit 4
          else
            exit 3
          fi
        fi
        mv "$kcache"/dl/*.deb "$deb" || exit 3
        rm -rf "$kcache/dl"
        # Older kernels' trees and packages go.
        find "$kcache" -maxdepth 1 -name 'linux-image-*' \
          ! -name "$kpkg-$kpkgver" ! -name "${deb##*/}" \
          -exec rm -rf {} + 2>/dev/null
      fi
      rm -rf "$ktree.new"
      dpkg-deb -x "$deb" "$ktree.new" || exit 5
      depmod -b "$ktree.new" "$(ls "$ktree.new/lib/modules")" || exit 5
      touch "$ktree.new/.done"
      mv "$ktree.new" "$ktree"
    ) 9>"$kcache/lock"
    case $? in
      0) ;;
      3) skip "apt-get download $kpkg failed: $(grep -m1 '^E:' \
                 "$kcache/download.log")" ;;
      4) skip "apt-get download $kpkg failed, the package lists are" \
              "older than a week (as root: apt-get update): $(grep -m1 \
              '^E:' "$kcache/download.log")" ;;
      *) fail "cannot unpack $kpkg" ;;
    esac
  fi
  kver=$(ls "$ktree/lib/modules")
  kvmlinuz=$ktree/boot/vmlinuz-$kver
  [ -r "$kvmlinuz" ] || fail "no $kvmlinuz in $kpkg"
}

# The host programs the guest gets, with busybox for everything else.
# GNU timeout: busybox's rounds fractions of a second up to whole ones.
kernel_programs=(cryptsetup dmsetup mkfs.ext4 e2fsck nbd-client kmod
                 blockdev integritysetup timeout)
# The modules the guest may load (with what they depend on): all of the
# crypto API, so that the kernel finds any cipher a table names.
kernel_module_dirs=(kernel/crypto kernel/arch/x86/crypto kernel/lib)
kernel_modules=(dm-mod dm-crypt dm-zero dm-integrity nbd virtio_pci
                virtio_blk virtio_console virtio_net)

# Files of the initramfs: "SOURCE DEST" lines on stdout.
_kernel_initramfs_files ()
{
  local p path lib mdir m
  for p in "${kernel_programs[@]}"; do
    path=$(PATH=$PATH:/usr/sbin:/sbin type -P "$p") || continue
    echo "$path /bin/$p"
    ldd "$path" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
  done | sort -u | while read -r path dest; do
    if [ -n "$dest" ]; then echo "$path $dest"
    else lib=$(readlink -f "$path"); echo "$lib $path"; fi
  done
  mdir=$ktree/lib/modules/$kver
  {
    for m in "${kernel_module_dirs[@]}"; do
      (cd "$mdir" && find "$m" -name '*.ko')
    done
    for m in "${kernel_modules[@]}"; do
      awk -v m="$m" '{ n = $1; sub(/:$/, "", n); b = n; sub(/.*\//, "", b);
                       sub(/\.ko.*/, "", b); gsub(/_/, "-", b);
                       t = m; gsub(/_/, "-", t) }
                     b == t { print n; for (i = 2; i <= NF; i++) print $i }' \
        "$mdir/modules.dep"
    done
  } | sort -u | while read -r m; do
    echo "$mdir/$m /lib/modules/$kver/$m"
  done
  echo "/bin/busybox /bin/busybox"
}

# Sets kinitrd: the cached initramfs (newc, gzip), rebuilt when the
# kernel, a host file it holds or this harness changes.  Checkouts of
# other versions may share the cache: others' initramfs files go only
# when unused for a day.
kernel_initramfs ()
{
  local files key stage src dest
  requires_cmd cpio gzip ldd
  [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 \
    || skip "busybox-static is not installed"
  files=$(_kernel_initramfs_files) || fail "initramfs file list"
  key=$( { echo "$kver"; cat "$kernel_dir/init" "$kernel_dir/kernel.sh";
           awk '{ print $1 }' <<<"$files" | xargs stat -L -c '%n %s %Y'; } \
         | sha256sum | cut -c1-16)
  kinitrd=$kcache/initramfs-$kver-$key.cpio.gz
  if [ -s "$kinitrd" ]; then
    touch "$kinitrd"
    return 0
  fi
  stage=$(mktemp -d "$kcache/stage.XXXXXX")
  cleanup_fn "rm -rf '$stage'"
  while read -r src dest; do
    mkdir -p "$stage${dest%/*}"
    cp -L "$src" "$stage$dest" || fail "initramfs: cp $src"
  done <<<"$files"
  cp "$kernel_dir/init" "$stage/init"; chmod 0755 "$stage/init"
  cp "$ktree/lib/modules/$kver"/modules.{order,builtin,builtin.modinfo} \
    "$stage/lib/modules/$kver/"
  depmod -b "$stage" "$kver" || fail "initramfs: depmod"
  for p in $(/bin/busybox --list); do
    [ -e "$stage/bin/$p" ] || ln -s busybox "$stage/bin/$p"
  done
  for p in modprobe insmod lsmod rmmod depmod modinfo; do
    ln -sf kmod "$stage/bin/$p"
  done
  ln -s bin "$stage/sbin"; mkdir -p "$stage/usr"
  ln -s ../bin "$stage/usr/bin"; ln -s ../bin "$stage/usr/sbin"
  [ -e "$stage/lib64" ] || ln -s lib "$stage/lib64"
  mkdir -p "$stage"/{proc,sys,dev,guest,etc}
  (cd "$stage" && find . -path ./initramfs -prune -o -print \
     | cpio -o -H newc --quiet | gzip -1) > "$stage/initramfs" \
    || fail "initramfs: cpio"
  mv "$stage/initramfs" "$kinitrd"
  rm -rf "$stage"
  find "$kcache" -maxdepth 1 -name 'initramfs-*.cpio.gz' \
    ! -name "${kinitrd##*/}" -mtime +0 -delete
}

# QEMU's command without drives, ports or initrd, into kqemu (an array).
_kernel_qemu_base ()
{
  kqemu=(qemu-system-x86_64 -nodefaults -no-user-config -display none
         -no-reboot -m 1024 -smp 1 "$@" -kernel "$kvmlinuz"
         -append "console=ttyS0 panic=-1 quiet loglevel=4")
}

# A QEMU user network without any route out (restrict=on) whose TCP
# connections to 10.0.2.100:PORT reach the Unix socket SOCK on the host;
# the guest's eth0 is 10.0.2.15.
kernel_guestfwd ()  # kernel_guestfwd PORT SOCK [PORT SOCK ...]
{
  local fwd=""
  requires_cmd socat
  while [ $# -ge 2 ]; do
    fwd+=",guestfwd=tcp:10.0.2.100:$1-cmd:socat STDIO UNIX-CONNECT:${2//,/,,}"
    shift 2
  done
  kernel_qemu_args+=(-netdev "user,id=net0,restrict=on$fwd"
                     -device virtio-net-pci,netdev=net0)
}

# Sets kaccel: "-accel kvm -cpu host" when a trial boot under KVM runs a
# script, else "-accel tcg -cpu max".  A failing KVM guest may hang
# silently, so the trial has 20 s, and its verdict is kept in the cache
# for this host kernel, QEMU and guest kernel.
kernel_accel ()
{
  local d key verdict=tcg
  kaccel=(-accel tcg -cpu max)
  if [ -n "${KERNEL_ACCEL:-}" ]; then
    read -r -a kaccel <<<"$KERNEL_ACCEL"
    return 0
  fi
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 0
  key="$(uname -r) $(stat -L -c '%s %Y' "$(type -P qemu-system-x86_64)") $kver"
  if [ -s "$kcache/kvm" ] && [ "$(sed -n 1p "$kcache/kvm")" = "$key" ]; then
    verdict=$(sed -n 2p "$kcache/kvm")
  else
    d=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-kvm.XXXXXX")
    echo 'echo kvm works' > "$d/script"
    kaccel=(-accel kvm -cpu host)
    if KERNEL_BOOT_TIMEOUT=20 kernel_boot "$d" "$d/script" >/dev/null 2>&1 \
       && grep -qx 'kvm works' "$d/out"; then
      verdict=kvm
    fi
    rm -rf "$d"
    printf '%s\n%s\n' "$key" "$verdict" > "$kcache/kvm"
  fi
  if [ "$verdict" = kvm ]; then
    kaccel=(-accel kvm -cpu host)
  else
    echo "kernel: a KVM guest does not run here: TCG"
    kaccel=(-accel tcg -cpu max)
  fi
}

# The scratch directory, or KEEP=DIR (emptied first) when the images
# and the boots' files are to be kept, with dmcrypt's registry in it;
# then cd there.
kernel_scratch ()
{
  if [ -n "${KEEP:-}" ]; then
    tmp=$(realpath -m "$KEEP"); rm -rf "$tmp"; mkdir -p "$tmp"
    export DMCRYPT_RUNTIME_DIR=$tmp/registry
    mkdir -m 0700 "$DMCRYPT_RUNTIME_DIR"
  else
    scratch
  fi
  cd "$tmp" || fail "cd $tmp"
}

kernel_setup ()
{
  requires_cmd qemu-system-x86_64
  kernel_cache
  kernel_fetch
  kernel_initramfs
  kernel_accel
  report "kernel $kver ($kpkg $kpkgver), ${kaccel[*]}"
}

# Runs kqemu for at most SECONDS; stops it early when KVM failed (QEMU
# then stays paused).
_kernel_run_qemu ()  # _kernel_run_qemu DIR SECONDS
{
  local d=$1 pid i
  "${kqemu[@]}" </dev/null >"$d/qemu.log" 2>&1 &
  pid=$!
  for (( i = 0; i < $2 * 5; i++ )); do
    kill -0 "$pid" 2>/dev/null || break
    if grep -q "KVM internal error\|failed to set MSR" "$d/qemu.log" \
         2>/dev/null; then
      break
    fi
    sleep 0.2
  done
  kill "$pid" 2>/dev/null
  wait "$pid"
}

kernel_boot ()  # kernel_boot DIR SCRIPT [DRIVE...]
{
  local d=$1 script=$2 img i=0 rc extra
  shift 2
  mkdir -p "$d/guest"
  cp "$script" "$d/guest/script"
  extra=$d/boot.cpio
  # Each archive compressed: the kernel takes no plain one after these.
  (cd "$d" && find guest | cpio -o -H newc --quiet | gzip -1) > "$extra" \
    || fail "guest cpio"
  cat "$kinitrd" "$extra" > "$d/initrd"
  : > "$d/out"; : > "$d/status"
  _kernel_qemu_base "${kaccel[@]}"
  kqemu+=(-initrd "$d/initrd" -serial "file:$d/console"
          -device virtio-serial-pci
          -chardev "file,id=out,path=$d/out"
          -device virtserialport,chardev=out,name=dmcrypt.out
          -chardev "file,id=status,path=$d/status"
          -device virtserialport,chardev=status,name=dmcrypt.status)
  # Drives sit behind PCI bridges of 31 slots each: the root bus has too
  # few free slots for a batch of cases.  The guest names them /dev/vda,
  # vdb … in the order given.
  for img; do
    if (( i % 31 == 0 )); then
      kqemu+=(-device "pci-bridge,id=kbr$((i / 31)),chassis_nr=$((i / 31 + 1))")
    fi
    kqemu+=(-drive "file=$img,format=raw,if=none,id=kd$i,cache=writeback$kernel_drive_opts"
            -device "virtio-blk-pci,drive=kd$i,bus=kbr$((i / 31)),addr=$(printf 0x%x $((i % 31 + 1)))")
    i=$((i + 1))
  done
  kqemu+=("${kernel_qemu_args[@]}")
  _kernel_run_qemu "$d" "${KERNEL_BOOT_TIMEOUT:-600}"
  rc=$?
  rm -f "$d/initrd" "$extra"
  if ! grep -q '^exit [0-9]*$' "$d/status"; then
    echo "kernel: the guest did not finish (qemu exit $rc); console:" >&2
    tail -n 30 "$d/console" "$d/qemu.log" | sed 's/^/    /' >&2
    return 125
  fi
  rc=$(awk '{ print $2; exit }' "$d/status")
  return "$rc"
}

# Boots as kernel_boot does, for a script of cases: a guest that did
# not finish fails the test, its script's exit status is only said,
# and its output is left in guest.out.
kernel_boot_cases ()  # kernel_boot_cases DIR SCRIPT [DRIVE...]
{
  local rc
  kernel_boot "$@"
  rc=$?
  [ $rc -eq 125 ] && fail "the guest did not finish"
  [ $rc -eq 0 ] || echo "the guest script exited $rc"
  cp "$1/out" guest.out
}

# One case's verdict as a REPORT line: PASS when WHY is empty, else
# FAIL with WHY, counted in npass and nfail.
kernel_verdict ()  # kernel_verdict NAME WHY
{
  if [ -z "$2" ]; then
    report "PASS: kernel $kver: $1"
    npass=$(( ${npass:-0} + 1 ))
  else
    report "FAIL: kernel $kver: $1: $2"
    nfail=$(( ${nfail:-0} + 1 ))
  fi
}

# dmsetup table lines on stdin with the crypt lines' device field masked
# (254:16 in the guest, the image's path on the host).
kernel_mask_device () { awk '$3 == "crypt" { $7 = "DEV" } { print }'; }
# The dmsetup info lines both sides must share: Open count and Major,
# minor are each device's own.
kernel_info_fields ()
{
  grep -E '^(Name|State|Read Ahead|Tables present|Number of targets|UUID):'
}
