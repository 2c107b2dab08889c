#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-cpu: what encryption costs the server, per GiB, in units of
# OpenSSL's own price.  For each image, cipher and direction, nbdcopy
# moves the whole export through a fresh server, and the server's CPU
# time (utime + stime from /proc/PID/stat) is divided by the GiB moved;
# the extra over the unencrypted nbdkit file plugin on the same bytes is
# then divided by what `openssl speed -evp aes-{128,256}-xts -bytes 4096`
# needs per GiB on one core, measured in the same run: 1.00 means the
# server pays exactly OpenSSL's XTS price for encryption, and nothing
# else.
#
#   tools/bench-cpu.sh [--quick] [--size SIZE] [--repeats N] [--out DIR]
#                      [--workdir DIR] [--plugin FILE] [--cipher-library LIST]
#   tools/bench-cpu.sh --from RUNS.csv [--out DIR]
#
# Every measurement goes to DIR/runs.csv as it is taken (one row a run:
# run,image,cipher,key_bits,sector,library,direction,ms_per_gib,
# cipher_ms_per_gib,cipher_library, run being openssl, file, dmcrypt or
# null), and the tables are computed from that file alone, so that
# --from prints the tables of an earlier run again without measuring.
# Prints one row per image, cipher, library and direction, and writes
# DIR/cpu.csv: image,cipher,key_bits,sector,direction,file_ms_per_gib,
# ms_per_gib,openssl_ms_per_gib,ratio,cipher_ms_per_gib,cipher_library
# (dmcrypt: the median of
# --repeats runs; file: the median of all the file plugin's runs in that
# direction, one before each run of dmcrypt; cipher: what the cipher
# itself cost inside the server, from its sampled clock, dmcryptctl
# status --stats' encrypt/decrypt_cpu_ms_per_gib, the median too;
# cipher_library: whose block cipher the server ran, as it says).  Then
# the write path alone: cipher_null with and
# without the write-out stage against the file plugin,
# DIR/writepath.csv: table,direction,file_ms_per_gib,ms_per_gib,
# over_file (dmcrypt / file).  Between them, each CBC-ESSIV case
# against aes-xts-plain64 of the same AES key size, sector size and
# library, where the run has one: DIR/cbc.csv: cipher,key_bits,sector,
# cipher_library,direction,ms_per_gib,xts_ms_per_gib,over_xts
# (dmcrypt / xts).  Then each LUKS2 case with integrity (image luks2i:
# aes-xts-plain64 + hmac-sha256, aes-gcm-random) against the XTS row
# of its AES key size and sector size: DIR/integrity.csv (see
# tools/bench-cpu-tables.sh); its bound in cpu.csv is OpenSSL's price
# of its cipher and MAC, or of its AEAD, at its sector size (openssl
# speed -hmac sha256, -evp aes-256-gcm).  Progress goes to standard
# error.
set -u
set -o pipefail
export LC_ALL=C

cd "$(dirname "$0")/.." || exit 1
topdir=$PWD
plugin=$topdir/plugin/nbdkit-dmcrypt-plugin.so

usage ()
{
  cat <<EOF
usage: tools/bench-cpu.sh [options]
  --size SIZE     bytes of every export, copied each way (default 1G)
  --repeats N     runs of every measurement; the median is reported
                  (default 3)
  --out DIR       where runs.csv, cpu.csv, cbc.csv and writepath.csv go
                  (default: bench-results)
  --from FILE     measure nothing: print the tables of the runs in FILE
                  (an earlier run's runs.csv) and write them to --out
  --workdir DIR   where the images go (default: /dev/shm, a tmpfs)
  --plugin FILE   the dmcrypt plugin to measure (default: this tree's),
                  e.g. an older build to compare with
  --cipher-library LIST  comma-separated cipher-library= values
                  (auto, openssl, libgcrypt): every case is measured
                  with each (default: the plugin's own default)
  --quick         --size 512M --repeats 1, and only the default cipher
                  at each sector size, the two CBC-ESSIV key sizes and
                  XTS of each one's AES key size at their sector size
                  (the cases with integrity: hmac-sha256 at 4096-byte
                  sectors and aes-gcm-random at 512, without hmac-sha256
                  at 512)
EOF
  exit "${1:-0}"
}

die () { echo "bench-cpu: $*" >&2; exit 1; }

size_arg='' repeats='' quick=0 out=$topdir/bench-results workbase='' from=''
libs=(-)                        # "-": no cipher-library= on the line
while [ $# -gt 0 ]; do
  case $1 in
    --size) size_arg=${2:?}; shift ;;
    --repeats) repeats=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --workdir) workbase=${2:?}; shift ;;
    --plugin) plugin=${2:?}; shift ;;
    --cipher-library) IFS=, read -r -a libs <<< "${2:?}"; shift ;;
    --from) from=${2:?}; shift ;;
    --quick) quick=1 ;;
    -h|--help) usage 0 ;;
    *) echo "bench-cpu: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done

if [ -n "$from" ]; then
  [ -f "$from" ] || die "--from $from: no such file"
  exec "$topdir/tools/bench-cpu-tables.sh" "$from" "$out"
fi

[ $quick = 1 ] && : "${size_arg:=512M}" "${repeats:=1}"
: "${size_arg:=1G}" "${repeats:=3}"
size=$(numfmt --from=iec "${size_arg%B}" 2>/dev/null) \
  || die "bad --size $size_arg"
[ "$size" -ge $((1 << 20)) ] 2>/dev/null || die "--size must be >= 1M"
size=$(( size / 65536 * 65536 ))
[[ $repeats =~ ^[1-9][0-9]*$ ]] || die "bad --repeats $repeats"
[ ${#libs[@]} -gt 0 ] || die "--cipher-library: no library"
for l in "${libs[@]}"; do
  case $l in
    -|auto|openssl|libgcrypt) ;;
    *) die "--cipher-library: '$l' is not auto, openssl or libgcrypt" ;;
  esac
done

for c in nbdkit nbdcopy cryptsetup openssl numfmt timeout xz; do
  command -v "$c" >/dev/null || die "$c is not installed"
done
[ -f "$plugin" ] || die "$plugin is not built (make)"
ctl_tool=$topdir/tools/dmcryptctl
[ -x "$ctl_tool" ] || die "$ctl_tool is not built (make)"
format_tool=$topdir/tools/integrity-format
[ -x "$format_tool" ] || die "$format_tool is not built (make)"

if [ -z "$workbase" ]; then
  workbase=${TMPDIR:-/tmp}
  [ -d /dev/shm ] && [ -w /dev/shm ] && workbase=/dev/shm
fi
work=$(mktemp -d "$workbase/dmcrypt-bench-cpu.XXXXXX") || die "mktemp failed"
server_pid=
stop_server ()
{
  [ -n "$server_pid" ] || return 0
  kill -TERM "$server_pid" 2>/dev/null
  wait "$server_pid" 2>/dev/null
  server_pid=
}
trap 'stop_server; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
cp "$plugin" "$work/" || die "cannot copy $plugin"
plugin=$work/${plugin##*/}
mkdir -p "$out" || die "cannot make $out"
runs=$out/runs.csv
echo "run,image,cipher,key_bits,sector,library,direction,ms_per_gib,cipher_ms_per_gib,cipher_library" \
  > "$runs" || die "cannot write $runs"
# One row of runs.csv: RUN IMAGE CIPHER BITS SECTOR LIBRARY DIRECTION MS
# CIPHER_MS CIPHER_LIBRARY ("-" where a run has no such thing).
record () { local IFS=,; echo "$*" >> "$runs"; }

# ---- Images: one raw, LUKS1 and LUKS2 on copies of it ----

header_bytes=$((16 << 20))
pwfile=$work/passphrase src=$work/source.bin
printf %s "bench-$RANDOM-$RANDOM" > "$pwfile"
random_bytes ()  # random_bytes BYTES FILE
{
  { openssl enc -aes-128-ctr -nosalt -K "$(openssl rand -hex 16)" \
      -iv "$(openssl rand -hex 16)" -in /dev/zero 2>/dev/null || true
  } | head -c "$1" > "$2"
  [ "$(stat -c %s "$2")" -eq "$1" ]
}
avail=$(df --output=avail -B1 "$work" | tail -n 1)
[ "$avail" -ge $(( 6 * (size + header_bytes) )) ] \
  || die "$work has $((avail >> 20)) MiB free: use a smaller --size"
random_bytes "$size" "$src" || die "cannot write $src"
random_bytes "$size" "$work/raw.img" || die "cannot write raw.img"
for t in luks1 luks2; do
  { cat "$src" && head -c "$header_bytes" /dev/zero; } > "$work/$t.img"
  cryptsetup luksFormat --batch-mode --type "$t" --pbkdf pbkdf2 \
    --pbkdf-force-iterations 1000 --cipher aes-xts-plain64 --key-size 512 \
    --key-file "$pwfile" "$work/$t.img" >/dev/null \
    || die "cannot make the $t image"
done

# ---- LUKS2 with integrity ----

# cryptsetup luksFormat --integrity cannot format without the kernel's
# dm-integrity (it has the kernel write the superblock), so these
# images take the LUKS2 header cryptsetup made with the kernel for the
# tests (tests/data/integrity, whose MANIFEST gives its passphrase and
# its dm-integrity table: offset, tag size, block size), and
# tools/integrity-format writes the dm-integrity superblock and journal
# at its data offset, sized so that the export is exactly SIZE bytes.
# The blocks are not wiped: each case writes its whole export before
# it is read, as cryptsetup's wipe through the crypt mapping would.
int_data=$topdir/tests/data/integrity
manifest_field ()  # manifest_field NAME KEY
{
  grep "^name=$1	" "$int_data/MANIFEST" | tr '\t' '\n' \
    | sed -n "s/^$2=//p"
}
# The kernel-made image whose header a case takes.
int_source ()  # int_source CIPHER SECTOR
{
  case $1/$2 in
    aes-xts-plain64/hmac-sha256/4096) echo luks2-hmac-sha256-4k ;;
    aes-xts-plain64/hmac-sha256/512) echo luks2-hmac-sha256 ;;
    aes-gcm-random/aead/512) echo luks2-aes-gcm ;;
    *) die "no LUKS2 header with integrity for $1 at $2-byte sectors" ;;
  esac
}
int_image () { echo "$work/luks2i-$(int_source "$1" "$2").img"; }
make_int_image ()  # make_int_image CIPHER SECTOR
{
  local name img table offset tag block
  name=$(int_source "$1" "$2") img=$(int_image "$1" "$2")
  [ -e "$img" ] && return 0
  table=$(manifest_field "$name" table.integrity)
  read -r _ _ _ _ offset tag _ <<< "$table"
  block=$(sed -n 's/.* block_size:\([0-9]*\).*/\1/p' <<< "$table")
  [ -n "$tag" ] || die "no table.integrity for $name in the MANIFEST"
  xz -dc "$int_data/$name.img.xz" | head -c $(( offset * 512 )) > "$img"
  "$format_tool" --offset $(( offset * 512 )) --data-bytes "$size" \
    --tag-size "$tag" --block-size "${block:-512}" "$img" >/dev/null \
    || die "cannot format dm-integrity in $img"
  manifest_field "$name" passphrase | tr -d '\n' > "$img.pw"
}

# ---- What is measured ----

# image cipher key-bits sector library: luks1/luks2 with cryptsetup's
# defaults (given explicitly), plain tables over the raw image for the
# rest; each once per --cipher-library value (all are AES, whose
# library that setting chooses).
base=("luks1 aes-xts-plain64 512 512" "luks2 aes-xts-plain64 512 4096")
if [ $quick = 1 ]; then
  base+=("plain aes-xts-plain64 512 1024" "plain aes-xts-plain64 512 2048"
         "plain aes-xts-plain64 256 4096"
         "plain aes-cbc-essiv:sha256 128 4096"
         "plain aes-cbc-essiv:sha256 256 4096")
else
  for cb in aes-xts-plain64/256 aes-xts-plain64/512 \
            aes-cbc-essiv:sha256/128 aes-cbc-essiv:sha256/256; do
    for ss in 512 1024 2048 4096; do
      base+=("plain ${cb%/*} ${cb#*/} $ss")
    done
  done
fi
cases=()
for b in "${base[@]}"; do
  for l in "${libs[@]}"; do cases+=("$b $l"); done
done
# LUKS2 with integrity (image luks2i), once: cipher-library= does not
# reach the AEAD, which is OpenSSL's.
int_cases=("luks2i aes-xts-plain64/hmac-sha256 768 4096"
           "luks2i aes-gcm-random/aead 256 512")
[ $quick = 1 ] \
  || int_cases+=("luks2i aes-xts-plain64/hmac-sha256 768 512")
for b in "${int_cases[@]}"; do
  read -r _ cipher _ sector <<< "$b"
  make_int_image "$cipher" "$sector"
  cases+=("$b -")
done

# OpenSSL's XTS of the same AES key size: ms of one core per GiB.
for bits in 128 256; do
  kbps=$(openssl speed -seconds 1 -bytes 4096 -evp "aes-$bits-xts" \
           2>/dev/null | awk -v c="aes-$bits-xts" \
             'toupper($1) == toupper(c) { sub(/k$/, "", $2); print $2 }')
  [ -n "$kbps" ] || die "openssl speed aes-$bits-xts failed"
  ms=$(awk -v k="$kbps" \
         'BEGIN { printf "%.1f", 1073741824 / (k * 1000) * 1000 }')
  record openssl "" "aes-$bits-xts" "$bits" 4096 - "" "$ms" - -
  echo "bench-cpu: openssl aes-$bits-xts: $kbps kB/s, $ms ms/GiB" >&2
done

# OpenSSL's HMAC-SHA256 and AES-256-GCM at each integrity case's sector
# size: what its MAC or AEAD alone costs one core per GiB.
declare -A priced
for b in "${int_cases[@]}"; do
  read -r _ cipher _ sector <<< "$b"
  case $cipher in
    */hmac-sha256) what=hmac-sha256 args=(-hmac sha256) label='hmac(sha256)' ;;
    aes-gcm-random/*) what=aes-256-gcm args=(-evp aes-256-gcm) label=aes-256-gcm ;;
  esac
  [ -z "${priced[$what $sector]:-}" ] || continue
  priced[$what $sector]=1
  kbps=$(openssl speed -seconds 1 -bytes "$sector" "${args[@]}" 2>/dev/null \
           | awk -v c="$label" \
               'toupper($1) == toupper(c) { sub(/k$/, "", $2); print $2 }')
  [ -n "$kbps" ] || die "openssl speed ${args[*]} failed"
  ms=$(awk -v k="$kbps" \
         'BEGIN { printf "%.1f", 1073741824 / (k * 1000) * 1000 }')
  record openssl "" "$what" 256 "$sector" - "" "$ms" - -
  echo "bench-cpu: openssl $what at $sector bytes: $kbps kB/s, $ms ms/GiB" >&2
done

clk_tck=$(getconf CLK_TCK)
server_ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Starts the file plugin on the raw image, or dmcrypt on IMAGE (with
# cipher-library=LIBRARY unless it is "-"); sets server_pid, uri and ctl
# (the control socket of a server with a cipher, else empty).
start_server ()  # start_server IMAGE CIPHER BITS SECTOR LIBRARY
{
  local sock=$work/sock.$RANDOM$RANDOM key lib=()
  local nbdkit=(nbdkit -f --exit-with-parent -U "$sock" -P "$sock.pid")
  [ "${5:--}" = - ] || lib=(cipher-library="$5")
  ctl=
  case $1 in
    luks1|luks2|plain) ctl=$sock.ctl ;;
  esac
  case $1 in
    file) set -- "${nbdkit[@]}" file "$work/raw.img" ;;
    # The AEAD runs below the engine, whose cipher is cipher_null: the
    # server's cipher clock does not see it (no control=, cipher "-").
    luks2i) local img
      img=$(int_image "$2" "$4")
      set -- "${nbdkit[@]}" "$plugin" file="$img" passphrase=+"$img.pw" ;;
    luks*) set -- "${nbdkit[@]}" "$plugin" file="$work/$1.img" \
             passphrase=+"$pwfile" control="$ctl" "${lib[@]}" ;;
    null*)
      # cipher_null: the engine and its write path, with no cipher.
      echo "0 $(( size / 512 )) crypt cipher_null-ecb - 0 /dev/null 0" \
        > "$work/null-table"
      local flags=()
      [ "$1" = null-nowq ] && flags=(no-write-workqueue=1)
      set -- "${nbdkit[@]}" "$plugin" file="$work/raw.img" \
        table=+"$work/null-table" "${flags[@]}" ;;
    plain)
      key=$(openssl rand -hex $(( $3 / 8 )))
      echo "0 $(( size / 512 )) crypt $2 $key 0 /dev/null 0 1" \
           "sector_size:$4" > "$work/table"
      set -- "${nbdkit[@]}" "$plugin" file="$work/raw.img" \
        table=+"$work/table" control="$ctl" "${lib[@]}" ;;
  esac
  "$@" >"$work/server.log" 2>&1 </dev/null &
  server_pid=$! uri="nbd+unix:///?socket=$sock"
  # nbdkit writes the PID file once it listens: the socket's file is
  # there from bind, and a client connecting before listen is refused.
  for (( i = 0; i < 1500; i++ )); do
    [ -S "$sock" ] && [ -s "$sock.pid" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.02
  done
  cat "$work/server.log" >&2
  die "the server did not start for $*"
}

# The cipher's own CPU ms per GiB in DIRECTION, as the server sampled
# it, and the library it ran in; "- -" for a server without a cipher.
cipher_ms ()  # cipher_ms DIRECTION
{
  local key=encrypt_cpu_ms_per_gib stats v lib
  [ -n "$ctl" ] || { echo - -; return 0; }
  [ "$1" = read ] && key=decrypt_cpu_ms_per_gib
  stats=$("$ctl_tool" --control "$ctl" status --stats) \
    || die "dmcryptctl status failed"
  v=$(awk -v k="$key:" '$1 == k { print $2 }' <<< "$stats")
  lib=$(awk '$1 == "cipher_library:" { print $2 }' <<< "$stats")
  [ -n "$v" ] || die "the server gave no $key"
  echo "$v ${lib:-?}"
}

# Server CPU ms per GiB for one copy in DIRECTION (read or write), the
# cipher's part of it and its library (cipher_ms).
measure ()  # measure DIRECTION IMAGE CIPHER BITS SECTOR LIBRARY
{
  local dir=$1 t0 t1 c
  shift
  start_server "$@"
  t0=$(server_ticks "$server_pid")
  if [ "$dir" = read ]; then
    timeout 600 nbdcopy "$uri" null: || die "nbdcopy read failed on $*"
  else
    timeout 600 nbdcopy "$src" "$uri" || die "nbdcopy write failed on $*"
  fi
  t1=$(server_ticks "$server_pid")
  c=$(cipher_ms "$dir") || exit 1
  stop_server
  awk -v t=$(( t1 - t0 )) -v hz="$clk_tck" -v n="$size" -v c="$c" \
    'BEGIN { printf "%.1f %s\n", t / hz * 1000 / (n / 1073741824), c }'
}

# REPEATS runs of the case, each just after a run of the file plugin in
# the same direction, so that drift hits both alike; each run is a row
# of runs.csv (RUN: dmcrypt or null); prints the last run's figure.
measure_case ()  # measure_case RUN DIRECTION IMAGE [CIPHER BITS SECTOR LIBRARY]
{
  local run=$1 dir=$2 r f ms cm lib
  shift 2
  for (( r = 0; r < repeats; r++ )); do
    f=$(measure "$dir" file) || exit 1
    record file "" "" "" "" - "$dir" "${f%% *}" - -
    read -r ms cm lib <<< "$(measure "$dir" "$@")" || exit 1
    [ -n "$ms" ] || exit 1
    if [ "$run" = null ]; then
      record null "$1" "$2" "" "" - "$dir" "$ms" - -
    else
      record dmcrypt "$1" "$2" "$3" "$4" "$5" "$dir" "$ms" "$cm" "$lib"
    fi
  done
  echo "$ms"
}

# ---- Measuring: every case, with progress; the tables come after ----

done_n=0 total_n=$(( (${#cases[@]} + 2) * 2 ))
progress ()  # progress WHAT MS
{
  done_n=$(( done_n + 1 ))
  echo "bench-cpu: [$done_n/$total_n] $1: $2 ms/GiB" >&2
}
for c in "${cases[@]}"; do
  read -r img cipher bits sector lib <<< "$c"
  for dir in write read; do
    m=$(measure_case dmcrypt "$dir" "$img" "$cipher" "$bits" "$sector" \
          "$lib") || exit 1
    progress "${c% *} $dir ($(tail -n 1 "$runs" | cut -d, -f10))" "$m"
  done
done
# The write path without a cipher: cipher_null through the sorted
# write-out stage (the default) and without it (no-write-workqueue=1).
for c in "null default" "null-nowq no-write-workqueue=1"; do
  for dir in write read; do
    m=$(measure_case null "$dir" ${c}) || exit 1
    progress "cipher_null ${c#* } $dir" "$m"
  done
done

"$topdir/tools/bench-cpu-tables.sh" "$runs" "$out"
