#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tables of tools/bench-cpu.sh, computed from its runs.csv alone:
#
#   tools/bench-cpu-tables.sh RUNS.csv OUTDIR
#
# RUNS.csv has one row a run: run,image,cipher,key_bits,sector,library,
# direction,ms_per_gib,cipher_ms_per_gib,cipher_library, where run is
# openssl (cipher aes-128-xts or aes-256-xts, its price per GiB at 4096
# bytes; hmac-sha256 or aes-256-gcm, at the sector size), file
# (the unencrypted file plugin), dmcrypt (image, cipher, key bits,
# sector size, the cipher-library= asked for or "-", and what the
# server measured and said) or null (cipher_null: image null or
# null-nowq, cipher its label).  A dmcrypt case of image luks2i is a
# LUKS2 volume with integrity, its cipher "aes-xts-plain64/hmac-sha256"
# (key bits: XTS's and the MAC's) or "aes-gcm-random/aead": its openssl
# figure in cpu.csv is the bound, XTS's price plus HMAC-SHA256's at its
# sector size, or AES-256-GCM's.  Writes OUTDIR/cpu.csv, cbc.csv,
# integrity.csv and writepath.csv and prints them as tables: a figure is
# the median of its
# runs, the file plugin's the median of all its runs in a direction, and
# a quotient whose divisor is not above zero is "-".
set -u
set -o pipefail
export LC_ALL=C

die () { echo "bench-cpu: $*" >&2; exit 1; }
[ $# -eq 2 ] || die "usage: tools/bench-cpu-tables.sh RUNS.csv OUTDIR"
runs=$1 out=$2
header="run,image,cipher,key_bits,sector,library,direction,ms_per_gib,cipher_ms_per_gib,cipher_library"
[ "$(head -n 1 "$runs" 2>/dev/null)" = "$header" ] \
  || die "$runs is not a runs.csv of tools/bench-cpu.sh (its header differs)"
mkdir -p "$out" || die "cannot make $out"

# The median of the numbers in column COL of the rows whose first
# columns are KEY (comma-separated, a prefix of the row); "-" if none.
median_of ()  # median_of COL KEY
{
  awk -F, -v col="$1" -v key="$2," \
    'substr($0, 1, length(key)) == key && $col ~ /^-?[0-9.]+$/ { print $col }' \
    "$runs" | sort -g \
    | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'
}
# How many runs have KEY as their first columns.
count_of () { awk -F, -v key="$1," 'substr($0, 1, length(key)) == key' "$runs" | wc -l; }
# A quotient with two decimals, or "-" when the divisor is not above
# zero or either side is not a number.
quotient ()  # quotient NUMERATOR DIVISOR
{
  awk -v n="$1" -v d="$2" 'BEGIN {
    num = "^-?[0-9]+(\\.[0-9]+)?$"
    if (n ~ num && d ~ num && d + 0 > 0) printf "%.2f\n", n / d
    else print "-" }'
}
difference () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f\n", a - b }'; }
# A sum with one decimal, or "-" when either side is not a number.
sum ()  # sum A B
{
  awk -v a="$1" -v b="$2" 'BEGIN {
    num = "^-?[0-9]+(\\.[0-9]+)?$"
    if (a ~ num && b ~ num) printf "%.1f\n", a + b; else print "-" }'
}

# The cases, in the order they ran: "IMAGE CIPHER BITS SECTOR LIBRARY".
mapfile -t cases < <(awk -F, '$1 == "dmcrypt" && !seen[$2 FS $3 FS $4 FS $5 FS $6]++ {
                                print $2, $3, $4, $5, $6 }' "$runs")
mapfile -t null_cases < <(awk -F, '$1 == "null" && !seen[$2 FS $3]++ { print $2, $3 }' "$runs")
[ ${#cases[@]} -gt 0 ] || [ ${#null_cases[@]} -gt 0 ] || die "$runs holds no runs"
declare -A openssl_ms file_ms
for bits in 128 256; do
  openssl_ms[$bits]=$(median_of 8 "openssl,,aes-$bits-xts,$bits")
done
for dir in write read; do
  file_ms[$dir]=$(median_of 8 "file,,,,,-,$dir")
done
file_n=$(count_of "file,,,,,-,write")
key_of () { local IFS=,; echo "dmcrypt,$*"; }  # key_of IMAGE CIPHER BITS SECTOR LIBRARY DIRECTION
# What the server said its cipher library was, in its last run.
library_of ()
{
  awk -F, -v key="$1," 'substr($0, 1, length(key)) == key { l = $10 } END { print l == "" ? "-" : l }' "$runs"
}

csv=$out/cpu.csv
echo "image,cipher,key_bits,sector,direction,file_ms_per_gib,ms_per_gib,openssl_ms_per_gib,ratio,cipher_ms_per_gib,cipher_library" > "$csv"
row_format='%-6s %-27s %4s %6s %-5s %9s %9s %9s %6s %9s %s\n'
if [ ${#cases[@]} -gt 0 ]; then
  # shellcheck disable=SC2059
  printf "$row_format" image cipher bits sector dir "file" dmcrypt openssl \
    ratio cipher library
  # shellcheck disable=SC2059
  printf "$row_format" "" "" "" bytes "" ms/GiB ms/GiB ms/GiB "x" ms/GiB ""
fi
# What the MAC or the AEAD of an integrity case costs OpenSSL alone.
mac_price ()  # mac_price CIPHER SECTOR
{
  case $1 in
    */hmac-sha256) median_of 8 "openssl,,hmac-sha256,256,$2" ;;
    aes-gcm-random/aead) median_of 8 "openssl,,aes-256-gcm,256,$2" ;;
    *) echo - ;;
  esac
}
declare -A case_ms lib_of
repeats=0
for c in "${cases[@]}"; do
  read -r img cipher bits sector asked <<< "$c"
  # XTS splits its key in two: the AES key is half of it.
  aes_bits=$bits
  [[ $cipher == *-xts-* ]] && aes_bits=$(( bits / 2 ))
  ossl=${openssl_ms[$aes_bits]:--}
  # With integrity: XTS's price plus the MAC's (a 256-bit MAC key after
  # XTS's), or the AEAD's alone.
  case $cipher in
    aes-xts-plain64/hmac-sha256)
      ossl=$(sum "${openssl_ms[$(( (bits - 256) / 2 ))]:--}" \
               "$(mac_price "$cipher" "$sector")") ;;
    */*) ossl=$(mac_price "$cipher" "$sector") ;;
  esac
  for dir in write read; do
    key=$(key_of "$img" "$cipher" "$bits" "$sector" "$asked" "$dir")
    f=${file_ms[$dir]} d=$(median_of 8 "$key") cm=$(median_of 9 "$key")
    lib=$(library_of "$key")
    n=$(count_of "$key")
    [ "$n" -gt "$repeats" ] && repeats=$n
    case_ms[$c $dir]=$d lib_of[$c $dir]=$lib
    ratio=-
    [ "$d" = - ] || [ "$f" = - ] || ratio=$(quotient "$(difference "$d" "$f")" "$ossl")
    # shellcheck disable=SC2059
    printf "$row_format" "$img" "$cipher" "$bits" "$sector" "$dir" "$f" \
      "$d" "$ossl" "$ratio" "$cm" "$lib"
    echo "$img,$cipher,$bits,$sector,$dir,$f,$d,$ossl,$ratio,$cm,$lib" >> "$csv"
  done
done
if [ ${#cases[@]} -gt 0 ]; then
  echo "ratio = (dmcrypt - file) / openssl: the server's extra CPU per GiB" \
       "over the unencrypted file plugin, in units of openssl speed's" \
       "aes-{128,256}-xts (4 KiB buffers, one core) of the same AES key size;" \
       "dmcrypt: the median of $repeats run(s) of the case; file: the median" \
       "of all $file_n runs of the file plugin in that direction, one before" \
       "each run of dmcrypt; cipher: the cipher's own CPU per GiB inside" \
       "the server (its sampled clock, the median of the runs), the rest of" \
       "dmcrypt - file being the engine's and the write path's; library:" \
       "whose block cipher the server ran (cipher-library=); luks2i: LUKS2" \
       "with integrity, whose openssl figure is XTS's price plus" \
       "HMAC-SHA256's at its sector size, or AES-256-GCM's, and whose" \
       "AEAD the cipher clock does not see (-)"
fi

# CBC-ESSIV against XTS of the same AES key size, sector size and
# library (a plain table's XTS where there is one, else a LUKS image's).
declare -A xts_of
for c in "${cases[@]}"; do
  read -r img cipher bits sector lib <<< "$c"
  [[ $cipher == aes-xts-plain64 ]] || continue
  key="$(( bits / 2 )) $sector $lib"
  if [ -z "${xts_of[$key]:-}" ] || [ "$img" = plain ]; then
    xts_of[$key]=$c
  fi
done
ccsv=$out/cbc.csv
echo "cipher,key_bits,sector,cipher_library,direction,ms_per_gib,xts_ms_per_gib,over_xts" > "$ccsv"
cbc_format='%-22s %4s %6s %-9s %-5s %9s %9s %6s\n'
cbc_header=0
for c in "${cases[@]}"; do
  read -r img cipher bits sector lib <<< "$c"
  x=${xts_of[$bits $sector $lib]:-}
  [[ $cipher == aes-cbc-* && -n $x ]] || continue
  if [ $cbc_header = 0 ]; then
    echo
    # shellcheck disable=SC2059
    printf "$cbc_format" cipher bits sector library dir dmcrypt xts over
    # shellcheck disable=SC2059
    printf "$cbc_format" "" "" bytes "" "" ms/GiB ms/GiB "x"
    cbc_header=1
  fi
  for dir in write read; do
    d=${case_ms[$c $dir]} xd=${case_ms[$x $dir]} lib=${lib_of[$c $dir]}
    over=$(quotient "$d" "$xd")
    # shellcheck disable=SC2059
    printf "$cbc_format" "$cipher" "$bits" "$sector" "$lib" "$dir" "$d" \
      "$xd" "$over"
    echo "$cipher,$bits,$sector,$lib,$dir,$d,$xd,$over" >> "$ccsv"
  done
done
if [ $cbc_header = 1 ]; then
  echo
  echo "over = dmcrypt / xts: a CBC-ESSIV table's CPU per GiB over that of" \
       "aes-xts-plain64 with the same AES key size (an XTS key twice as" \
       "long), sector size and library, in the same run"
fi

# Integrity against the XTS row of the same AES key size and sector
# size (without integrity), of the library asked for, else of the
# default, else of OpenSSL (whose AES the AEAD runs).
icsv=$out/integrity.csv
echo "cipher,key_bits,sector,direction,ms_per_gib,xts_ms_per_gib,over_xts,extra_ms_per_gib,mac_openssl_ms_per_gib" > "$icsv"
int_format='%-28s %4s %6s %-5s %9s %9s %6s %9s %9s\n'
int_header=0
for c in "${cases[@]}"; do
  read -r img cipher bits sector lib <<< "$c"
  [ "$img" = luks2i ] || continue
  aes_bits=256
  [[ $cipher == */hmac-sha256 ]] && aes_bits=$(( (bits - 256) / 2 ))
  x=
  for l in "$lib" - openssl; do
    x=${xts_of[$aes_bits $sector $l]:-}
    [ -z "$x" ] || break
  done
  if [ $int_header = 0 ]; then
    echo
    # shellcheck disable=SC2059
    printf "$int_format" "integrity" bits sector dir dmcrypt xts over \
      extra mac
    # shellcheck disable=SC2059
    printf "$int_format" "" "" bytes "" ms/GiB ms/GiB "x" ms/GiB ms/GiB
    int_header=1
  fi
  mac=$(mac_price "$cipher" "$sector")
  for dir in write read; do
    d=${case_ms[$c $dir]} xd=-
    [ -z "$x" ] || xd=${case_ms[$x $dir]}
    over=$(quotient "$d" "$xd") extra=-
    [ "$over" = - ] || extra=$(sum "$d" "-$xd")
    # shellcheck disable=SC2059
    printf "$int_format" "$cipher" "$bits" "$sector" "$dir" "$d" "$xd" \
      "$over" "$extra" "$mac"
    echo "$cipher,$bits,$sector,$dir,$d,$xd,$over,$extra,$mac" >> "$icsv"
  done
done
if [ $int_header = 1 ]; then
  echo
  echo "over = dmcrypt / xts: a LUKS2 volume with integrity (dm-crypt's" \
       "AEAD over dm-integrity's journal) against aes-xts-plain64 of the" \
       "same AES key size and sector size without integrity, in the same" \
       "run; extra = dmcrypt - xts; mac: what openssl speed's HMAC-SHA256" \
       "or AES-256-GCM (one core, buffers of the sector size) costs per" \
       "GiB alone"
fi

# over = dmcrypt / file: the engine's and the write path's own cost.
wcsv=$out/writepath.csv
echo "table,direction,file_ms_per_gib,ms_per_gib,over_file" > "$wcsv"
[ ${#null_cases[@]} -gt 0 ] || exit 0
echo
printf '%-26s %-5s %9s %9s %6s\n' "cipher_null table" dir "file" dmcrypt over
printf '%-26s %-5s %9s %9s %6s\n' "" "" ms/GiB ms/GiB "x"
for c in "${null_cases[@]}"; do
  read -r img label <<< "$c"
  for dir in write read; do
    f=${file_ms[$dir]} d=$(median_of 8 "null,$img,$label,,,-,$dir")
    over=$(quotient "$d" "$f")
    printf '%-26s %-5s %9s %9s %6s\n' "$label" "$dir" "$f" "$d" "$over"
    echo "$label,$dir,$f,$d,$over" >> "$wcsv"
  done
done
echo
echo "over = dmcrypt / file: the engine's and the write path's own CPU per" \
     "GiB, with the identity cipher, over the unencrypted file plugin's"
