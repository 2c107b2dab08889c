#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# LUKS2 volumes in the middle of a re-encryption against the real
# kernel, in two boots of Debian's kernel (tests/kernel/kernel.sh,
# docs/kernel-tests.md).  For each case the guest's cryptsetup makes the
# volume, fills it through the kernel's mapping (or, for encryption,
# writes the plain device), initialises the re-encryption and resumes it
# with a small --hotzone-size and interrupts it with SIGINT once both
# the old and the new segment are in use; then:
#   A. the guest opens it (the kernel's multi-segment table) and reads
#      it: the bytes it filled it with;
#   B. dmcrypt (-r, the image unchanged) serves the same size and bytes,
#      and dmcryptctl table --showkeys lists the segments dmsetup table
#      --showkeys lists (device fields aside);
#   C. dmcrypt writes random data across the boundary of the first two
#      segments, at the start and at the end, and reads back exactly the
#      bytes it meant;
#   D. boot 2: the kernel's mapping of the half-done volume reads what
#      dmcrypt wrote;
#   E. the guest resumes the re-encryption to its end
#      (cryptsetup reencrypt --resume-only) and reads the same bytes;
#   F. dmcrypt reads the finished volume the same.
# Cases: aes-cbc-essiv:sha256 with 512-byte sectors re-encrypted to
# aes-xts-plain64 with 4096-byte sectors; encryption in progress with a
# data shift (--reduce-device-size) and with a detached header;
# decryption in progress (detached header).  Each prints PASS or FAIL.
# KEEP=DIR keeps the images and the boots' files there.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/kernel/kernel.sh"
plugin_built_or_fail
ctl="$topdir/tools/dmcryptctl"
[ -x "$ctl" ] || fail "$ctl is not built: run make first"
requires_cmd cryptsetup nbdkit nbdcopy
kernel_scratch
kernel_setup

pw=reencrypt-kernel-passphrase
printf %s "$pw" > pw
mib=1048576

# NAME DATA_MIB HEADER_MIB: HEADER_MIB 0 keeps the header in the image.
cases=("reenc-cbc-to-xts 48 0" "encrypt-shift 48 0" "encrypt-detached 32 16"
       "decrypt-detached 32 16")
declare -A data_mib hdr_mib dev hdr
drives=() i=0
letter () { printf "\\x$(printf %x $((97 + $1)))"; }
for c in "${cases[@]}"; do
  read -r name d h <<<"$c"
  data_mib[$name]=$d hdr_mib[$name]=$h
  truncate -s "${d}M" "$name.img"
  drives+=("$tmp/$name.img"); dev[$name]=/dev/vd$(letter $i); i=$((i + 1))
  if [ "$h" != 0 ]; then
    truncate -s "${h}M" "$name.hdr"
    drives+=("$tmp/$name.hdr"); hdr[$name]=/dev/vd$(letter $i); i=$((i + 1))
  fi
done

# ---- The guest's helpers ----------------------------------------------
guest_helpers ()
{
  cat <<'EOF'
set -u
mkdir -p /run/cryptsetup
kdf="--pbkdf pbkdf2 --pbkdf-force-iterations 1000"
# Nothing here is active, but cryptsetup cannot tell without udev.
offline="--disable-locks --force-offline-reencrypt"
say () { echo "$1: $2"; }
# "mid" when the segments in use include both the old kind (that of
# backup-previous) and the new (backup-final), "early" when only one,
# "done" when no re-encryption is left.
state ()  # state HEADER
{
  cryptsetup luksDump "$1" | awk '
    /^Data segments:/ { s = 1; next } /^Keyslots:/ { s = 0 }
    s && /^  [0-9]+: / { n++; t[n] = $2; c[n] = ""; f[n] = "" }
    s && /cipher:/ { c[n] = $2 }
    s && /flags :/ { f[n] = $3 }
    END {
      for (i = 1; i <= n; i++) {
        if (f[i] == "backup-final") fin = t[i] c[i]
        if (f[i] == "backup-previous") prev = t[i] c[i]
      }
      for (i = 1; i <= n; i++)
        if (f[i] == "") { if (t[i] c[i] == fin) nf++
                          if (t[i] c[i] == prev) np++ }
      if (fin == "") print "done"; else if (nf && np) print "mid"
      else print "early" }'
}
# Resumes it in the background and sends SIGINT once the header shows
# both kinds of segment in use: cryptsetup then finishes its hot zone
# and stops cleanly.  (A signal that comes before the re-encryption
# runs is lost: cryptsetup clears its flag when it unblocks signals
# after reading the key.)
interrupt ()  # interrupt NAME HEADER [cryptsetup args...]
{
  local name=$1 h=$2 p s
  shift 2
  cryptsetup reencrypt --resume-only --batch-mode $offline \
    --hotzone-size 1M --key-file /guest/pw "$@" >/dev/null 2>&1 &
  p=$!
  while kill -0 $p 2>/dev/null; do
    if [ "$(state "$h")" = mid ]; then kill -INT $p; break; fi
    sleep 0.05
  done
  wait $p
  s=$(state "$h")
  say "$name" "state $s"
  [ "$s" = mid ]
}
# The sha256 is of the first $limit bytes when it is set.
open_read ()  # open_read NAME DEV WHAT [cryptsetup args...]: sha, table
{
  local name=$1 d=$2 what=$3
  shift 3
  cryptsetup open --disable-keyring --key-file /guest/pw "$@" "$d" "$name" \
    2>/tmp/err || { say "$name" "error open: $(tail -n 1 /tmp/err)"; return 1; }
  say "$name" "$what-size $(blockdev --getsize64 /dev/mapper/$name)"
  say "$name" "$what-sha $(head -c "${limit:-$(blockdev --getsize64 \
    /dev/mapper/$name)}" /dev/mapper/$name | sha256sum | cut -d' ' -f1)"
  dmsetup table --showkeys "$name" | sed "s/^/$name: $what-table /"
  cryptsetup close "$name" || say "$name" "error close"
}
EOF
}

# ---- Boot 1: make, fill, interrupt, read ------------------------------
{
  guest_helpers
  for c in "${cases[@]}"; do
    read -r name _ _ <<<"$c"
    d=${dev[$name]} h=${hdr[$name]:-}
    hargs=""; [ -n "$h" ] && hargs="--header $h"
    hdev=${h:-$d}
    fmt="luksFormat --batch-mode --type luks2 \$kdf --key-file /guest/pw"
    case $name in
      reenc-cbc-to-xts)
        init="--cipher aes-xts-plain64 --key-size 512 --sector-size 4096"
        cat <<EOF
cryptsetup $fmt --cipher aes-cbc-essiv:sha256 --key-size 256 \
  --sector-size 512 $d || say $name "error format"
cryptsetup open --disable-keyring --key-file /guest/pw $d $name
head -c \$(blockdev --getsize64 /dev/mapper/$name) /dev/urandom > /tmp/fill
dd if=/tmp/fill of=/dev/mapper/$name bs=1M conv=fsync status=none \
  || say $name "error fill"
cryptsetup close $name
EOF
        ;;
      encrypt-shift)
        init="--encrypt --type luks2 --reduce-device-size 16M"
        init+=" --cipher aes-xts-plain64"
        # The volume is the device less the 16 MiB the header takes.
        echo "head -c $(( (data_mib[$name] - 16) * mib )) /dev/urandom > /tmp/fill"
        echo "dd if=/tmp/fill of=$d bs=1M conv=fsync status=none"
        ;;
      encrypt-detached)
        init="--encrypt --type luks2 --cipher aes-xts-plain64 $hargs"
        echo "head -c $(( data_mib[$name] * mib )) /dev/urandom > /tmp/fill"
        echo "dd if=/tmp/fill of=$d bs=1M conv=fsync status=none"
        ;;
      decrypt-detached)
        init="--decrypt $hargs"
        cat <<EOF
cryptsetup $fmt --cipher aes-xts-plain64 $hargs $d || say $name "error format"
cryptsetup open --disable-keyring --key-file /guest/pw $hargs $d $name
head -c \$(blockdev --getsize64 /dev/mapper/$name) /dev/urandom > /tmp/fill
dd if=/tmp/fill of=/dev/mapper/$name bs=1M conv=fsync status=none \
  || say $name "error fill"
cryptsetup close $name
EOF
        ;;
    esac
    cat <<EOF
say $name "fill-sha \$(sha256sum < /tmp/fill | cut -d' ' -f1)"
cryptsetup reencrypt --init-only --batch-mode \$offline \$kdf \
  --hotzone-size 1M --key-file /guest/pw $init $d 2>/tmp/err \
  || say $name "error init: \$(tail -n 1 /tmp/err)"
if interrupt $name $hdev $hargs $d; then
  open_read $name $d mid $hargs
else
  say $name "error interrupt: not mid-way"
fi
say $name end
EOF
  done
} > boot1.sh
mkdir -p boot1/guest boot2/guest
cp pw boot1/guest/pw; cp pw boot2/guest/pw
echo "boot 1: ${#cases[@]} volumes made, filled and left mid-way"
kernel_boot boot1 boot1.sh "${drives[@]}" 2> boot1/stderr
rc=$?
[ $rc -ne 125 ] || { cat boot1/stderr; fail "boot 1 did not finish"; }
cp boot1/out boot1.out

g () { sed -n "s/^$2: $3 \{0,1\}//p" "$1"; }
# dmsetup's and dmcryptctl's tables with the devices masked: crypt
# lines' device field, linear lines' device.
mask () { kernel_mask_device | awk '$3 == "linear" { $4 = "DEV" } { print }'; }
# serve NAME CMD [plugin args...]: CMD against dmcrypt's mapping, its
# control socket at $tmp/NAME.sock.
serve ()
{
  local name=$1 cmd=$2; shift 2
  local h=()
  [ "${hdr_mib[$name]}" != 0 ] && h=(header="$tmp/$name.hdr")
  serve_dmcrypt "$cmd" file="$tmp/$name.img" "${h[@]}" passphrase=+pw \
    name="$name" control="$tmp/$name.sock" "$@"
}

npass=0 nfail=0
verdict () { kernel_verdict "$@"; }
declare -A ok expect size_of
for c in "${cases[@]}"; do
  read -r name _ _ <<<"$c"
  why=""
  err=$(g boot1.out "$name" error | head -n 1)
  [ -n "$err" ] && why="the guest: $err"
  [ -n "$why" ] || grep -qx "$name: end" boot1.out \
    || why="the guest did not finish it"
  [ -n "$why" ] || [ "$(g boot1.out "$name" mid-sha)" = \
                     "$(g boot1.out "$name" fill-sha)" ] \
    || why="A: the kernel's mid-way mapping reads other bytes than it was filled with"
  verdict "A $name: the kernel reads its data mid-way" "$why"
  [ -z "$why" ] || continue

  # B: dmcrypt -r, and its table.
  img_before=$(cat "$name".img "$name".hdr 2>/dev/null | sha256sum)
  serve "$name" 'nbdcopy "$uri" - | sha256sum | cut -d" " -f1 > '"$name.dm-mid"' &&
    nbdinfo --size "$uri" > '"$name.dm-size"' &&
    '"'$ctl'"' table --showkeys "'"$tmp/$name.sock"'" > '"$name.dm-table"'' \
    -r 2> "$name.err" || why="B: dmcrypt: $(grep -m1 -i error "$name.err")"
  [ -n "$why" ] || [ "$(cat "$name".img "$name".hdr 2>/dev/null | sha256sum)" \
                     = "$img_before" ] || why="B: dmcrypt -r changed the image"
  [ -n "$why" ] || [ "$(cat "$name.dm-size")" = \
                     "$(g boot1.out "$name" mid-size)" ] \
    || why="B: size: kernel $(g boot1.out "$name" mid-size), dmcrypt $(cat "$name.dm-size")"
  [ -n "$why" ] || [ "$(cat "$name.dm-mid")" = "$(g boot1.out "$name" mid-sha)" ] \
    || why="B: dmcrypt reads other bytes than the kernel"
  [ -n "$why" ] || [ "$(g boot1.out "$name" mid-table | mask)" = \
                     "$(mask < "$name.dm-table")" ] \
    || why="B: table: kernel '$(g boot1.out "$name" mid-table | mask | tr '\n' ';')', dmcryptctl '$(mask < "$name.dm-table" | tr '\n' ';')'"
  verdict "B $name: dmcrypt serves the mapping the kernel makes" "$why"
  [ -z "$why" ] || continue

  # C: writes across the first boundary, at the start and at the end.
  size=$(cat "$name.dm-size")
  boundary=$(( $(g boot1.out "$name" mid-table | awk 'NR == 2 { print $1 }') * 512 ))
  # The 1 MiB window inside the volume, across the boundary wherever the
  # interruption left it.
  at=$((boundary - mib / 2))
  (( at > size - mib )) && at=$((size - mib))
  (( at < 0 )) && at=0
  random_file "$name.w1" $mib; random_file "$name.w2" 4096
  random_file "$name.w3" 4096
  serve "$name" 'nbdcopy "$uri" '"$name.before"' &&
    '"$PY"' -c "
import nbd, sys
h = nbd.NBD(); h.connect_uri(sys.argv[1])
for f, off in ((\"'"$name.w1"'\", '"$at"'),
               (\"'"$name.w2"'\", 0), (\"'"$name.w3"'\", '"$((size - 4096))"')):
    h.pwrite(open(f, \"rb\").read(), off)
h.flush(); h.shutdown()" "$uri" && nbdcopy "$uri" '"$name.after"'' \
    2> "$name.err" || why="C: dmcrypt: $(grep -m1 -i error "$name.err")"
  if [ -z "$why" ]; then
    cp "$name.before" "$name.expect"
    dd if="$name.w1" of="$name.expect" bs=512 seek=$((at / 512)) \
      conv=notrunc status=none
    dd if="$name.w2" of="$name.expect" conv=notrunc status=none
    dd if="$name.w3" of="$name.expect" bs=512 seek=$(( (size - 4096) / 512 )) \
      conv=notrunc status=none
    cmp -s "$name.expect" "$name.after" \
      || why="C: dmcrypt reads other bytes than it wrote"
  fi
  verdict "C $name: dmcrypt writes across the boundary at $boundary" "$why"
  [ -z "$why" ] || continue
  ok[$name]=1 expect[$name]=$(sha256_of "$name.expect") size_of[$name]=$size
done

# ---- Boot 2: the kernel reads dmcrypt's writes, then finishes ---------
{
  guest_helpers
  for name in ${ok[@]+"${!ok[@]}"}; do
    d=${dev[$name]} h=${hdr[$name]:-}
    hargs=""; [ -n "$h" ] && hargs="--header $h"
    cat <<EOF
open_read $name $d mid2 $hargs
cryptsetup reencrypt --resume-only --batch-mode \$offline \
  --key-file /guest/pw $hargs $d 2>/tmp/err \
  || say $name "error resume: \$(tail -n 1 /tmp/err)"
say $name "state2 \$(state ${h:-$d})"
EOF
    # A finished decryption leaves a plain device.
    if [ "$name" = decrypt-detached ]; then
      echo "say $name \"final-sha \$(sha256sum < $d | cut -d' ' -f1)\""
    else
      # A data shift's volume grows by the shift once finished: the
      # bytes mid-way were its start.
      echo "limit=${size_of[$name]}; open_read $name $d final $hargs; limit="
    fi
    echo "say $name end"
  done
} > boot2.sh
if [ -n "${ok[*]+x}" ]; then
  echo "boot 2: ${#ok[@]} volumes read mid-way and finished"
  kernel_boot boot2 boot2.sh "${drives[@]}" 2> boot2/stderr
  rc=$?
  [ $rc -ne 125 ] || { cat boot2/stderr; fail "boot 2 did not finish"; }
  cp boot2/out boot2.out
fi
for name in ${ok[@]+"${!ok[@]}"}; do
  why=""
  [ -n "$(g boot2.out "$name" error)" ] \
    && why="the guest: $(g boot2.out "$name" error | head -n 1)"
  [ -n "$why" ] || [ "$(g boot2.out "$name" mid2-sha)" = "${expect[$name]}" ] \
    || why="D: the kernel reads other bytes than dmcrypt wrote"
  verdict "D $name: the kernel reads dmcrypt's writes mid-way" "$why"
  [ -z "$why" ] || continue
  [ "$(g boot2.out "$name" state2)" = done ] \
    || why="E: the re-encryption is not finished: $(g boot2.out "$name" state2)"
  [ -n "$why" ] || [ "$(g boot2.out "$name" final-sha)" = "${expect[$name]}" ] \
    || why="E: after finishing, the kernel reads other bytes"
  verdict "E $name: finished by the kernel, every byte kept" "$why"
  [ -z "$why" ] || continue
  if [ "$name" = decrypt-detached ]; then
    back=$(sha256_of "$name.img")
  else
    back=$(serve "$name" 'nbdcopy "$uri" - | head -c '"${size_of[$name]}"' |
                          sha256sum | cut -d" " -f1' -r \
             2> "$name.err") || why="F: dmcrypt: $(grep -m1 -i error "$name.err")"
  fi
  [ -n "$why" ] || [ "$back" = "${expect[$name]}" ] \
    || why="F: dmcrypt reads the finished volume otherwise"
  verdict "F $name: dmcrypt reads the finished volume" "$why"
done
echo "$npass passed, $nfail failed"
if [ "$nfail" -ne 0 ] || [ "$npass" -eq 0 ]; then
  for f in boot1.out boot2.out; do
    [ -f "$f" ] && { echo "$f:"; sed 's/^/    /' "$f"; }
  done
  exit 1
fi
