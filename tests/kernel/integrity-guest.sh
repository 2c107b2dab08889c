# SPDX-License-Identifier: GPL-2.0-or-later
# Guest-side helpers for dm-integrity and dm-crypt's authenticated modes,
# sourced by a guest script (busybox sh) that the host put beside it in
# DIR/guest/ before kernel_boot (tests/kernel/kernel.sh):
#
#   . /guest/integrity-guest.sh
#   integrity_read DEV [OUT]
#       reads the whole mapped device DEV as the kernel serves it, in
#       O_DIRECT reads of its logical sector size, and prints
#         size BYTES
#         sector_size BYTES            (blockdev --getss)
#         bad OFFSET LENGTH            a run of bytes that failed to read
#                                      (one line a run, none when clean)
#         sha256 HEX                   of the device, failed runs as zeros
#         dmesg LINE                   each new kernel line of integrity,
#                                      crypt or I/O errors
#       and leaves the bytes in OUT (default /tmp/integrity-read.bin).
#       A clean device is read in one pass; one that fails is read again
#       in 1 MiB pieces, each piece that fails in 64 KiB ones, then 4 KiB,
#       then sector by sector.
#   integrity_facts PREFIX NAME...
#       "PREFIX table NAME LINE" and "PREFIX status NAME LINE" of each
#       device-mapper device NAME (dmsetup table without --showkeys).
#
# Opening is the caller's (cryptsetup open, integritysetup open, dmsetup
# create), as is closing.

integrity_read ()
{
  local dev=$1 out=${2:-/tmp/integrity-read.bin} ss size n0 steps
  local bad_start=-1 bad_end=-1
  ss=$(blockdev --getss "$dev") || return 1
  size=$(blockdev --getsize64 "$dev") || return 1
  n0=$(dmesg | wc -l)
  echo "size $size"
  echo "sector_size $ss"
  if ! dd if="$dev" of="$out" bs=1M iflag=direct 2>/dev/null; then
    : > "$out"
    steps=4096
    [ "$ss" -lt 4096 ] && steps="4096 $ss"
    _integrity_span "$dev" 0 "$size" 1048576 65536 $steps
    _integrity_bad_flush
    rm -f /tmp/integrity-piece
  fi
  echo "sha256 $(sha256sum < "$out" | cut -d' ' -f1)"
  dmesg | tail -n +$((n0 + 1)) \
    | grep -iE 'integrity|crypt|I/O error|critical medium' \
    | sed 's/^/dmesg /'
}

# Appends LENGTH bytes at OFFSET of DEV to integrity_read's $out in
# pieces of STEP bytes; a piece that fails is read again in pieces of
# the next STEP, and one of the last STEP (a sector) that fails is a
# failed run, zeros in $out: a failed sector costs a read or two per
# STEP, not one per sector of the first.
_integrity_span ()  # _integrity_span DEV OFFSET LENGTH STEP...
{
  local dev=$1 at=$2 end=$(($2 + $3)) step=$4 len
  shift 4
  while [ "$at" -lt "$end" ]; do
    len=$step
    [ $((at + len)) -gt "$end" ] && len=$((end - at))
    if _integrity_dd "$dev" "$at" "$len"; then
      cat /tmp/integrity-piece >> "$out"
      _integrity_bad_flush
    elif [ $# -gt 0 ]; then
      _integrity_span "$dev" "$at" "$len" "$@"
    else
      head -c "$len" /dev/zero >> "$out"
      [ "$bad_start" -lt 0 ] && bad_start=$at
      bad_end=$((at + len))
    fi
    at=$((at + len))
  done
}

# LENGTH bytes at OFFSET of DEV into /tmp/integrity-piece, in one
# O_DIRECT read.  busybox dd reads into a page-aligned buffer only when
# its block is a page or more, and when an O_DIRECT read fails with
# EINVAL (as one into an unaligned buffer does) it reads again through
# the page cache, whose errors are whole pages: hence a 64 KiB block
# with the offset and count in bytes.
_integrity_dd ()  # _integrity_dd DEV OFFSET LENGTH
{
  dd if="$1" of=/tmp/integrity-piece bs=65536 skip="$2" count="$3" \
     iflag=direct,skip_bytes,count_bytes 2>/dev/null
}

# Prints the run of failed bytes gathered so far, if any.
_integrity_bad_flush ()
{
  if [ "$bad_start" -ge 0 ]; then
    echo "bad $bad_start $((bad_end - bad_start))"
    bad_start=-1
  fi
}

integrity_facts ()
{
  local prefix=$1 name
  shift
  for name; do
    echo "$prefix table $name $(dmsetup table "$name")"
    echo "$prefix status $name $(dmsetup status "$name")"
  done
}
