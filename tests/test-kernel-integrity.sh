#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dmcrypt's dm-integrity (LUKS2 with integrity, integritysetup's
# standalone devices) against the real kernel's, both ways, in two boots
# of Debian's kernel (tests/kernel/kernel.sh, docs/kernel-tests.md):
#
#   fill    the guest formats each variant fresh, fills it with random
#           data through the kernel's mapping, closes it, opens it again
#           and reads it; dmcrypt (-r, the image unchanged) must serve
#           the same size and bytes;
#   write   dmcrypt writes random data at several offsets (unaligned
#           too); the kernel must read back exactly those bytes, with no
#           failed sector and no integrity error in dmesg;
#   flip    a copy with one byte flipped in a data sector: the kernel's
#           read and dmcrypt's must fail that sector alone, both, and
#           name the same sector in their logs;
#   crash   a journal the guest left dirty (O_DIRECT writes, fsync, sysrq
#           b): dmcrypt opens it read-only (the image unchanged) and
#           read-write (replayed on disk: the oracle then reads the data
#           area alone as the kernel reads it) and must read what the
#           kernel reads after its own replay of a copy, and what the
#           live mapping read before the crash; the kernel must read
#           dmcrypt's replayed copy the same, with no error;
#   kill    dmcrypt killed with SIGKILL in the middle of a stream of
#           writes and flushes: the kernel opens the image with no
#           integrity error, every flushed write is there, the bytes no
#           write touched are as they were, and each sector of the
#           writes not yet flushed is either old or new.
#
# Boot 1 formats, fills and reads every variant, then leaves two
# journals dirty; boot 2 reads all that the host made of them.  The
# guest hands its reads back byte for byte on a scratch drive (/dev/vda,
# 8 MiB a slot).  Each check of each variant prints PASS or FAIL.
# KEEP=DIR keeps the images and the boots' files there.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/integrity-functions.sh"
source "$srcdir/kernel/kernel.sh"
plugin_built_or_fail
requires_oracle
requires_cmd nbdkit
"$PY" -c 'import nbd' 2>/dev/null \
  || skip "$PY lacks libnbd's module (python3-libnbd)"
kernel_scratch
kernel_setup
blocks="$PY $srcdir/nbd-blocks.py"

pw=integrity-kernel-passphrase
printf %s "$pw" > pw
head -c 32 /dev/urandom > hmac.key
slot_mib=16

# LUKS2 headers kept small (see make-integrity-images.sh): the kernel
# refuses integrity devices much under 1.2 MiB of data.
luks_common="--pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
--luks2-metadata-size 16k --luks2-keyslots-size 512k --offset 1088"
hmac_args="--integrity hmac-sha256 --integrity-key-file /guest/hmac.key \
--integrity-key-size 32"

# NAME KIND KIB FORMAT-ARGS [:: OPEN-ARGS]: KIND luks2 takes luksFormat's
# arguments, int integritysetup format's, then open's after "::".
xts="--cipher aes-xts-plain64" k256="--key-size 256" i=--integrity
cases=(
  "luks2-hmac-sha256 luks2 1792 $xts $i hmac-sha256"
  "luks2-hmac-sha512 luks2 2816 $xts $i hmac-sha512"
  "luks2-cbc-essiv-hmac luks2 1792 --cipher aes-cbc-essiv:sha256 $k256
   $i hmac-sha256"
  "luks2-aes-gcm luks2 1792 --cipher aes-gcm-random $k256 $i aead"
  "luks2-chacha20-poly1305 luks2 1792 --cipher chacha20-random $k256
   $i poly1305"
  "luks2-hmac-sha256-4k luks2 1152 $xts $i hmac-sha256 --sector-size 4096"
  "int-crc32c int 4096 ::"
  "int-sha256 int 4096 --integrity sha256 :: --integrity sha256"
  "int-hmac-sha256 int 4096 $hmac_args :: $hmac_args"
  "int-bitmap int 4096 :: --integrity-bitmap-mode"
)
# Journals left dirty by the guest, in the same form.  The kernel's
# default journal of a LUKS2 device is a 128th of it
# (dm_integrity_ctr, DEFAULT_JOURNAL_SIZE_FACTOR): of one section on the
# small devices above, which a commit fills, so that the kernel writes
# it back at once (free sections under the watermark); 11 MiB with
# 64-byte tags make three, of which one commit leaves two free.
dirty_cases=(
  "crash-crc32c int 8192 --journal-size 2097152 ::"
  "crash-luks2-hmac-sha512 luks2 11264 $xts $i hmac-sha512"
)
# The variants dmcrypt is killed on.
kill_cases="luks2-hmac-sha256 luks2-aes-gcm int-crc32c int-bitmap"

declare -A kind fmt_args open_args host_args
parse_case ()  # parse_case "NAME KIND KIB ARGS..."
{
  local c=${1//$'\n'/ } n k a f="" o="" seen=0 w hash=crc32c mode=""
  read -r n k _ a <<<"$c"
  for w in $a; do
    if [ "$w" = "::" ]; then seen=1
    elif [ $seen = 0 ]; then f+=" $w"
    else o+=" $w"; fi
  done
  kind[$n]=$k fmt_args[$n]=${f# } open_args[$n]=${o# }
  if [ "$k" = luks2 ]; then
    host_args[$n]="passphrase=+$tmp/pw"
    return
  fi
  case " $o " in *" --integrity sha256 "*) hash=sha256 ;; esac
  case " $o " in *" --integrity hmac-sha256 "*) hash="hmac(sha256)" ;; esac
  case " $o " in
    *" --integrity-bitmap-mode "*) mode=integrity-mode=bitmap ;;
  esac
  host_args[$n]="type=integrity integrity=$hash"
  [ "$hash" = "hmac(sha256)" ] \
    && host_args[$n]+=" integrity-key-file=$tmp/hmac.key"
  [ -n "$mode" ] && host_args[$n]+=" $mode"
}
for c in "${cases[@]}" "${dirty_cases[@]}"; do parse_case "$c"; done

# The kernel's virtio disk names: vda ... vdz, vdaa, vdab ...
letter ()
{
  if (( $1 >= 26 )); then letter $(( $1 / 26 - 1 )); fi
  printf "\\x$(printf %x $(( 97 + $1 % 26 )))"
}

# ---- The guest's helpers ----------------------------------------------
guest_helpers ()
{
  cat <<EOF
. /guest/integrity-guest.sh
pw='$pw'
luks_common='$luks_common'
slot_mib=$slot_mib
EOF
  cat <<'EOF'
modprobe dm-integrity
say () { echo "F $*"; }
# The bytes integrity_read left, into the scratch drive's slot.
dump ()  # dump NAME SLOT
{
  dd if=/tmp/integrity-read.bin of=/dev/vda bs=1048576 \
     seek=$(($2 * slot_mib)) conv=fsync 2>/tmp/dd.err \
    || say "$1 error dump: $(head -n 1 /tmp/dd.err)"
}
open_dev ()  # open_dev NAME DEV KIND OPEN-ARGS...
{
  local name=$1 dev=$2 kind=$3
  shift 3
  if [ "$kind" = luks2 ]; then
    cryptsetup open --disable-keyring --key-file /guest/pw "$dev" "$name"
  else
    integritysetup open "$@" "$dev" "$name"
  fi
}
close_dev ()  # close_dev NAME KIND
{
  if [ "$2" = luks2 ]; then cryptsetup close "$1"
  else integritysetup close "$1"; fi || say "$1 error close"
}
read_dev ()  # read_dev NAME SLOT [WHAT]
{
  integrity_read "/dev/mapper/$1" | sed "s/^/F $1 ${3:-read} /"
  dump "$1" "$2"
}
format_dev ()  # format_dev NAME DEV KIND FORMAT-ARGS...
{
  local name=$1 dev=$2 kind=$3
  shift 3
  if [ "$kind" = luks2 ]; then
    printf %s "$pw" | cryptsetup luksFormat --batch-mode --type luks2 \
      $luks_common "$@" --key-file - "$dev" > /tmp/fmt.log 2>&1
  else
    integritysetup format --batch-mode "$@" "$dev" > /tmp/fmt.log 2>&1
  fi || { say "$name error format: $(grep -v WARNING /tmp/fmt.log \
                                       | tail -n 1)"; return 1; }
  say "$name formatted"
}
# Formats and opens; "F NAME key HEX" names a LUKS2 volume's key (the
# crypt table's: cipher key, then MAC key).
make_dev ()  # make_dev NAME DEV KIND "FORMAT-ARGS" "OPEN-ARGS"
{
  format_dev "$1" "$2" "$3" $4 || return 1
  open_dev "$1" "$2" "$3" $5 || { say "$1 error open"; return 1; }
  [ "$3" = luks2 ] \
    && say "$1 key $(dmsetup table --showkeys "$1" | awk '{ print $5 }')"
  return 0
}
fill_case ()  # fill_case NAME DEV SLOT KIND "FORMAT-ARGS" "OPEN-ARGS"
{
  local name=$1 dev=$2 slot=$3 kind=$4 size
  make_dev "$name" "$dev" "$kind" "$5" "$6" || return
  size=$(blockdev --getsize64 "/dev/mapper/$name")
  head -c "$size" /dev/urandom > /tmp/fill
  say "$name fill_sha256 $(sha256sum < /tmp/fill | cut -d' ' -f1)"
  dd if=/tmp/fill of="/dev/mapper/$name" bs=1048576 conv=fsync \
     2>/tmp/dd.err || say "$name error fill: $(head -n 1 /tmp/dd.err)"
  close_dev "$name" "$kind"
  open_dev "$name" "$dev" "$kind" $6 || { say "$name error reopen"; return; }
  read_dev "$name" "$slot"
  close_dev "$name" "$kind"
  say "$name done"
}
# Random data at the start, the middle and the end, written with
# O_DIRECT, the last with fsync: committed to the journal in one
# section, which is left below its watermark; then the live mapping
# read.  The guest dies after.
dirty_case ()  # dirty_case NAME DEV SLOT KIND "FORMAT-ARGS" "OPEN-ARGS" LEN
{
  local name=$1 dev=$2 slot=$3 kind=$4 len=$7 size off
  make_dev "$name" "$dev" "$kind" "$5" "$6" || return
  size=$(blockdev --getsize64 "/dev/mapper/$name")
  for off in 0 $((size / 2 / 4096 * 4096)) $((size - len)); do
    head -c "$len" /dev/urandom > /tmp/piece
    conv=notrunc
    [ "$off" = $((size - len)) ] && conv=fsync
    dd if=/tmp/piece of="/dev/mapper/$name" bs=4096 seek=$((off / 4096)) \
       oflag=direct conv=$conv 2>/tmp/dd.err \
      || say "$name error write at $off: $(head -n 1 /tmp/dd.err)"
  done
  read_dev "$name" "$slot" before
  say "$name done"
}
read_case ()  # read_case NAME DEV SLOT KIND OPEN-ARGS...
{
  local name=$1 dev=$2 slot=$3 kind=$4
  shift 4
  open_dev "$name" "$dev" "$kind" "$@" || { say "$name error open"; return; }
  read_dev "$name" "$slot"
  close_dev "$name" "$kind"
  say "$name done"
}
EOF
}

# g OUT NAME KEY: the values of "F NAME KEY VALUE" lines of a guest's
# output.
g () { sed -n "s/^F $2 $3 \{0,1\}//p" "$1"; }
# The guest's read of slot SLOT, SIZE bytes, from the scratch drive.
slot_bytes ()  # slot_bytes OUTBOX SLOT SIZE OUT
{
  tail -c +$(( $2 * slot_mib * 1048576 + 1 )) "$1" | head -c "$3" > "$4"
}
# "bad OFF LEN" lines of a guest read as OFF+LEN,...
guest_bad ()
{
  g "$1" "$2" "${3:-read}" \
    | awk '$1 == "bad" { printf "%s%s+%s", n++ ? "," : "", $2, $3 }'
}
guest_dmesg () { g "$1" "$2" "${3:-read}" | sed -n 's/^dmesg //p'; }
guest_sha () { g "$1" "$2" "${3:-read}" | sed -n 's/^sha256 //p'; }
guest_size () { g "$1" "$2" "${3:-read}" | sed -n 's/^size //p'; }
guest_ss () { g "$1" "$2" "${3:-read}" | sed -n 's/^sector_size //p'; }

# dmcrypt's read of IMG (plugin arguments after it): OUT, OUT.txt (size,
# bad runs), OUT.log (the server's log).
dm_read ()  # dm_read IMG OUT BLOCK [nbdkit/plugin args...]
{
  local img=$1 out=$2 block=$3
  shift 3
  serve_dmcrypt "$blocks read \$uri $out --block $block" "$@" file="$img" \
    > "$out.txt" 2> "$out.log"
}
dm_size () { awk '$1 == "size" { print $2 }' "$1.txt"; }

# Where two files of SIZE bytes differ, in sectors of SS bytes: "N
# sectors differ: a-b,c ..." (at most 8 runs), empty when the same.
differ ()  # differ EXPECTED ACTUAL SS
{
  "$PY" - "$@" <<'EOF'
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
ss = int(sys.argv[3])
if a == b:
    sys.exit(0)
if len(a) != len(b):
    print("%d bytes, not %d" % (len(b), len(a)))
    sys.exit(0)
bad = [i for i in range(0, len(a), ss) if a[i:i + ss] != b[i:i + ss]]
runs = []
for i in bad:
    if runs and runs[-1][1] == i - ss:
        runs[-1][1] = i
    else:
        runs.append([i, i])
print("%d sectors of %d bytes differ at bytes %s%s" % (
    len(bad), ss, ",".join("%d-%d" % (s, e + ss - 1) for s, e in runs[:8]),
    " ..." if len(runs) > 8 else ""))
EOF
}

# The sectors (512 bytes) that the kernel's and dmcrypt's logs name as
# failing their tag: one number a line, sorted, unique.
named_sectors ()
{
  sed -nE 's/.*INTEGRITY AEAD ERROR, sector ([0-9]+).*/\1/p
           s/.*Checksum failed at sector 0x([0-9a-fA-F]+).*/0x\1/p' \
    | while read -r s; do echo $(( s )); done | sort -nu | tr '\n' ' ' \
    | sed 's/ $//'
}

# The oracle's arguments for variant NAME (its LUKS2 key from boot 1).
oracle_of ()  # oracle_of NAME
{
  if [ "${kind[$1]}" = luks2 ]; then
    echo "--luks-key $(g boot1/out "$1" key)"
    return
  fi
  local h
  h=$(sed -n 's/.*integrity=\([^ ]*\).*/\1/p' <<<"${host_args[$1]}")
  echo "--internal-hash $h"
  [ "$h" != "hmac(sha256)" ] || echo "--key-file $tmp/hmac.key"
}

npass=0 nfail=0
verdict () { kernel_verdict "$@"; }

# ==== Boot 1: format, fill, read; two journals left dirty ==============
mkdir -p boot1/guest boot2/guest
for d in boot1 boot2; do
  cp "$srcdir/kernel/integrity-guest.sh" pw hmac.key "$d/guest/"
done
drives=("$tmp/outbox1.img")
slot=0
declare -A slot1 slot2
{
  guest_helpers
  for c in "${cases[@]}"; do
    read -r name _ kib _ <<<"$c"
    truncate -s "${kib}K" "$name.img"
    drives+=("$tmp/$name.img")
    slot1[$name]=$slot
    echo "fill_case $name /dev/vd$(letter $(( ${#drives[@]} - 1 ))) $slot" \
         "${kind[$name]} '${fmt_args[$name]}' '${open_args[$name]}'"
    slot=$((slot + 1))
  done
  for c in "${dirty_cases[@]}"; do
    read -r name _ kib _ <<<"$c"
    truncate -s "${kib}K" "$name.img"
    drives+=("$tmp/$name.img")
    slot1[$name]=$slot
    len=8192; [ "${kind[$name]}" = luks2 ] && len=4096
    echo "dirty_case $name /dev/vd$(letter $(( ${#drives[@]} - 1 ))) $slot" \
         "${kind[$name]} '${fmt_args[$name]}' '${open_args[$name]}' $len"
    slot=$((slot + 1))
  done
  echo 'say ready; sleep 2; echo b > /proc/sysrq-trigger; sleep 10'
} > boot1.sh
truncate -s $(( slot * slot_mib ))M outbox1.img
echo "boot 1: ${#cases[@]} variants formatted and filled," \
     "${#dirty_cases[@]} journals left dirty"
kernel_boot boot1 boot1.sh "${drives[@]}" 2> boot1/stderr
rc=$?
grep -q '^F ready$' boot1/out \
  || { cat boot1/out boot1/stderr; fail "boot 1 did not finish (exit $rc)"; }

# ---- fill: dmcrypt serves what the kernel wrote and read --------------
declare -A expect_ok
for c in "${cases[@]}"; do
  name=${c%% *} why=""
  err=$(g boot1/out "$name" error | head -n 1)
  [ -n "$err" ] && why="the guest: $err"
  [ -z "$why" ] && ! grep -qx "F $name done" boot1/out \
    && why="the guest did not finish it"
  if [ -z "$why" ]; then
    size=$(guest_size boot1/out "$name") ss=$(guest_ss boot1/out "$name")
    slot_bytes outbox1.img "${slot1[$name]}" "$size" "$name.kernel1"
    ksha=$(guest_sha boot1/out "$name")
    [ "$ksha" = "$(g boot1/out "$name" fill_sha256)" ] \
      || why="the kernel reads back other data than it wrote"
    kbad=$(guest_bad boot1/out "$name")
    msg=$(guest_dmesg boot1/out "$name" | head -n 2)
    [ -z "$kbad$msg" ] || why="the kernel's read failed: $kbad $msg"
    [ "$(sha256_of "$name.kernel1")" = "$ksha" ] \
      || why="the scratch drive does not hold the guest's read"
  fi
  if [ -z "$why" ]; then
    before=$(sha256_of "$name.img")
    # shellcheck disable=SC2086
    dm_read "$name.img" "$name.dm1" "$ss" -r ${host_args[$name]} \
      || why="dmcrypt: $(grep -m1 -i error "$name.dm1.log")"
  fi
  if [ -z "$why" ]; then
    [ "$(sha256_of "$name.img")" = "$before" ] \
      || why="dmcrypt -r changed the image"
    [ "$(dm_size "$name.dm1")" = "$size" ] \
      || why="size: kernel $size, dmcrypt $(dm_size "$name.dm1")"
  fi
  if [ -z "$why" ]; then
    bad=$(bad_runs "$name.dm1.txt")
    d=$(differ "$name.kernel1" "$name.dm1" "$ss")
    [ -z "$bad" ] || why="dmcrypt fails to read $bad"
    [ -z "$d" ] || why="${why:+$why; }dmcrypt reads other bytes: $d"
  fi
  verdict "fill $name" "$why"
  [ -z "$why" ] && expect_ok[$name]=1
done

# ---- write, flip, kill: the images for boot 2 -------------------------
drives=("$tmp/outbox2.img")
slot=0
boot2_case ()  # boot2_case NAME VARIANT IMAGE
{
  drives+=("$tmp/$3")
  slot2[$1]=$slot
  echo "read_case $1 /dev/vd$(letter $(( ${#drives[@]} - 1 ))) $slot" \
       "${kind[$2]} ${open_args[$2]}" >> boot2.sh
  slot=$((slot + 1))
}
guest_helpers > boot2.sh
random_file data 262144
declare -A flip_at kill_why
for c in "${cases[@]}"; do
  name=${c%% *}
  [ -n "${expect_ok[$name]:-}" ] || continue
  size=$(guest_size boot1/out "$name") ss=$(guest_ss boot1/out "$name")
  cp "$name.kernel1" "$name.expect"
  # OFFSET:LENGTH, the later winning where they overlap; data's bytes
  # from where the previous write's stopped.
  len=$(( size / 4 < 70000 ? size / 4 : 70000 ))
  writes="1:1 1000:5000 $((ss * 16)):$((ss * 4)) $((size / 3 + 4095)):$len"
  writes+=" $((size - 3333)):3333"
  cmd="" pos=0
  for w in $writes; do
    off=${w%:*} n=${w#*:}
    tail -c +$((pos + 1)) data | head -c "$n" > "$name.w$off"
    dd if="$name.w$off" of="$name.expect" bs=1 seek="$off" conv=notrunc \
       status=none
    cmd+="$blocks write \$uri $off $tmp/$name.w$off && "
    pos=$((pos + n))
  done
  # shellcheck disable=SC2086
  if ! serve_dmcrypt "${cmd}true" file="$name.img" ${host_args[$name]} \
         > "$name.write.log" 2>&1; then
    verdict "write $name" "dmcrypt: $(grep -m1 -i error "$name.write.log")"
    continue
  fi
  boot2_case "$name" "$name" "$name.img"
  # One byte of the middle sector's data flipped, on a copy.
  # shellcheck disable=SC2046
  oracle integrity-check "$name.img" $(oracle_of "$name") > "$name.geo" \
    || { verdict "flip $name" "the oracle cannot read it"; continue; }
  read -r first areas < <(awk '$1 == "geometry" {
      print $3 + ($5 + $7) * 512, $9 }' "$name.geo")
  mid=$(( size / ss / 2 ))
  cp "$name.img" "$name-flip.img"
  if [ "$areas" = 1 ]; then
    flip "$name-flip.img" $(( first + mid * ss + 100 ))
    flip_at[$name]=$(( mid * ss ))
    boot2_case "$name-flip" "$name" "$name-flip.img"
  else
    verdict "flip $name" "$areas areas: the flipped sector is not computed"
  fi
done

# kill: a stream of writes (each in a sector of its own), a flush after
# every third; after the eighth flush, two writes acknowledged and not
# flushed, three more sent, and the server is killed before their replies.
cat > stream.py <<'EOF'
import os, random, signal, sys
import nbd
uri, pid, size, data_path, plan_path, log_path = sys.argv[1:7]
size, pid = int(size), int(pid)
data = open(data_path, "rb").read()
rng = random.Random()
plan, off, pos = [], rng.randrange(512), 0
while True:
    n = rng.randrange(700, 6000)
    if off + n > size or pos + n > len(data):
        break
    plan.append((off, n, pos))
    pos += n
    off = (off + n + 511) // 512 * 512 + 512 + rng.randrange(512)
with open(plan_path, "w") as f:
    for w in plan:
        f.write("%d %d %d\n" % w)
flushes_before_kill = min(8, (len(plan) - 5) // 3)
if flushes_before_kill < 1:
    sys.exit("the device is too small for the stream")
h = nbd.NBD()
h.connect_uri(uri)
log = open(log_path, "w", buffering=1)
i = 0
for k in range(flushes_before_kill):
    for _ in range(3):
        off, n, pos = plan[i]
        h.pwrite(data[pos:pos + n], off)
        i += 1
    h.flush()
    log.write("flushed %d\n" % i)
for _ in range(2):
    off, n, pos = plan[i]
    h.pwrite(data[pos:pos + n], off)
    i += 1
    log.write("acknowledged %d\n" % i)
for _ in range(3):
    off, n, pos = plan[i]
    h.aio_pwrite(nbd.Buffer.from_bytearray(bytearray(data[pos:pos + n])), off)
    i += 1
log.write("sent %d\n" % i)
os.kill(pid, signal.SIGKILL)
log.write("killed\n")
EOF
for name in $kill_cases; do
  [ -n "${expect_ok[$name]:-}" ] && [ -n "${slot2[$name]:-}" ] || continue
  size=$(guest_size boot1/out "$name")
  cp "$name.img" "$name-kill.img"
  cp "$name.expect" "$name-kill.old"
  sock=$tmp/kill.sock
  rm -f "$sock" kill.pid kill.status
  # The server's exit status through a shell of its own, which the kill
  # leaves alive: bash would report a job killed by a signal.
  # shellcheck disable=SC2016,SC2086
  sh -c '"$@" 2> "$0"; echo $? > kill.status' "$name-kill.server.log" \
    nbdkit -f -U "$sock" -P kill.pid "$plugin" file="$name-kill.img" \
    ${host_args[$name]} &
  wrapper=$!
  for (( i = 0; i < 300; i++ )); do
    [ -s kill.pid ] && break
    [ -e kill.status ] && break
    sleep 0.1
  done
  if [ ! -s kill.pid ]; then
    kill_why[$name]="dmcrypt did not start: $(head -n 2 \
                       "$name-kill.server.log")"
    wait "$wrapper"
    continue
  fi
  server=$(cat kill.pid)
  cleanup_fn "kill $server 2>/dev/null"
  timeout 120 "$PY" stream.py "nbd+unix:///?socket=$sock" "$server" \
    "$size" data "$name-kill.plan" "$name-kill.log" \
    > "$name-kill.client.log" 2>&1
  kill "$server" 2>/dev/null
  wait "$wrapper"
  st=$(cat kill.status 2>/dev/null)
  if ! grep -qx killed "$name-kill.log" || [ "$st" != 137 ]; then
    kill_why[$name]="the stream did not end in SIGKILL (server exit $st):\
 $(tail -n 2 "$name-kill.client.log" "$name-kill.server.log" | tr '\n' ' ')"
    continue
  fi
  boot2_case "$name-kill" "$name" "$name-kill.img"
done

# ---- crash: dmcrypt on the journals the kernel left -------------------
declare -A crash_why
for c in "${dirty_cases[@]}"; do
  name=${c%% *} why=""
  grep -qx "F $name done" boot1/out || why="the guest did not finish it"
  err=$(g boot1/out "$name" error | head -n 1)
  [ -n "$err" ] && why="the guest: $err"
  if [ -z "$why" ]; then
    size=$(guest_size boot1/out "$name" before)
    ss=$(guest_ss boot1/out "$name" before)
    slot_bytes outbox1.img "${slot1[$name]}" "$size" "$name.before"
    ksha=$(guest_sha boot1/out "$name" before)
    [ "$(sha256_of "$name.before")" = "$ksha" ] \
      || why="the scratch drive does not hold the guest's read"
  fi
  if [ -n "$why" ]; then crash_why[$name]=$why; continue; fi
  # shellcheck disable=SC2046
  oracle integrity-check "$name.img" $(oracle_of "$name") > "$name.journal" \
    || { crash_why[$name]="the oracle cannot read it"; continue; }
  j=$(grep '^journal ' "$name.journal")
  echo "  $name: the oracle: $j"
  case $j in
    *" not_in_data_area 0"|"")
      crash_why[$name]="the journal holds nothing the data area lacks: $j"
      continue ;;
  esac
  cp "$name.img" "$name-kernel.img"
  cp "$name.img" "$name-rw.img"
  before=$(sha256_of "$name.img")
  # shellcheck disable=SC2086
  dm_read "$name.img" "$name.ro" "$ss" -r ${host_args[$name]} \
    || why="dmcrypt -r: $(grep -m1 -i error "$name.ro.log")"
  [ -z "$why" ] && [ "$(sha256_of "$name.img")" != "$before" ] \
    && why="dmcrypt -r changed the image"
  if [ -z "$why" ]; then
    # shellcheck disable=SC2086
    dm_read "$name-rw.img" "$name.rw" "$ss" ${host_args[$name]} \
      || why="dmcrypt: $(grep -m1 -i error "$name.rw.log")"
  fi
  if [ -z "$why" ]; then
    # shellcheck disable=SC2046
    oracle integrity-read "$name-rw.img" --out "$name.rw-area" --no-replay \
      $(oracle_of "$name") > "$name.rw-area.txt" \
      || why="the oracle cannot read dmcrypt's replayed image"
  fi
  crash_why[$name]=$why
  boot2_case "$name-kernel" "$name" "$name-kernel.img"
  [ -z "$why" ] && boot2_case "$name-rw" "$name" "$name-rw.img"
done

# ==== Boot 2: the kernel reads what dmcrypt made ========================
truncate -s $(( (slot + 1) * slot_mib ))M outbox2.img
echo "boot 2: $slot images read by the kernel"
kernel_boot boot2 boot2.sh "${drives[@]}" 2> boot2/stderr
rc=$?
[ $rc -eq 125 ] && { cat boot2/stderr; fail "boot 2 did not finish"; }

# The guest's read of boot-2 image NAME into NAME.kernel2; "why" when it
# could not be had.
kernel2 ()  # kernel2 NAME
{
  local err
  err=$(g boot2/out "$1" error | head -n 1)
  [ -z "$err" ] || { echo "the guest: $err"; return; }
  grep -qx "F $1 done" boot2/out \
    || { echo "the guest did not finish it"; return; }
  slot_bytes outbox2.img "${slot2[$1]}" "$(guest_size boot2/out "$1")" \
    "$1.kernel2"
}
# Nothing failed and nothing logged in the guest's read of NAME.
kernel2_clean ()  # kernel2_clean NAME
{
  local bad msg
  bad=$(guest_bad boot2/out "$1") msg=$(guest_dmesg boot2/out "$1" | head -n 2)
  [ -z "$bad$msg" ] \
    || echo "the kernel fails to read ${bad:-nothing}; dmesg: ${msg:-nothing}"
}

# ---- write -------------------------------------------------------------
for c in "${cases[@]}"; do
  name=${c%% *}
  [ -n "${slot2[$name]:-}" ] || continue
  ss=$(guest_ss boot1/out "$name")
  why=$(kernel2 "$name")
  [ -z "$why" ] && why=$(kernel2_clean "$name")
  if [ -z "$why" ]; then
    d=$(differ "$name.expect" "$name.kernel2" "$ss")
    [ -z "$d" ] || why="the kernel reads other bytes than dmcrypt wrote: $d"
  fi
  verdict "write $name" "$why"
done

# ---- flip --------------------------------------------------------------
for c in "${cases[@]}"; do
  name=${c%% *}
  [ -n "${slot2[$name-flip]:-}" ] || continue
  ss=$(guest_ss boot1/out "$name") want="${flip_at[$name]}+$ss"
  why=$(kernel2 "$name-flip")
  if [ -z "$why" ]; then
    # shellcheck disable=SC2086
    dm_read "$name-flip.img" "$name.dmflip" "$ss" -r ${host_args[$name]} \
      || why="dmcrypt: $(grep -m1 -i error "$name.dmflip.log")"
  fi
  if [ -z "$why" ]; then
    kbad=$(guest_bad boot2/out "$name-flip")
    dbad=$(bad_runs "$name.dmflip.txt")
    [ "$kbad" = "$want" ] && [ "$dbad" = "$want" ] \
      || why="failed runs: kernel '$kbad', dmcrypt '$dbad', want '$want'"
  fi
  if [ -z "$why" ]; then
    # The rest reads as written; the failed sector reads as zeros.
    cp "$name.expect" "$name.expect-flip"
    dd if=/dev/zero of="$name.expect-flip" bs="$ss" count=1 \
       seek=$(( flip_at[$name] / ss )) conv=notrunc status=none
    d=$(differ "$name.expect-flip" "$name-flip.kernel2" "$ss")
    [ -z "$d" ] || why="the kernel reads other bytes: $d"
    d=$(differ "$name.expect-flip" "$name.dmflip" "$ss")
    [ -z "$d" ] || why="${why:+$why; }dmcrypt reads other bytes: $d"
  fi
  # Both logs must name the sector.  The kernel's error lines share one
  # rate limit (dm_ratelimit: 10 in 5 s), so that its lines of the later
  # flips may be suppressed; the first flip read in the boot has its 3.
  if [ -z "$why" ]; then
    ks=$(guest_dmesg boot2/out "$name-flip" | named_sectors)
    ds=$(named_sectors < "$name.dmflip.log")
    if [ -z "$ks" ] && [ -n "${first_flip:-}" ]; then
      echo "  $name: the kernel's log names no sector (rate-limited)"
    elif [ "$ks" != "$ds" ] || [ -z "$ds" ]; then
      why="sectors named: kernel '$ks', dmcrypt '$ds'"
    fi
  fi
  first_flip=seen
  verdict "flip $name" "$why"
done

# ---- kill --------------------------------------------------------------
# Each sector the plan's writes touch must hold, after the kernel's
# replay: the flushed writes; the rest of the sent ones old or new; any
# other sector as it was.
kill_check ()  # kill_check OLD ACTUAL PLAN LOG SS
{
  "$PY" - "$@" data <<'EOF'
import sys
old, act, plan, log, ss, data = sys.argv[1:7]
old, act, data = (open(p, "rb").read() for p in (old, act, data))
ss = int(ss)
plan = [tuple(map(int, l.split())) for l in open(plan)]
flushed = sent = 0
for l in open(log):
    w = l.split()
    if w[0] == "flushed":
        flushed = int(w[1])
    if w[0] in ("acknowledged", "sent"):
        sent = int(w[1])
def apply(buf, ws):
    buf = bytearray(buf)
    for off, n, pos in ws:
        buf[off:off + n] = data[pos:pos + n]
    return bytes(buf)
durable = apply(old, plan[:flushed])
new = apply(durable, plan[flushed:sent])
if len(act) != len(old):
    sys.exit("%d bytes, not %d" % (len(act), len(old)))
wrong, took = [], 0
for i in range(0, len(old), ss):
    a = act[i:i + ss]
    if a == durable[i:i + ss]:
        continue
    if a == new[i:i + ss]:
        took += 1
        continue
    wrong.append(i)
if wrong:
    print("%d sectors hold neither the flushed writes nor, for those not"
          " flushed, the old or the new bytes; the first at bytes %s"
          % (len(wrong), ",".join(map(str, wrong[:8]))))
else:
    print("ok %d writes flushed, %d sent after, %d of their sectors new"
          % (flushed, sent - flushed, took))
EOF
}
for name in $kill_cases; do
  [ -n "${expect_ok[$name]:-}" ] || continue
  why=${kill_why[$name]:-}
  [ -z "$why" ] && [ -z "${slot2[$name-kill]:-}" ] && continue
  [ -z "$why" ] && why=$(kernel2 "$name-kill")
  [ -z "$why" ] && why=$(kernel2_clean "$name-kill")
  if [ -z "$why" ]; then
    r=$(kill_check "$name-kill.old" "$name-kill.kernel2" "$name-kill.plan" \
          "$name-kill.log" "$(guest_ss boot1/out "$name")")
    case $r in
      ok*) echo "  $name-kill: ${r#ok }" ;;
      *) why="the kernel's read: $r" ;;
    esac
  fi
  verdict "kill $name" "$why"
done

# ---- crash -------------------------------------------------------------
for c in "${dirty_cases[@]}"; do
  name=${c%% *}
  why=${crash_why[$name]:-}
  ss=$(guest_ss boot1/out "$name" before)
  [ -z "$why" ] && why=$(kernel2 "$name-kernel")
  [ -z "$why" ] && why=$(kernel2_clean "$name-kernel")
  k=$name-kernel.kernel2
  if [ -z "$why" ]; then
    d=$(differ "$name.before" "$k" "$ss")
    [ -z "$d" ] \
      || why="the kernel's replay lost what it read before the crash: $d"
  fi
  if [ -z "$why" ]; then
    [ -z "$(bad_runs "$name.ro.txt")$(bad_runs "$name.rw.txt")" ] \
      || why="dmcrypt fails to read: -r $(bad_runs "$name.ro.txt"),\
 rw $(bad_runs "$name.rw.txt")"
  fi
  if [ -z "$why" ]; then
    d=$(differ "$k" "$name.ro" "$ss")
    [ -z "$d" ] \
      || why="dmcrypt -r reads other bytes than the kernel's replay: $d"
    d=$(differ "$k" "$name.rw" "$ss")
    [ -z "$d" ] || why="${why:+$why; }dmcrypt read-write reads other bytes: $d"
    d=$(differ "$k" "$name.rw-area" "$ss")
    [ -z "$d" ] || why="${why:+$why; }dmcrypt's replay left other bytes\
 in the data area: $d"
  fi
  if [ -z "$why" ]; then
    why=$(kernel2 "$name-rw")
    [ -z "$why" ] && why=$(kernel2_clean "$name-rw")
    [ -z "$why" ] || why="on dmcrypt's replayed image: $why"
  fi
  if [ -z "$why" ]; then
    d=$(differ "$k" "$name-rw.kernel2" "$ss")
    [ -z "$d" ] \
      || why="the kernel reads dmcrypt's replayed image otherwise: $d"
  fi
  verdict "crash $name" "$why"
done

echo "kernel $kver: $npass checks passed, $nfail failed"
if [ "$nfail" -ne 0 ]; then
  echo "boot 1's output:"; sed 's/^/    /' boot1/out
  echo "boot 2's output:"; sed 's/^/    /' boot2/out
  exit 1
fi
