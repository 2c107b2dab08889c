#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench: dmcrypt against the unencrypted nbdkit file plugin (the
# ceiling) and its peers, nbdkit's luks filter and qemu-nbd's LUKS driver,
# and the filter over nbdkit's nbd plugin against the same chain without
# encryption, on images in tmpfs.  Every figure is the median of
# --repeats runs; the systems are interleaved within each repeat so drift
# hits them alike.
#
#   tools/bench.sh [--quick] [--size SIZE] [--repeats N] [--time SECONDS]
#                  [--systems LIST] [--tests LIST] [--out DIR]
#                  [--workdir DIR]
#
# Writes DIR/results.csv (image,system,test,metric,unit,median,min,max,
# repeats), DIR/raw.csv (every sample), DIR/table.txt (what is printed)
# and DIR/*.png (bar charts, min-max error bars).  Exits non-zero when a
# measurement failed; its rows then hold NA.
set -u
set -o pipefail
export LC_ALL=C

cd "$(dirname "$0")/.." || exit 1
topdir=$PWD
plugin=$topdir/plugin/nbdkit-dmcrypt-plugin.so
filter=$topdir/filter/nbdkit-dmcrypt-filter.so
seeker=$topdir/tools/seeker
plotter=$topdir/tools/bench-plot.gp
PY=/usr/bin/python3

all_systems="file dmcrypt dmcrypt-sorted dmcrypt-fifo dmcrypt-nowwq"
all_systems+=" dmcrypt-norwq dmcrypt-null dmcrypt-filter nbd dmcrypt-filter-nbd"
all_systems+=" luks-filter qemu-nbd"
# Systems served through a chain: a back nbdkit (file plugin) on the
# image, and in front of it the measured nbdkit with the nbd plugin.
chain_systems="nbd dmcrypt-filter-nbd"
io_tests="seq-read seq-write randread-qd1 randread-qd32 randwrite-qd1"
io_tests+=" randwrite-qd32 seeker fairness"
all_tests="$io_tests ciphers crypto server-cpu"
# LUKS2 images of dmcrypt's cipher table: spec/key bits.
cipher_list="aes-xts-plain64/256 aes-xts-plain64/512"
cipher_list+=" aes-cbc-essiv:sha256/128 aes-cbc-essiv:sha256/256"
cipher_list+=" aes-xts-plain/256 aes-xts-plain/512"
all_ciphers=$cipher_list
header_bytes=$((16 << 20))      # room for any LUKS header before the data

usage ()
{
  cat <<EOF
usage: tools/bench.sh [options]
  --size SIZE       bytes written by seq-write, and the export size
                    (default 1G; K, M, G suffixes)
  --repeats N       runs of every measurement; the median is reported
                    (default 3)
  --time SECONDS    length of each timed test: fio, seeker, fairness
                    (default 2)
  --systems LIST    comma-separated, from: ${all_systems// /,}
  --tests LIST      comma-separated, from: ${all_tests// /,}
  --ciphers LIST    the ciphers test's images, comma-separated, from:
                    ${all_ciphers// /,}
  --out DIR         where results go (default: bench-results)
  --workdir DIR     where the images go (default: /dev/shm, a tmpfs)
  --quick           --size 64M --repeats 1 --time 0.5, one openssl cipher
                    (and tools/bench-cpu.sh --quick for server-cpu)
EOF
  exit "${1:-0}"
}

die () { echo "bench: $*" >&2; exit 1; }

# ---- Options ----

command_line="tools/bench.sh $*"
size_arg='' repeats='' seconds='' quick=0
systems=$all_systems tests=$all_tests
out=$topdir/bench-results workbase=''
while [ $# -gt 0 ]; do
  case $1 in
    --size) size_arg=${2:?}; shift ;;
    --repeats) repeats=${2:?}; shift ;;
    --time) seconds=${2:?}; shift ;;
    --systems) systems=${2:?}; systems=${systems//,/ }; shift ;;
    --tests) tests=${2:?}; tests=${tests//,/ }; shift ;;
    --ciphers) cipher_list=${2:?}; cipher_list=${cipher_list//,/ }; shift ;;
    --out) out=${2:?}; shift ;;
    --workdir) workbase=${2:?}; shift ;;
    --quick) quick=1 ;;
    -h|--help) usage 0 ;;
    *) echo "bench: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done
if [ $quick = 1 ]; then
  : "${size_arg:=64M}" "${repeats:=1}" "${seconds:=0.5}"
fi
: "${size_arg:=1G}" "${repeats:=3}" "${seconds:=2}"

# "64M", "1G", "1GiB", "4096" -> bytes.
parse_size ()
{
  local s=${1%iB}
  s=${s%B}
  numfmt --from=iec "$s" 2>/dev/null
}
size=$(parse_size "$size_arg") || die "bad --size $size_arg"
[ "$size" -ge $((4 << 20)) ] 2>/dev/null || die "--size must be >= 4M"
size=$(( size / 65536 * 65536 ))   # whole 64 KiB: any sector size fits
[[ $repeats =~ ^[1-9][0-9]*$ ]] || die "bad --repeats $repeats"
[[ $seconds =~ ^[0-9]*\.?[0-9]+$ ]] || die "bad --time $seconds"
for s in $systems; do
  [[ " $all_systems " == *" $s "* ]] || die "unknown system $s"
done
for t in $tests; do
  [[ " $all_tests " == *" $t "* ]] || die "unknown test $t"
done
for c in $cipher_list; do
  [[ " $all_ciphers " == *" $c "* ]] || die "unknown cipher $c"
done
has () { [[ " $1 " == *" $2 "* ]]; }   # has LIST WORD

# ---- Tools ----

need=(nbdkit nbdinfo nbdcopy cryptsetup fio openssl numfmt timeout)
has "$systems" qemu-nbd && need+=(qemu-nbd)
for c in "${need[@]}"; do
  command -v "$c" >/dev/null \
    || die "$c is not installed (tools/install-deps.sh installs it)"
done
[ -x "$PY" ] || die "$PY is missing"
if [ ! -f "$plugin" ] || [ ! -f "$filter" ] || [ ! -x "$seeker" ] \
     || [ "$topdir/tools/seeker.c" -nt "$seeker" ]; then
  echo "bench: building the plugin, the filter and tools/seeker"
  make -s plugin/nbdkit-dmcrypt-plugin.so filter/nbdkit-dmcrypt-filter.so \
    tools/seeker >/dev/null || die "build failed"
fi
cpu_mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo)
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
have_gnuplot=1
command -v gnuplot >/dev/null || {
  have_gnuplot=0; echo "bench: gnuplot is missing: no charts" >&2; }

# ---- Scratch space, servers and cleanup ----

if [ -z "$workbase" ]; then
  workbase=${TMPDIR:-/tmp}
  [ -d /dev/shm ] && [ -w /dev/shm ] && workbase=/dev/shm
fi
work=$(mktemp -d "$workbase/dmcrypt-bench.XXXXXX") || die "mktemp failed"
server_pid= back_pid=             # the measured server; a chain's back one
stop_process ()  # stop_process PID: TERM, and KILL after 10 s
{
  local i
  [ -n "$1" ] || return 0
  kill -TERM "$1" 2>/dev/null
  for (( i = 0; i < 200; i++ )); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.05
  done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
stop_server ()
{
  stop_process "$server_pid"
  stop_process "$back_pid"
  server_pid= back_pid=
}
cleanup () { stop_server; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
# The run uses copies of the plugin and the filter: a rebuild meanwhile
# cannot mix two versions in one table.
cp "$plugin" "$filter" "$work/" || die "cannot copy $plugin and $filter"
plugin_id=$(sha256sum "$plugin" | cut -c1-12)
filter_id=$(sha256sum "$filter" | cut -c1-12)
plugin=$work/${plugin##*/} filter=$work/${filter##*/}
mkdir -p "$out" || die "cannot make $out"
out=$(cd "$out" && pwd)
rm -f "$out"/*.png "$out"/*.dat "$out"/results.csv "$out"/raw.csv

# ---- Images ----

images=()                              # main images, if an IO test runs
for t in $io_tests; do has "$tests" "$t" && images=(luks1 luks2); done
cipher_images=()                       # labels: aes-xts-plain64-256
if has "$tests" ciphers && has "$systems" dmcrypt; then
  for c in $cipher_list; do cipher_images+=("${c%/*}-${c#*/}"); done
fi
nimages=$(( ${#images[@]} + ${#cipher_images[@]} ))
[ $nimages -gt 0 ] && nimages=$((nimages + 1))     # and the raw image
img_bytes=$((size + header_bytes))
need_bytes=$(( nimages * img_bytes + size + (64 << 20) ))
avail_bytes=$(df --output=avail -B1 "$work" | tail -n 1)
[ "$avail_bytes" -ge "$need_bytes" ] \
  || die "$work has $((avail_bytes >> 20)) MiB free, needs" \
         "$((need_bytes >> 20)) MiB: use a smaller --size or --workdir"

pwfile=$work/passphrase
printf %s "bench-$RANDOM-$RANDOM" > "$pwfile"
src=$work/source.bin                  # what seq-write writes

# Fast pseudo-random bytes (AES-CTR of zeros): none are zero, so neither
# nbdcopy's zero detection nor tmpfs holes make any system look faster.
random_bytes ()  # random_bytes BYTES FILE: appends to FILE
{
  local before
  before=$(stat -c %s "$2" 2>/dev/null || echo 0)
  { openssl enc -aes-128-ctr -nosalt -K "$(openssl rand -hex 16)" \
      -iv "$(openssl rand -hex 16)" -in /dev/zero 2>/dev/null || true
  } | head -c "$1" >> "$2"
  [ "$(stat -c %s "$2")" -eq $((before + $1)) ]
}

# An image full of random bytes, then a LUKS header on it with the fewest
# PBKDF2 iterations (for LUKS1 too: --iter-time would benchmark for
# seconds); cryptsetup leaves the data area's bytes in place, so every
# system reads allocated, non-zero data.
make_image ()  # make_image FILE [luks1|luks2 CIPHER KEYBITS]
{
  cat "$src" > "$1" && random_bytes "$header_bytes" "$1" || return 1
  [ $# -gt 1 ] || return 0
  local kdf=(--pbkdf pbkdf2 --pbkdf-force-iterations 1000)
  cryptsetup luksFormat --batch-mode --type "$2" "${kdf[@]}" \
    --cipher "$3" --key-size "$4" --key-file "$pwfile" "$1" >/dev/null
}

# The main images use cryptsetup's default cipher, given explicitly so
# that LUKS1 and LUKS2 agree: aes-xts-plain64 with a 512-bit key.
declare -A image_file
if [ $nimages -gt 0 ]; then
  echo "bench: making $nimages images of $((img_bytes >> 20)) MiB in $work"
  random_bytes "$size" "$src" || die "cannot write $src"
  image_file[raw]=$work/raw.img
  make_image "${image_file[raw]}" || die "cannot make raw.img"
  for img in "${images[@]}"; do
    image_file[$img]=$work/$img.img
    make_image "${image_file[$img]}" "$img" aes-xts-plain64 512 \
      || die "cannot make the $img image"
  done
  n=0
  for c in $cipher_list; do
    [ ${#cipher_images[@]} -gt 0 ] || break
    label="${c%/*}-${c#*/}" n=$((n + 1))
    image_file[$label]=$work/cipher$n.img
    make_image "${image_file[$label]}" luks2 "${c%/*}" "${c#*/}" \
      || die "cannot make the $label image"
  done
fi

# ---- Servers ----

# Runs COMMAND in the background, output appended to LOG, and sets the
# variable PIDVAR to its process id; true once it listens on SOCK (30 s
# at the most), false if it exits first or never does.  COMMAND writes
# SOCK.pid once it accepts connections (nbdkit -P, qemu-nbd --pid-file):
# the socket's file appears at bind, before listen, and a client
# connecting then is refused.
spawn ()  # spawn PIDVAR SOCK LOG COMMAND...
{
  local pidvar=$1 sock=$2 log=$3 i
  shift 3
  "$@" >>"$log" 2>&1 </dev/null &
  printf -v "$pidvar" %s "$!"
  for (( i = 0; i < 1500; i++ )); do
    [ -S "$sock" ] && [ -s "$sock.pid" ] && return 0
    kill -0 "${!pidvar}" 2>/dev/null || return 1
    sleep 0.02
  done
  return 1
}

# Starts SYSTEM on IMAGE in the background on a fresh socket; sets
# server_pid (and for a chain back_pid, its back server, started first)
# and uri.  Servers are identical apart from what is measured: default
# threads and caching, the same passphrase file.
start_server ()  # start_server SYSTEM IMAGE LOG
{
  local system=$1 image=$2 img=${image_file[$2]} log=$3
  local sock=$work/sock.$RANDOM$RANDOM
  local nbdkit=(nbdkit -f --exit-with-parent -U "$sock" -P "$sock.pid")
  local dm=("${nbdkit[@]}" "$plugin" file="$img" passphrase=+"$pwfile")
  local chain=("${nbdkit[@]}" nbd socket="$sock.back")
  case $system in file|nbd) img=${image_file[raw]} ;; esac
  : > "$log"
  if has "$chain_systems" "$system" && ! spawn back_pid "$sock.back" "$log" \
       nbdkit -f --exit-with-parent -U "$sock.back" -P "$sock.back.pid" \
         file "$img"; then
    echo "bench: the back server of $system did not start on $image" >&2
    return 1
  fi
  case $system in
    file) set -- "${nbdkit[@]}" file "$img" ;;
    dmcrypt) set -- "${dm[@]}" ;;
    dmcrypt-sorted) set -- "${dm[@]}" scheduler=sorted ;;
    dmcrypt-fifo) set -- "${dm[@]}" scheduler=fifo ;;
    dmcrypt-nowwq) set -- "${dm[@]}" no-write-workqueue=1 ;;
    dmcrypt-norwq) set -- "${dm[@]}" no-read-workqueue=1 ;;
    dmcrypt-null)       # the engine alone: plain mode, cipher_null
      img=${image_file[raw]}
      set -- "${nbdkit[@]}" "$plugin" file="$img" table="0 $(( $(stat -c %s \
        "$img") / 512 )) crypt cipher_null-ecb - 0 /dev/null 0" ;;
    dmcrypt-filter)     # the same volume through the filter over file
      set -- "${nbdkit[@]}" --filter="$filter" file "$img" \
        passphrase=+"$pwfile" ;;
    nbd) set -- "${chain[@]}" ;;
    dmcrypt-filter-nbd)  # the same volume through the filter over the chain
      set -- "${chain[@]}" --filter="$filter" passphrase=+"$pwfile" ;;
    luks-filter)
      set -- "${nbdkit[@]}" file "$img" --filter=luks passphrase=+"$pwfile" ;;
    qemu-nbd)
      set -- qemu-nbd -t -e 0 -k "$sock" --pid-file "$sock.pid" \
        --object secret,id=sec0,file="$pwfile" --image-opts \
        "driver=luks,key-secret=sec0,file.driver=file,file.filename=$img" ;;
  esac
  uri="nbd+unix:///?socket=$sock"
  spawn server_pid "$sock" "$log" "$@" && return 0
  echo "bench: $system did not start on $image" >&2
  return 1
}

# ---- Tests: each prints metric,unit,value lines ----

now () { echo "$EPOCHREALTIME"; }
per_second ()  # per_second AMOUNT T0 T1 DIVISOR
{
  awk -v n="$1" -v a="$2" -v b="$3" -v d="$4" \
    'BEGIN { if (b <= a) exit 1; printf "%.6g\n", n / (b - a) / d }'
}
client_timeout=$(awk -v s="$seconds" 'BEGIN { printf "%d", s + 120 }')
copy_timeout=$(( 120 + size / (10 << 20) ))   # 10 MiB/s is failure

# CPU time in clock ticks: a server's (by process id), and that of the
# children this shell has reaped (the client).
server_ticks () { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
client_ticks () { awk '{ print $16 + $17 }' "/proc/$BASHPID/stat"; }
clk_tck=$(getconf CLK_TCK)

# Idle and total jiffies of all CPUs (/proc/stat: idle and iowait).
machine_ticks () { awk '/^cpu /{ print $5 + $6, $2+$3+$4+$5+$6+$7+$8+$9 }' /proc/stat; }

# Prints METRIC,cycles/B for TICKS of CPU time spent on BYTES.
cycles_per_byte ()  # cycles_per_byte METRIC TICKS BYTES
{
  awk -v m="$1" -v t="$2" -v n="$3" -v hz="$clk_tck" -v mhz="$cpu_mhz" \
    'BEGIN { printf "%s,cycles/B,%.4g\n", m, t / hz * mhz * 1e6 / n }'
}

# Copies SOURCE to DESTINATION with nbdcopy; prints MB/s, how busy the
# machine was (%) and, when the clock rate is known, the CPU cycles that
# client and measured server spent per byte (the transport's cost, to set
# beside openssl's for the cipher), and a chain's back server's apart.
timed_copy ()  # timed_copy BYTES SOURCE DESTINATION
{
  local t0 t1 s0 s1 c0 c1 m0 m1 b0=0 b1=0
  m0=$(machine_ticks) s0=$(server_ticks "$server_pid") c0=$(client_ticks)
  [ -z "$back_pid" ] || b0=$(server_ticks "$back_pid")
  t0=$(now)
  timeout "$copy_timeout" nbdcopy "$2" "$3" || return 1
  t1=$(now) c1=$(client_ticks) s1=$(server_ticks "$server_pid")
  [ -z "$back_pid" ] || b1=$(server_ticks "$back_pid")
  m1=$(machine_ticks)
  echo "throughput,MB/s,$(per_second "$1" "$t0" "$t1" 1e6)"
  # A copy too short for one clock tick counts as fully busy.
  echo "$m0 $m1" | awk '{ t = $4 - $2; i = $3 - $1
    printf "busy,%%,%.4g\n", (t > 0 ? 100 * (t - i) / t : 100) }'
  [ -n "$cpu_mhz" ] || return 0
  cycles_per_byte cpu $(( s1 - s0 + c1 - c0 )) "$1"
  [ -z "$back_pid" ] || cycles_per_byte back-cpu $(( b1 - b0 )) "$1"
}

test_seq_read ()
{
  local bytes
  bytes=$(timeout 30 nbdinfo --size "$uri") || return 1
  timed_copy "$bytes" "$uri" null:
}

test_seq_write () { timed_copy "$size" "$src" "$uri"; }

fio_ms=$(awk -v s="$seconds" 'BEGIN { printf "%d", s * 1000 + 0.5 }')
fio_common=(--ioengine=nbd --time_based "--runtime=${fio_ms}ms"
            --norandommap --randrepeat=0 --output-format=json)

# IOPS and completion latency percentiles from fio's JSON.
fio_figures ()  # fio_figures JSON
{
  "$PY" - "$1" <<'EOF'
import json, sys
jobs = json.load(open(sys.argv[1]))["jobs"]
def side(job):
    d = "read" if job["read"]["total_ios"] > 0 else "write"
    if job["error"] or job[d]["total_ios"] == 0:
        sys.exit("fio: job %s failed" % job["jobname"])
    return job[d]
def ms(s, p):
    return s["clat_ns"]["percentile"]["%.6f" % p] / 1e6
first = side(jobs[0])
if len(jobs) == 1:
    print("iops,IOPS,%.6g" % first["iops"])
    print("p50,ms,%.6g" % ms(first, 50))
    print("p99,ms,%.6g" % ms(first, 99))
else:          # fairness: a 4 KiB reader beside a streaming writer
    print("read-p99,ms,%.6g" % ms(first, 99))
    print("write,MB/s,%.6g" % (side(jobs[1])["bw_bytes"] / 1e6))
EOF
}

test_fio ()  # test_fio randread|randwrite QD
{
  timeout "$client_timeout" fio --name=bench "${fio_common[@]}" \
    --uri="$uri" --rw="$1" --bs=4k --iodepth="$2" \
    --output="$work/fio.json" >/dev/null || return 1
  fio_figures "$work/fio.json"
}

# Issue 3's fairness: p99 of 4 KiB random reads (QD1) while a writer
# streams 32 MiB blocks (capped at the export size) on its own connection.
test_fairness ()
{
  local wbytes=$(( size < (32 << 20) ? size : (32 << 20) ))
  timeout "$client_timeout" fio "${fio_common[@]}" --uri="$uri" \
    --name=reader --rw=randread --bs=4k --iodepth=1 \
    --name=writer --rw=write --bs="$wbytes" --iodepth=1 \
    --output="$work/fio.json" >/dev/null || return 1
  fio_figures "$work/fio.json"
}

test_seeker ()
{
  local line
  line=$(timeout "$client_timeout" "$seeker" -q -s 1 -t "$seconds" "$uri" \
         | grep '^Results:') || return 1
  awk '{ printf "seeks,seeks/s,%s\naccess,ms,%s\n", $2, $4 }' <<< "$line"
}

# What TEST reports on SYSTEM, in order: metric:unit.
test_metrics ()  # test_metrics TEST SYSTEM
{
  case $1 in
    seq-*) echo throughput:MB/s busy:% ${cpu_mhz:+cpu:cycles/B}
           has "$chain_systems" "$2" && echo ${cpu_mhz:+back-cpu:cycles/B} ;;
    rand*) echo iops:IOPS p50:ms p99:ms ;;
    seeker) echo seeks:seeks/s access:ms ;;
    fairness) echo read-p99:ms write:MB/s ;;
  esac
}

run_test ()  # run_test TEST
{
  case $1 in
    seq-read) test_seq_read ;;
    seq-write) test_seq_write ;;
    rand*-qd*) test_fio "${1%-qd*}" "${1#*-qd}" ;;
    seeker) test_seeker ;;
    fairness) test_fairness ;;
  esac
}

# ---- The plan: repeat, test, image, system — systems innermost ----

systems_for ()  # systems_for IMAGE
{
  local s
  for s in $systems; do
    case $1:$s in
      luks1:*) echo "$s" ;;
      luks2:file|luks2:nbd|luks2:dmcrypt*) echo "$s" ;;
      aes-*:dmcrypt) echo "$s" ;;
    esac
  done
}

plan=()                                   # "rep test image system"
for (( rep = 1; rep <= repeats; rep++ )); do
  for t in $io_tests; do
    has "$tests" "$t" || continue
    for img in "${images[@]}"; do
      for s in $(systems_for "$img"); do plan+=("$rep $t $img $s"); done
    done
  done
  for t in seq-read seq-write; do
    for img in "${cipher_images[@]}"; do plan+=("$rep $t $img dmcrypt"); done
  done
done

raw=$out/raw.csv expected=$work/expected.csv
echo "rep,image,system,test,metric,unit,value" > "$raw"
: > "$expected"
for p in "${plan[@]}"; do
  read -r rep t img s <<< "$p"
  [ "$rep" = 1 ] || continue
  for m in $(test_metrics "$t" "$s"); do
    echo "$img,$s,$t,${m%%:*},${m#*:}" >> "$expected"
  done
done

# ---- openssl's own speed: the crypto ceiling ----

crypto_list="aes-256-xts:enc aes-256-xts:dec aes-128-xts:enc aes-128-xts:dec"
crypto_list+=" aes-128-cbc:enc aes-128-cbc:dec aes-256-cbc:enc aes-256-cbc:dec"
[ $quick = 1 ] && crypto_list="aes-256-xts:enc"
if has "$tests" crypto; then
  echo "bench: openssl speed on 4 KiB buffers, one core"
  for c in $crypto_list; do
    dec=(); [ "${c#*:}" = dec ] && dec=(-decrypt)
    kbps=$(openssl speed -elapsed -seconds 1 -bytes 4096 "${dec[@]}" \
             -evp "${c%:*}" 2>/dev/null \
           | awk -v c="${c%:*}" 'toupper($1) == toupper(c) {
                                   sub(/k$/, "", $2); print $2 }')
    [ -n "$kbps" ] || { echo "bench: openssl speed ${c%:*} failed" >&2
                        continue; }
    mbps=$(awk -v k="$kbps" 'BEGIN { printf "%.6g", k / 1000 }')
    echo "cpu,openssl,${c/:/-},throughput,MB/s" >> "$expected"
    echo "1,cpu,openssl,${c/:/-},throughput,MB/s,$mbps" >> "$raw"
    if [ -n "$cpu_mhz" ]; then
      echo "cpu,openssl,${c/:/-},cycles,cycles/B" >> "$expected"
      awk -v f="$cpu_mhz" -v m="$mbps" -v c="${c/:/-}" 'BEGIN {
        printf "1,cpu,openssl,%s,cycles,cycles/B,%.4g\n", c, f / m }' \
        >> "$raw"
    fi
    echo "  ${c%:*} ${c#*:}: $mbps MB/s"
  done
fi

# ---- Run ----

total=${#plan[@]} i=0 failures=0
load_start=$(cut -d' ' -f1 /proc/loadavg)
echo "bench: $total measurements: $repeats repeat(s), $((size >> 20)) MiB," \
     "timed tests ${seconds} s, results in $out"
start_s=$SECONDS
for p in "${plan[@]}"; do
  read -r rep t img s <<< "$p"
  i=$((i + 1))
  log=$work/server.log
  figures=
  if start_server "$s" "$img" "$log"; then
    figures=$(run_test "$t" 2>"$work/client.log")
    rc=$?
  else
    rc=1
  fi
  stop_server
  if [ $rc -ne 0 ] || [ -z "$figures" ]; then
    failures=$((failures + 1))
    echo "[$i/$total] $s $t $img rep $rep: FAILED"
    for f in "$work/client.log" "$log"; do
      [ -s "$f" ] && tail -n 5 "$f" | sed 's/^/    | /'
    done
    continue
  fi
  while IFS=, read -r m u v; do
    echo "$rep,$img,$s,$t,$m,$u,$v" >> "$raw"
  done <<< "$figures"
  echo "[$i/$total] $s $t $img rep $rep: $(awk -F, '
    { v = $3 + 0; f = (v >= 100) ? "%.0f" : (v >= 1) ? "%.2f" : "%.3f"
      s = s (NR > 1 ? ", " : "") $1 " " sprintf(f, v) " " $2 }
    END { print s }' <<< "$figures" | sed 's/^throughput //;
                                          s/^iops //; s/^seeks //')"
done
echo "bench: measured in $((SECONDS - start_s)) s"
load_end=$(cut -d' ' -f1 /proc/loadavg)

# ---- Medians, table, charts ----

# results.csv: the expected rows in plan order, with median/min/max of
# their samples, NA where every sample failed.
awk -F, -v OFS=, '
  NR == FNR { key[++n] = $1 FS $2 FS $3 FS $4; unit[n] = $5; next }
  FNR > 1 { k = $2 FS $3 FS $4 FS $5; vals[k] = vals[k] " " $7 }
  END {
    print "image,system,test,metric,unit,median,min,max,repeats"
    for (r = 1; r <= n; r++) {
      c = split(vals[key[r]], v, " ")
      for (a = 2; a <= c; a++)              # insertion sort, c is small
        for (b = a; b > 1 && v[b - 1] + 0 > v[b] + 0; b--) {
          t = v[b]; v[b] = v[b - 1]; v[b - 1] = t }
      if (c == 0) { print key[r], unit[r], "NA", "NA", "NA", 0; continue }
      med = (c % 2) ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
      printf "%s,%s,%.6g,%.6g,%.6g,%d\n", key[r], unit[r], med, v[1], v[c], c
    }
  }' "$expected" "$raw" > "$out/results.csv"

# The table: per main image, one row per test and metric, one column per
# system, then dmcrypt's ratio to the unencrypted export and to each peer,
# and the filter-over-nbd chain's to the unencrypted chain.
{
  echo "$command_line"
  echo "$(date -u '+%F %H:%M UTC'), $(nproc) CPUs ($cpu_model)," \
       "load average $load_start at the start, $load_end at the end"
  echo "plugin sha256 $plugin_id..., filter sha256 $filter_id...," \
       "git $(git describe --always --dirty 2>/dev/null || echo '-')"
  echo "Medians of $repeats repeat(s); $((size >> 20)) MiB exports on" \
       "$(stat -f -c %T "$work"); timed tests $seconds s; MB/s = 10^6 B/s"
} > "$out/table.txt"
awk -F, '
  function short(s) {
    sub(/^dmcrypt-/, "", s); sub(/^luks-filter$/, "luks-flt", s)
    sub(/^qemu-nbd$/, "qemu", s)
    sub(/^nowwq$/, "no-wwq", s); sub(/^norwq$/, "no-rwq", s)
    sub(/^filter-nbd$/, "filt-nbd", s); return s }
  function fmt(v, u) {
    if (v == "" || v == "NA") return "-"
    if (u == "ms") return sprintf(v < 1 ? "%.3f" : "%.2f", v)
    if (u == "IOPS" && v >= 10000) return sprintf("%.1fk", v / 1000)
    if (u == "cycles/B") return sprintf("%.2f", v)
    if (u == "%") return sprintf("%.0f%%", v)
    return sprintf("%.0f", v) }
  function ratio(a, b) {
    if (a == "" || b == "" || a == "NA" || b == "NA" || b == 0) return "-"
    return sprintf("%.2fx", a / b) }
  function label(t, m, u) {
    if (m ~ /^(throughput|iops|seeks|cycles)$/) return t " " u
    if (m == "cpu") return t " CPU " u
    if (m == "back-cpu") return t " back " u
    return t " " m " " u }
  # A ratio column, headed HEAD: the figures of NUM over those of DEN.
  function pair(img, num, den, head) {
    if (!((img, num) in seen_sys) || !((img, den) in seen_sys)) return
    pnum[++np] = num; pden[np] = den; phead[np] = head
    pwidth[np] = length(head) > 8 ? length(head) : 8 }
  NR > 1 {
    img = $1; row = label($3, $4, $5)
    if (!(img in seen_img)) { seen_img[img] = 1; imgs[++ni] = img }
    if (!((img, $2) in seen_sys)) {
      seen_sys[img, $2] = 1; sys[img, ++ns[img]] = $2 }
    if (!((img, row) in seen_row)) {
      seen_row[img, row] = 1; rows[img, ++nr[img]] = row; unit[row] = $5 }
    val[img, $2, row] = $6
    if (img ~ /^aes-/) { cimg[++nc] = img; cval[img, $3, $4] = $6 }
  }
  END {
    for (k = 1; k <= ni; k++) {
      img = imgs[k]
      if (img != "luks1" && img != "luks2") continue
      printf "\n%s image\n%-24s", img, "test"
      for (j = 1; j <= ns[img]; j++) printf " %9s", short(sys[img, j])
      np = 0
      pair(img, "dmcrypt", "file", "dm/file")
      pair(img, "dmcrypt", "luks-filter", "dm/luks")
      pair(img, "dmcrypt", "qemu-nbd", "dm/qemu")
      pair(img, "dmcrypt-filter-nbd", "nbd", "filt-nbd/nbd")
      for (q = 1; q <= np; q++) printf " %" pwidth[q] "s", phead[q]
      printf "\n"
      for (r = 1; r <= nr[img]; r++) {
        row = rows[img, r]; printf "%-24s", row
        for (j = 1; j <= ns[img]; j++)
          printf " %9s", fmt(val[img, sys[img, j], row], unit[row])
        for (q = 1; q <= np; q++)
          printf " %" pwidth[q] "s", ratio(val[img, pnum[q], row], \
                                          val[img, pden[q], row])
        printf "\n"
      }
    }
    if (nc > 0) {
      printf "\ndmcrypt per cipher (LUKS2), read and write\n"
      printf "%-24s %9s %9s %8s %8s %8s %8s\n", "cipher-keybits", \
             "rd MB/s", "wr MB/s", "rd/file", "wr/file", "rd cyc/B", \
             "wr cyc/B"
      fr = val["luks2", "file", "seq-read MB/s"]
      fw = val["luks2", "file", "seq-write MB/s"]
      for (k = 1; k <= nc; k++) {
        img = cimg[k]; if (img in done) continue; done[img] = 1
        r = cval[img, "seq-read", "throughput"]
        w = cval[img, "seq-write", "throughput"]
        printf "%-24s %9s %9s %8s %8s %8s %8s\n", img, fmt(r), fmt(w), \
               ratio(r, fr), ratio(w, fw), \
               fmt(cval[img, "seq-read", "cpu"], "cycles/B"), \
               fmt(cval[img, "seq-write", "cpu"], "cycles/B")
      }
    }
    if (("cpu", "openssl") in seen_sys) {
      printf "\nopenssl speed, 4 KiB buffers, one core\n"
      for (r = 1; r <= nr["cpu"]; r++) {
        row = rows["cpu", r]
        printf "%-24s %9s\n", row, fmt(val["cpu", "openssl", row], unit[row])
      }
    }
  }' "$out/results.csv" >> "$out/table.txt"
cat >> "$out/table.txt" <<'EOF'

Columns: file = unencrypted nbdkit file plugin on a raw image; dmcrypt =
default settings; sorted, fifo = scheduler=; no-wwq, no-rwq =
no-write-workqueue=1, no-read-workqueue=1; null = the raw image through
dmcrypt's engine with cipher_null (everything but the cipher); filter =
the dmcrypt filter over the file plugin; nbd = nbdkit's nbd plugin in
front of a second nbdkit serving the raw image (file plugin); filt-nbd =
the dmcrypt filter over that chain, the encrypted image behind it;
luks-flt = nbdkit luks filter; qemu = qemu-nbd; busy = share of all
CPUs' time not idle during the copy (client, servers, kernel, anything
else); CPU = client and front server; back = a chain's back server
alone; dm/X = dmcrypt's figure divided by X's; filt-nbd/nbd =
filt-nbd's divided by nbd's, what encryption costs over nbd (for ms
rows, below 1 means quicker).  Seeker reads 512 bytes, or the export's
minimum block size when larger (4096 for dmcrypt on LUKS2).
EOF

# The server's CPU per GiB against openssl's XTS price: its own script,
# its own tables (appended), $out/cpu.csv, $out/cbc.csv and
# $out/writepath.csv; AES-XTS with each library's, side by side.
if has "$tests" server-cpu && has "$systems" dmcrypt; then
  cpu_quick=(); [ $quick = 1 ] && cpu_quick=(--quick)
  echo "bench: server CPU per GiB (tools/bench-cpu.sh)"
  { echo; echo "Server CPU per GiB (tools/bench-cpu.sh, cpu.csv, cbc.csv, writepath.csv)"
    "$topdir/tools/bench-cpu.sh" "${cpu_quick[@]}" --size "$size" \
      --repeats "$repeats" --out "$out" --workdir "$workbase" \
      --plugin "$plugin" --cipher-library openssl,libgcrypt
  } > "$work/cpu-table.txt" || { echo "bench: bench-cpu.sh failed" >&2
                                 failures=$((failures + 1)); }
  cat "$work/cpu-table.txt" >> "$out/table.txt"
fi
cat "$out/table.txt"

# Chart data: one cluster per CLUSTER value, one bar (median, min, max)
# per SERIES value, from results.csv rows that match IMAGE and TESTS.
chart_data ()  # chart_data OUT IMAGE-REGEX TEST:METRIC,... CLUSTER SERIES
{
  awk -F, -v img="$2" -v want=",$3," -v cf="$4" -v sf="$5" \
      -v nsfile="$work/nseries" '
    NR > 1 && $1 ~ ("^(" img ")$") && index(want, "," $3 ":" $4 ",") {
      c = (cf == "image") ? $1 : $3; s = (sf == "system") ? $2 : $3
      if (!(c in seen_c)) { seen_c[c] = 1; cl[++nc] = c }
      if (!(s in seen_s)) { seen_s[s] = 1; se[++ns] = s }
      v[c, s] = $6 " " $7 " " $8
    }
    END {
      if (nc == 0) exit 1
      printf "cluster"
      for (j = 1; j <= ns; j++) printf " %s min max", se[j]
      printf "\n"
      for (k = 1; k <= nc; k++) {
        printf "%s", cl[k]
        for (j = 1; j <= ns; j++)
          printf " %s", ((cl[k], se[j]) in v) ? v[cl[k], se[j]] : "NA NA NA"
        printf "\n"
      }
      print ns > nsfile
    }' "$out/results.csv" > "$1"
}

draw ()  # draw NAME TITLE YLABEL[:log] chart_data-args...
{
  local name=$1 title=$2 ylabel=${3%:log} logy=0
  [[ $3 == *:log ]] && logy=1
  shift 3
  chart_data "$out/$name.dat" "$@" || { rm -f "$out/$name.dat"; return 0; }
  [ $have_gnuplot = 1 ] || return 0
  gnuplot -e "data='$out/$name.dat'; out='$out/$name.png'" \
    -e "title='$title'; ylabel='$ylabel'; logy=$logy" \
    -e "nseries=$(cat "$work/nseries")" \
    "$plotter" 2>"$work/gnuplot.log" \
    || { echo "bench: gnuplot failed for $name:" >&2
         cat "$work/gnuplot.log" >&2; failures=$((failures + 1)); }
}

# The four fio tests with METRIC, as chart_data wants them.
fio_tms ()  # fio_tms METRIC
{
  local t
  for t in randread-qd1 randread-qd32 randwrite-qd1 randwrite-qd32; do
    printf '%s:%s,' "$t" "$1"
  done
}
for img in "${images[@]}"; do
  draw "seq-$img" "Sequential throughput, $img image (nbdcopy)" "MB/s" \
    "$img" "seq-read:throughput,seq-write:throughput" test system
  draw "iops-$img" "Random 4 KiB IOPS, $img image (fio nbd engine)" "IOPS" \
    "$img" "$(fio_tms iops)" test system
  draw "latency-$img" "Random 4 KiB p99 completion latency, $img image" \
    "ms (log scale):log" "$img" "$(fio_tms p99)fairness:read-p99" test system
  draw "seeker-$img" "Seeker, $img image (random reads, queue depth 1)" \
    "seeks/s" "$img" "seeker:seeks" test system
done
if [ ${#cipher_images[@]} -gt 0 ]; then
  draw ciphers "dmcrypt per cipher and key size (LUKS2)" "MB/s" "aes-.*" \
    "seq-read:throughput,seq-write:throughput" image test
fi

echo "bench: results.csv, raw.csv, table.txt and charts in $out"
ls "$out"/*.png 2>/dev/null | sed 's/^/  /'
if [ $failures -gt 0 ]; then
  echo "bench: $failures measurement(s) failed" >&2
  exit 1
fi
exit 0
