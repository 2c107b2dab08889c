#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# BitLocker against the real kernel (tests/kernel/kernel.sh,
# docs/kernel-tests.md): copies of images of cryptsetup's test set
# (the quick run: AES-XTS with 4096-byte sectors; the full run,
# DMCRYPT_TEST_FULL=1, also BitLocker To Go with AES-CBC;
# BITLK_KERNEL_CASES="IMAGE..." names others, e.g. also
# bitlk-aes-cbc-elephant-128) are written all over through dmcrypt;
# in one boot, "cryptsetup open --type bitlk" maps each, and
#   A. the kernel's mapping reads what dmcrypt reads (sha256 of the
#      whole mapping, zero segments included);
#   B. dmsetup table --showkeys lists the segments dmcryptctl table
#      --showkeys lists (device field aside), dmsetup status the lines
#      dmcryptctl status lists, dmsetup info the same name, state,
#      number of targets and UUID as dmcryptctl info;
#   C. the guest writes 16 MiB across a metadata area and the volume
#      header's zero segment, and at sector 0, through the kernel;
#      afterwards dmcrypt reads what the kernel read.
# Each case prints PASS or FAIL with its name.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/kernel/kernel.sh"
plugin_built_or_fail
ctl="$topdir/tools/dmcryptctl"
[ -x "$ctl" ] || fail "$ctl is not built: run make first"
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo tar xz
scratch
cd "$tmp" || fail "cd $tmp"
tarball=$topdir/tests/data/testdata/cryptsetup/bitlk-images.tar.xz
[ -f "$tarball" ] || fail "$tarball is missing"
kernel_setup

if full_run; then
  default_cases="bitlk-aes-xts-128-4k bitlk-togo-aes-cbc-128"
  echo "full run: $default_cases"
else
  default_cases="bitlk-aes-xts-128-4k"
  echo "quick run: $default_cases; DMCRYPT_TEST_FULL=1 for" \
       "bitlk-togo-aes-cbc-128 too"
fi
read -r -a cases <<<"${BITLK_KERNEL_CASES:-$default_cases}"
members=()
for c in "${cases[@]}"; do members+=("bitlk-images/$c.img"); done
tar -xJSf "$tarball" --no-same-owner "${members[@]}" \
  || fail "cannot unpack the images"
for c in "${cases[@]}"; do mv "bitlk-images/$c.img" "$c.img"; done
printf %s anaconda > pw
mkdir -p boot/guest
cp pw boot/guest/pw

# serve NAME CMD: CMD against dmcrypt's mapping of NAME's image, with
# the control socket at $tmp/ctl.sock.
serve ()
{
  serve_dmcrypt "$2" file="$1.img" passphrase=+pw name="$1" \
    control="$tmp/ctl.sock"
}

# ---- Before the boot: random data over the whole mapping --------------
echo 'set -u' > guest.sh
drives=() i=0
for c in "${cases[@]}"; do
  size=$(stat -c %s "$c.img")
  random_file "$c.a" "$size"
  random_file "boot/guest/$c.b" $((16 * 1048576))
  serve "$c" 'nbdcopy "'"$c.a"'" "$uri" &&
    nbdcopy "$uri" - | sha256sum | cut -d" " -f1 > "'"$c.host-a"'" &&
    '"'$ctl'"' table --showkeys "'"$tmp/ctl.sock"'" > "'"$c.host-table"'" &&
    '"'$ctl'"' status "'"$tmp/ctl.sock"'" > "'"$c.host-status"'" &&
    '"'$ctl'"' info "'"$tmp/ctl.sock"'" > "'"$c.host-info"'"' \
    2> "$c.err" || fail "$c: dmcrypt: $(head -n 1 "$c.err")"
  dev=/dev/vd$(printf "\\x$(printf %x $((97 + i)))")
  drives+=("$tmp/$c.img")
  i=$((i + 1))
  # Sector 0 and 28 MiB on: the first and second metadata areas and the
  # volume header of these images lie between 33 and 45 MiB.
  cat >> guest.sh <<G
echo "$c: begin"
if cryptsetup open --type bitlk --disable-keyring --key-file /guest/pw $dev $c; then
  echo "$c: sha-a \$(sha256sum < /dev/mapper/$c | cut -d' ' -f1)"
  dmsetup table --showkeys $c | sed 's/^/$c: table /'
  dmsetup status $c | sed 's/^/$c: status /'
  dmsetup info $c | sed 's/^/$c: info /'
  dd if=/guest/$c.b of=/dev/mapper/$c bs=1M seek=28 oflag=direct conv=fsync status=none \
    && dd if=/guest/$c.b of=/dev/mapper/$c bs=4096 count=3 oflag=direct conv=fsync status=none \
    || echo "$c: error dd"
  echo "$c: sha-b \$(sha256sum < /dev/mapper/$c | cut -d' ' -f1)"
  cryptsetup close $c || echo "$c: error close"
else
  echo "$c: error open"
fi
echo "$c: end"
G
done

# ---- The boot ---------------------------------------------------------
echo "booting $kver with ${#drives[@]} BitLocker images"
kernel_boot_cases boot guest.sh "${drives[@]}"

# ---- After the boot ---------------------------------------------------
nfail=0
for c in "${cases[@]}"; do
  g () { sed -n "s/^$c: $1 \{0,1\}//p" guest.out; }
  why=
  [ -n "$(g error)" ] && why="the guest's $(g error | head -n 1) failed"
  grep -qx "$c: end" guest.out || why=${why:-"the guest did not reach the end"}
  [ -n "$why" ] || [ "$(g sha-a)" = "$(cat "$c.host-a")" ] \
    || why="A: the kernel reads $(g sha-a), dmcrypt $(cat "$c.host-a")"
  [ -n "$why" ] || [ "$(g table | kernel_mask_device)" = "$(kernel_mask_device < "$c.host-table")" ] \
    || why="table: kernel '$(g table | kernel_mask_device | tr '\n' ';')', dmcryptctl '$(kernel_mask_device < "$c.host-table" | tr '\n' ';')'"
  [ -n "$why" ] || [ "$(g status)" = "$(cat "$c.host-status")" ] \
    || why="status: kernel '$(g status | tr '\n' ';')', dmcryptctl '$(tr '\n' ';' < "$c.host-status")'"
  [ -n "$why" ] || [ "$(g info | kernel_info_fields)" = "$(kernel_info_fields < "$c.host-info")" ] \
    || why="info: kernel '$(g info | kernel_info_fields | tr '\n' ';')', dmcryptctl '$(kernel_info_fields < "$c.host-info" | tr '\n' ';')'"
  if [ -z "$why" ]; then
    back=$(serve "$c" 'nbdcopy "$uri" - | sha256sum | cut -d" " -f1' \
             2> "$c.err") || why="dmcrypt: $(head -n 1 "$c.err")"
    [ -n "$why" ] || [ "$back" = "$(g sha-b)" ] \
      || why="C: dmcrypt reads $back, the kernel wrote $(g sha-b)"
  fi
  kernel_verdict "$c" "$why"
done
if [ $nfail -ne 0 ]; then
  echo "the guest's output:"
  sed 's/^/    /' guest.out
  exit 1
fi
