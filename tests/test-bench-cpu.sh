#!/usr/bin/env bash
# tools/bench-cpu.sh (make bench-cpu) at a tiny size: it must refuse bad
# options, measure every image, cipher and direction of its quick set,
# and print each ratio as the arithmetic of the figures beside it
# (the file plugin's figure pooled over all its runs in a direction):
# (dmcrypt - file) / openssl, with the cipher's own cost as the server
# sampled it (a positive figure on every row) and the library the server
# says it ran (every case once per --cipher-library value), and the
# cipher_null write path's rows (dmcrypt / file), and each CBC-ESSIV
# row against the XTS row of its AES key size, sector size and library
# (dmcrypt / xts).  No figure is judged for speed.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy cryptsetup openssl numfmt
plugin_built_or_fail
scratch

bench="$topdir/tools/bench-cpu.sh"
"$bench" --size 1K --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "a 1K size was accepted"
"$bench" --repeats 0 --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "0 repeats were accepted"
"$bench" --nosuch --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "an unknown option was accepted"
"$bench" --plugin "$tmp/missing.so" --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "a missing plugin was accepted"
"$bench" --cipher-library openssl,nettle --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "an unknown cipher library was accepted"

# An nbdkit on PATH that logs each server's arguments, so that the test
# sees what every row measured.
real_nbdkit=$(command -v nbdkit)
mkdir -p "$tmp/bin"
cat > "$tmp/bin/nbdkit" <<EOF
#!/bin/sh
echo "\$*" >> "$tmp/servers.log"
exec "$real_nbdkit" "\$@"
EOF
chmod +x "$tmp/bin/nbdkit"

PATH=$tmp/bin:$PATH timeout 300 "$bench" --quick --size 4M --out "$tmp/out" \
  --workdir "$tmp" --cipher-library openssl,libgcrypt > "$tmp/stdout" 2>&1
rc=$?
cat "$tmp/stdout"
[ $rc -eq 0 ] || fail "bench-cpu.sh exited with $rc"

csv="$tmp/out/cpu.csv"
expect_equal "CSV header" \
  "image,cipher,key_bits,sector,direction,file_ms_per_gib,ms_per_gib,openssl_ms_per_gib,ratio,cipher_ms_per_gib,cipher_library" \
  "$(head -n 1 "$csv")"
# The quick set, written out here rather than taken from the script.
expected=("luks1 aes-xts-plain64 512 512" "luks2 aes-xts-plain64 512 4096"
          "plain aes-xts-plain64 512 1024" "plain aes-xts-plain64 512 2048"
          "plain aes-xts-plain64 256 4096"
          "plain aes-cbc-essiv:sha256 128 4096"
          "plain aes-cbc-essiv:sha256 256 4096")
# Every case once with each library.
expect_equal "rows" $(( ${#expected[@]} * 2 * 2 )) $(( $(wc -l < "$csv") - 1 ))
number='^[0-9]+(\.[0-9]+)?$'
for e in "${expected[@]}"; do
  read -r img cipher bits sector <<< "$e"
  for lib in openssl libgcrypt; do
    for dir in write read; do
      line=$(grep "^$img,$cipher,$bits,$sector,$dir,.*,$lib\$" "$csv") \
        || fail "no row for $e $dir $lib"
      IFS=, read -r _ _ _ _ _ file_ms dm_ms ossl ratio cm _ <<< "$line"
      for v in "$file_ms" "$dm_ms" "$ossl" "$cm"; do
        [[ $v =~ $number ]] || fail "$e $dir: '$v' is not a number"
      done
      awk -v c="$cm" 'BEGIN { exit !(c > 0) }' \
        || fail "$e $dir: the cipher cost nothing ($cm ms/GiB)"
      [[ $ratio =~ ^-?[0-9]+\.[0-9][0-9]$ ]] \
        || fail "$e $dir: ratio '$ratio' is not a number with two decimals"
      want=$(awk -v f="$file_ms" -v d="$dm_ms" -v o="$ossl" \
               'BEGIN { printf "%.2f", (d - f) / o }')
      expect_equal "$e $dir ratio" "$want" "$ratio"
      # The printed table says the same as the CSV, with its units.
      grep -Eq "^$img +$cipher +$bits +$sector +$dir +$file_ms +$dm_ms +$ossl +$ratio +$cm +$lib\$" \
        "$tmp/stdout" || fail "$e $dir $lib: the printed row differs from the CSV"
    done
  done
done
grep -q 'ms/GiB' "$tmp/stdout" || fail "the table gives no units"
# The file plugin's figure is one per direction, the median of its runs
# beside every case: 14 cases and 2 cipher_null tables, one repeat.
for dir in write read; do
  expect_equal "file figures for $dir rows" 1 \
    "$(awk -F, -v d="$dir" 'NR > 1 && $5 == d { print $6 }' "$csv" | sort -u | wc -l)"
done
grep -q 'file: the median of all 16 runs of the file plugin' "$tmp/stdout" \
  || fail "the table does not say how many file plugin runs it pooled"
expect_equal "progress lines" 32 \
  "$(grep -c '^bench-cpu: \[[0-9]*/32\] .* ms/GiB$' "$tmp/stdout")"
# XTS's price is that of its AES key: half the XTS key.
x256=$(grep '^luks1,' "$csv" | head -n 1 | cut -d, -f8)
c256=$(grep '^plain,aes-cbc-essiv:sha256,256,' "$csv" | head -n 1 | cut -d, -f8)
expect_equal "aes-256 price for xts-512 and cbc-256" "$x256" "$c256"

# Every dmcrypt row ran once per direction (one repeat), the file
# plugin once before each, and the two cipher_null rows with their own
# settings.
servers=$tmp/servers.log
expect_equal "file plugin servers" 32 "$(grep -c ' file /' "$servers")"
expect_equal "servers with cipher-library=libgcrypt" 14 \
  "$(grep -c ' cipher-library=libgcrypt$' "$servers")"
expect_equal "servers with cipher-library=openssl" 14 \
  "$(grep -c ' cipher-library=openssl$' "$servers")"
null_table='file=[^ ]*/raw.img table=+[^ ]*/null-table'
expect_equal "cipher_null servers, default stage" 2 \
  "$(grep -c "$null_table\$" "$servers")"
expect_equal "cipher_null servers, no-write-workqueue=1" 2 \
  "$(grep -c "$null_table no-write-workqueue=1\$" "$servers")"

# CBC-ESSIV against XTS of its AES key size: CBC-128 against the plain
# table's 256-bit XTS key, CBC-256 against LUKS2's 512-bit one (the
# quick set's only XTS at 4096-byte sectors with that key), each with
# the same library, over = dmcrypt / xts from the rows of cpu.csv.
ccsv="$tmp/out/cbc.csv"
expect_equal "CBC CSV header" \
  "cipher,key_bits,sector,cipher_library,direction,ms_per_gib,xts_ms_per_gib,over_xts" \
  "$(head -n 1 "$ccsv")"
expect_equal "CBC rows" 8 $(( $(wc -l < "$ccsv") - 1 ))
for pair in "128 plain,aes-xts-plain64,256" "256 luks2,aes-xts-plain64,512"; do
  read -r bits xts <<< "$pair"
  for lib in openssl libgcrypt; do
    for dir in write read; do
      cbc_ms=$(grep "^plain,aes-cbc-essiv:sha256,$bits,4096,$dir,.*,$lib\$" \
                 "$csv" | cut -d, -f7)
      xts_ms=$(grep "^$xts,4096,$dir,.*,$lib\$" "$csv" | cut -d, -f7)
      [[ $cbc_ms =~ $number && $xts_ms =~ $number ]] \
        || fail "CBC-$bits $dir $lib: no rows to compare ('$cbc_ms', '$xts_ms')"
      want=$(awk -v d="$cbc_ms" -v x="$xts_ms" 'BEGIN { printf "%.2f", d / x }')
      expect_equal "CBC-$bits $dir $lib row" \
        "aes-cbc-essiv:sha256,$bits,4096,$lib,$dir,$cbc_ms,$xts_ms,$want" \
        "$(grep "^aes-cbc-essiv:sha256,$bits,4096,$lib,$dir," "$ccsv")"
      grep -Eq "^aes-cbc-essiv:sha256 +$bits +4096 +$lib +$dir +$cbc_ms +$xts_ms +$want\$" \
        "$tmp/stdout" || fail "CBC-$bits $dir $lib: the printed row differs from the CSV"
    done
  done
done

# The write path without a cipher: both settings, both directions,
# over = dmcrypt / file.
wcsv="$tmp/out/writepath.csv"
expect_equal "write path CSV header" \
  "table,direction,file_ms_per_gib,ms_per_gib,over_file" "$(head -n 1 "$wcsv")"
expect_equal "write path rows" 4 $(( $(wc -l < "$wcsv") - 1 ))
for label in default no-write-workqueue=1; do
  for dir in write read; do
    line=$(grep "^$label,$dir," "$wcsv") || fail "no write path row $label $dir"
    IFS=, read -r _ _ file_ms dm_ms over <<< "$line"
    for v in "$file_ms" "$dm_ms"; do
      [[ $v =~ $number ]] || fail "$label $dir: '$v' is not a number"
    done
    want=$(awk -v f="$file_ms" -v d="$dm_ms" \
             'BEGIN { if (f > 0) printf "%.2f", d / f; else print "-" }')
    expect_equal "$label $dir over" "$want" "$over"
    grep -Eq "^$label +$dir +$file_ms +$dm_ms +$over\$" "$tmp/stdout" \
      || fail "$label $dir: the printed row differs from the CSV"
  done
done
exit 0
