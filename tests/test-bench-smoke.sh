#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench's harness, tools/bench.sh, on tiny images: it must measure
# every system, test and image asked for, write every CSV row with
# numbers and units, draw the charts and print the table.  Speeds are
# not judged here: only that each figure exists and is a positive number,
# and that the filter over nbd is set against the unencrypted nbd chain.
# The quick run measures the systems of the table's ratios (file,
# dmcrypt, the filter over nbd and the nbd chain, the luks filter,
# qemu-nbd) for 0.1 s each, and the ciphers test on two of its images
# (XTS and CBC-ESSIV); the full run (DMCRYPT_TEST_FULL=1) adds
# dmcrypt-fifo and the filter over the file plugin, for 0.2 s each, and
# all six cipher images.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy nbdinfo cryptsetup fio qemu-nbd gnuplot openssl
plugin_built_or_fail
scratch

bench="$topdir/tools/bench.sh"
if full_run; then
  systems="file dmcrypt dmcrypt-fifo dmcrypt-filter nbd dmcrypt-filter-nbd"
  systems+=" luks-filter qemu-nbd"
  seconds=0.2
  ciphers="aes-xts-plain64/256 aes-xts-plain64/512 aes-cbc-essiv:sha256/128"
  ciphers+=" aes-cbc-essiv:sha256/256 aes-xts-plain/256 aes-xts-plain/512"
  echo "full run: $systems, ${seconds} s each; all ciphers"
else
  systems="file dmcrypt nbd dmcrypt-filter-nbd luks-filter qemu-nbd"
  seconds=0.1
  ciphers="aes-xts-plain64/512 aes-cbc-essiv:sha256/256"
  echo "quick run: $systems, ${seconds} s each; $ciphers;" \
       "DMCRYPT_TEST_FULL=1 for dmcrypt-fifo, dmcrypt-filter, all ciphers"
fi

# Bad options are refused before any work.
"$bench" --systems file,nosuch --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "an unknown system was accepted"
"$bench" --tests seq-read,nosuch --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "an unknown test was accepted"
"$bench" --ciphers aes-xts-plain64/256,aes-ecb/128 --out "$tmp/bad" \
  >/dev/null 2>&1 && fail "an unknown cipher was accepted"
"$bench" --size 1K --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "a 1K size was accepted"

start=$SECONDS
timeout 300 "$bench" --quick --size 16M --time "$seconds" \
  --systems "${systems// /,}" --ciphers "${ciphers// /,}" \
  --out "$tmp/out" --workdir "$tmp" \
  > "$tmp/stdout" 2>&1
rc=$?
cat "$tmp/stdout"
echo "bench.sh took $((SECONDS - start)) s"
[ $rc -eq 0 ] || fail "bench.sh exited with $rc"

csv="$tmp/out/results.csv"
[ -s "$csv" ] || fail "no results.csv"
header="image,system,test,metric,unit,median,min,max,repeats"
expect_equal "CSV header" "$header" "$(head -n 1 "$csv")"

# Every row that must be there, written out here rather than taken from
# the harness: image system test metric unit.
expected=()
tests_metrics=(
  "seq-read throughput MB/s" "seq-write throughput MB/s"
  "seq-read busy %" "seq-write busy %"
  "randread-qd1 iops IOPS" "randread-qd1 p50 ms" "randread-qd1 p99 ms"
  "randread-qd32 iops IOPS" "randread-qd32 p50 ms" "randread-qd32 p99 ms"
  "randwrite-qd1 iops IOPS" "randwrite-qd1 p50 ms" "randwrite-qd1 p99 ms"
  "randwrite-qd32 iops IOPS" "randwrite-qd32 p50 ms"
  "randwrite-qd32 p99 ms"
  "seeker seeks seeks/s" "seeker access ms"
  "fairness read-p99 ms" "fairness write MB/s"
)
# With a known clock rate, the copies also report CPU cycles per byte.
cycles=()
grep -q '^cpu MHz' /proc/cpuinfo \
  && cycles=("seq-read cpu cycles/B" "seq-write cpu cycles/B")
tests_metrics+=("${cycles[@]}")
for s in $systems; do
  tms=("${tests_metrics[@]}")
  # A chain's back server's CPU apart from the measured front server's.
  case $s in
    nbd|dmcrypt-filter-nbd) tms+=("${cycles[@]/cpu/back-cpu}") ;;
  esac
  for tm in "${tms[@]}"; do
    expected+=("luks1 $s $tm")
    case $s in file|nbd|dmcrypt*) expected+=("luks2 $s $tm") ;; esac
  done
done
for c in $ciphers; do
  c=${c/\//-}
  expected+=("$c dmcrypt seq-read throughput MB/s"
             "$c dmcrypt seq-write throughput MB/s")
  for tm in "${cycles[@]}"; do expected+=("$c dmcrypt $tm"); done
done
expected+=("cpu openssl aes-256-xts-enc throughput MB/s")

# Every expected row once, in one pass over results.csv: its unit, a
# number in median, min and max, min <= median <= max, one repeat.
printf '%s\n' "${expected[@]}" > "$tmp/expected"
why=$(awk -F, '
  NR == FNR { split($0, w, " "); k = w[1] "," w[2] "," w[3] "," w[4]
              want[k] = $0; unit[k] = w[5]; order[++n] = k; next }
  FNR > 1 { k = $1 "," $2 "," $3 "," $4; seen[k]++; row[k] = $0 }
  END {
    num = "^[0-9]+(\\.[0-9]+)?(e[-+]?[0-9]+)?$"
    for (i = 1; i <= n; i++) {
      k = order[i]; e = want[k]
      if (seen[k] != 1) { printf "%d rows for \047%s\047 in results.csv\n", seen[k], e; exit }
      split(row[k], f, ",")
      if (f[5] != unit[k]) { printf "%s: unit \047%s\047\n", e, f[5]; exit }
      for (j = 6; j <= 8; j++)
        if (f[j] !~ num) { printf "%s: \047%s\047 is not a number\n", e, f[j]; exit }
      # CPU time is counted in clock ticks: a tiny copy may cost none.
      low = (unit[k] == "cycles/B" || unit[k] == "%") ? -1 : 0
      if (!(f[7] + 0 > low && f[7] + 0 <= f[6] + 0 && f[6] + 0 <= f[8] + 0)) {
        printf "%s: not %s < min %s <= median %s <= max %s\n", e, low, f[7], f[6], f[8]; exit }
      if (f[9] != "1") { printf "%s: %s repeats, expected 1\n", e, f[9]; exit }
    }
  }' "$tmp/expected" "$csv")
[ -z "$why" ] || fail "$why"
rows=$(( $(wc -l < "$csv") - 1 ))
echo "  results.csv: $rows rows, ${#expected[@]} required, all numeric"
[ "$rows" -ge "${#expected[@]}" ] || fail "too few rows"
# Rows for systems not asked for would mean --systems is ignored.
others="dmcrypt-sorted dmcrypt-nowwq dmcrypt-norwq dmcrypt-null"
full_run || others+=" dmcrypt-fifo dmcrypt-filter"
grep -q -E "^[^,]*,(${others// /|})," "$csv" \
  && fail "results for a system that was not asked for"
# Every sample of raw.csv is in a row of results.csv, one repeat each.
expect_equal "raw samples" "$rows" $(( $(wc -l < "$tmp/out/raw.csv") - 1 ))

# Progress lines, the table with units and ratios.
grep -q -E '^\[1/[0-9]+\] file seq-read luks1 rep 1: [0-9.]+ MB/s' \
  "$tmp/stdout" || fail "no progress line for the first measurement"
total=$(grep -o -E '^\[1/[0-9]+\]' "$tmp/stdout" | grep -o -E '/[0-9]+')
grep -q "^\[${total#/}$total\] " "$tmp/stdout" \
  || fail "no progress line for the last measurement"
table="$tmp/out/table.txt"
for want in 'luks1 image' 'luks2 image' 'dm/file' 'dm/luks' 'dm/qemu' \
            'seq-read MB/s' 'randread-qd32 IOPS' 'randwrite-qd1 p99 ms' \
            'seeker seeks/s' 'fairness read-p99 ms' 'dmcrypt per cipher' \
            'aes-cbc-essiv:sha256-256' 'openssl speed'; do
  grep -q -F -- "$want" "$table" || fail "table lacks '$want'"
  grep -q -F -- "$want" "$tmp/stdout" || fail "printed table lacks '$want'"
done
grep -E '^seq-read MB/s' "$table" | head -n 1 \
  | grep -q -E '[0-9.]+x +[0-9.]+x +[0-9.]+x +[0-9.]+x$' \
  || fail "luks1 seq-read row lacks four ratios"
if [ ${#cycles[@]} -gt 0 ]; then
  grep -q -E '^seq-write back cycles/B +- ' "$table" \
    || fail "table lacks the back servers' CPU row"
fi
# The last column, filt-nbd/nbd, is the filter over nbd divided by the
# unencrypted nbd chain (not by file), on both images.
for img in luks1 luks2; do
  section=$(sed -n "/^$img image\$/,/^\$/p" "$table")
  expect_equal "$img: the last column" filt-nbd/nbd \
    "$(grep '^test ' <<< "$section" | awk '{ print $NF }')"
  for t in seq-read seq-write; do
    want=$(awk -F, -v img="$img" -v t="$t" '
      $1 == img && $3 == t && $4 == "throughput" { v[$2] = $6 }
      END { printf "%.2fx", v["dmcrypt-filter-nbd"] / v["nbd"] }' "$csv")
    expect_equal "$img $t MB/s filt-nbd/nbd" "$want" \
      "$(grep "^$t MB/s " <<< "$section" | awk '{ print $NF }')"
  done
done

# Charts: real PNG files.
for png in seq-luks1 iops-luks1 latency-luks1 seeker-luks1 seq-luks2 \
           iops-luks2 latency-luks2 seeker-luks2 ciphers; do
  f="$tmp/out/$png.png"
  [ -s "$f" ] || fail "no $png.png"
  [ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
    || fail "$png.png is not a PNG"
  [ "$(stat -c %s "$f")" -gt 5000 ] || fail "$png.png is nearly empty"
done
echo "  charts: all 9 PNG files drawn"

# The images were scratch files: nothing of them stays behind.
ls -d "$tmp"/dmcrypt-bench.* 2>/dev/null && fail "work directory left behind"
# Nor do its servers, the chains' back servers among them.
pgrep -a -f -- "-U $tmp/" && fail "servers left running"
echo PASS
