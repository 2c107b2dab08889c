#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tools/bench-cpu.sh (make bench-cpu): it must refuse bad options, run
# every image, cipher, library and direction of its quick set with the
# servers it names, and record each run in runs.csv; its tables are
# checked on figures the test chose (a fixed runs.csv through --from),
# never on what this machine measured, so that a fast or a loaded
# machine gives the same verdict.  The arithmetic: ratio = (dmcrypt -
# file) / openssl, the file plugin's figure pooled over all its runs in
# a direction; CBC-ESSIV over the XTS row of its AES key size, sector
# size and library; the cipher_null rows over the file plugin; medians
# of the runs; "-" where a divisor is not above zero; a LUKS2 case with
# integrity bound by OpenSSL's XTS plus HMAC-SHA256 (or AES-256-GCM) at
# its sector size, and set against the XTS row of its AES key size and
# sector size.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy cryptsetup openssl numfmt xz
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
"$bench" --from "$tmp/missing.csv" --out "$tmp/bad" >/dev/null 2>&1 \
  && fail "a missing runs file was accepted"
echo "image,cipher" > "$tmp/notruns.csv"
"$bench" --from "$tmp/notruns.csv" --out "$tmp/bad" 2>"$tmp/err" >/dev/null \
  && fail "a CSV that is not a runs file was accepted"
grep -q 'is not a runs.csv' "$tmp/err" || fail "no error for a wrong runs file: $(cat "$tmp/err")"

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
  --workdir "$tmp" --cipher-library openssl,libgcrypt > "$tmp/stdout" 2>"$tmp/stderr"
rc=$?
cat "$tmp/stderr" "$tmp/stdout"
[ $rc -eq 0 ] || fail "bench-cpu.sh exited with $rc"

# ---- The real run: what ran, and the shape of what it wrote ----

runs="$tmp/out/runs.csv"
expect_equal "runs header" \
  "run,image,cipher,key_bits,sector,library,direction,ms_per_gib,cipher_ms_per_gib,cipher_library" \
  "$(head -n 1 "$runs")"
# The quick set, written out here rather than taken from the script.
expected=("luks1 aes-xts-plain64 512 512" "luks2 aes-xts-plain64 512 4096"
          "plain aes-xts-plain64 512 1024" "plain aes-xts-plain64 512 2048"
          "plain aes-xts-plain64 256 4096"
          "plain aes-cbc-essiv:sha256 128 4096"
          "plain aes-cbc-essiv:sha256 256 4096")
number='^[0-9]+(\.[0-9]+)?$'
for e in "${expected[@]}"; do
  read -r img cipher bits sector <<< "$e"
  for lib in openssl libgcrypt; do
    for dir in write read; do
      line=$(grep "^dmcrypt,$img,$cipher,$bits,$sector,$lib,$dir," "$runs") \
        || fail "no run of $e $dir $lib"
      IFS=, read -r _ _ _ _ _ _ _ ms cm said <<< "$line"
      [[ $ms =~ $number && $cm =~ $number ]] \
        || fail "$e $dir $lib: '$ms' or '$cm' is not a number"
      # The server ran the library it was asked for, as it says.
      expect_equal "$e $dir: the library the server ran" "$lib" "$said"
    done
  done
done
# LUKS2 with integrity, once whatever the libraries: the AEAD is
# OpenSSL's and runs below the engine's cipher clock ("-").
integrity=("luks2i aes-xts-plain64/hmac-sha256 768 4096"
           "luks2i aes-gcm-random/aead 256 512")
for e in "${integrity[@]}"; do
  read -r img cipher bits sector <<< "$e"
  for dir in write read; do
    line=$(grep "^dmcrypt,$img,$cipher,$bits,$sector,-,$dir," "$runs") \
      || fail "no run of $e $dir"
    IFS=, read -r _ _ _ _ _ _ _ ms cm said <<< "$line"
    [[ $ms =~ $number ]] || fail "$e $dir: '$ms' is not a number"
    expect_equal "$e $dir: cipher clock and library" "- -" "$cm $said"
  done
done
expect_equal "dmcrypt runs" $(( ${#expected[@]} * 2 * 2 + 4 )) "$(grep -c '^dmcrypt,' "$runs")"
expect_equal "cipher_null runs" 4 "$(grep -Ec '^null,null(-nowq)?,(default|no-write-workqueue=1),,,-,(write|read),[0-9.]+,-,-$' "$runs")"
expect_equal "file plugin runs" 36 "$(grep -Ec '^file,,,,,-,(write|read),[0-9.]+,-,-$' "$runs")"
expect_equal "openssl prices" 2 "$(grep -Ec '^openssl,,aes-(128|256)-xts,(128|256),4096,-,,[0-9.]+,-,-$' "$runs")"
expect_equal "openssl MAC and AEAD prices" \
  "openssl,,aes-256-gcm,256,512 openssl,,hmac-sha256,256,4096" \
  "$(grep -E '^openssl,,(hmac-sha256|aes-256-gcm),256,[0-9]+,-,,[0-9.]+,-,-$' "$runs" \
     | cut -d, -f1-5 | sort | tr '\n' ' ' | sed 's/ $//')"
expect_equal "progress lines" 36 \
  "$(grep -c '^bench-cpu: \[[0-9]*/36\] .* ms/GiB$' "$tmp/stderr")"

# Every dmcrypt row ran once per direction (one repeat), the file
# plugin once before each, and the two cipher_null rows with their own
# settings.
servers=$tmp/servers.log
expect_equal "file plugin servers" 36 "$(grep -c ' file /' "$servers")"
expect_equal "servers of LUKS2 with integrity" 4 \
  "$(grep -Ec ' file=[^ ]*/luks2i-luks2-(hmac-sha256-4k|aes-gcm)\.img passphrase=\+[^ ]*\.pw$' "$servers")"
expect_equal "servers with cipher-library=libgcrypt" 14 \
  "$(grep -c ' cipher-library=libgcrypt$' "$servers")"
expect_equal "servers with cipher-library=openssl" 14 \
  "$(grep -c ' cipher-library=openssl$' "$servers")"
null_table='file=[^ ]*/raw.img table=+[^ ]*/null-table'
expect_equal "cipher_null servers, default stage" 2 \
  "$(grep -c "$null_table\$" "$servers")"
expect_equal "cipher_null servers, no-write-workqueue=1" 2 \
  "$(grep -c "$null_table no-write-workqueue=1\$" "$servers")"

# The tables have a row for every case and come from runs.csv alone:
# --from prints and writes the same again.
expect_equal "cpu.csv rows" 32 $(( $(wc -l < "$tmp/out/cpu.csv") - 1 ))
expect_equal "cbc.csv rows" 8 $(( $(wc -l < "$tmp/out/cbc.csv") - 1 ))
expect_equal "integrity.csv rows" 4 $(( $(wc -l < "$tmp/out/integrity.csv") - 1 ))
expect_equal "writepath.csv rows" 4 $(( $(wc -l < "$tmp/out/writepath.csv") - 1 ))
"$bench" --from "$runs" --out "$tmp/again" > "$tmp/stdout.again" \
  || fail "--from on the run's own runs.csv failed"
cmp "$tmp/stdout" "$tmp/stdout.again" || fail "--from printed other tables"
for f in cpu.csv cbc.csv integrity.csv writepath.csv; do
  cmp "$tmp/out/$f" "$tmp/again/$f" || fail "--from wrote another $f"
done

# ---- The arithmetic, on figures chosen here ----

# Three runs of LUKS1 (medians 502 and 410, its cipher 200 and 100.5),
# one of each plain case, the file plugin's medians 310.0 (write) and
# 0.0 (read, so that every quotient over it is "-"), an XTS read of 0.0
# under a CBC read, a ratio below zero; hmac-sha256 at 512-byte sectors
# (bound 160 + 640, against LUKS1's XTS of the same AES key size, the
# only one, though of library openssl) and aes-gcm-random at 4096 (bound
# 200, no XTS row to set it against).
cat > "$tmp/fixed.csv" <<'CSV'
run,image,cipher,key_bits,sector,library,direction,ms_per_gib,cipher_ms_per_gib,cipher_library
openssl,,aes-128-xts,128,4096,-,,100.0,-,-
openssl,,aes-256-xts,256,4096,-,,160.0,-,-
openssl,,hmac-sha256,256,512,-,,640.0,-,-
openssl,,aes-256-gcm,256,4096,-,,200.0,-,-
openssl,,aes-256-gcm,256,512,-,,999.0,-,-
file,,,,,-,write,300.0,-,-
dmcrypt,luks1,aes-xts-plain64,512,512,openssl,write,470.0,190.0,openssl
file,,,,,-,read,0.0,-,-
dmcrypt,luks1,aes-xts-plain64,512,512,openssl,read,420.0,100.5,openssl
file,,,,,-,write,320.0,-,-
dmcrypt,luks1,aes-xts-plain64,512,512,openssl,write,502.0,210.0,openssl
file,,,,,-,read,5.0,-,-
dmcrypt,luks1,aes-xts-plain64,512,512,openssl,read,400.0,99.0,openssl
file,,,,,-,write,310.0,-,-
dmcrypt,luks1,aes-xts-plain64,512,512,openssl,write,530.0,200.0,openssl
file,,,,,-,read,0.0,-,-
dmcrypt,luks1,aes-xts-plain64,512,512,openssl,read,410.0,101.0,openssl
file,,,,,-,write,310.0,-,-
dmcrypt,plain,aes-xts-plain64,256,4096,-,write,290.0,60.0,libgcrypt
file,,,,,-,read,0.0,-,-
dmcrypt,plain,aes-xts-plain64,256,4096,-,read,0.0,0.0,libgcrypt
file,,,,,-,write,310.0,-,-
dmcrypt,plain,aes-cbc-essiv:sha256,128,4096,-,write,348.0,90.0,libgcrypt
file,,,,,-,read,0.0,-,-
dmcrypt,plain,aes-cbc-essiv:sha256,128,4096,-,read,123.0,50.0,libgcrypt
file,,,,,-,write,310.0,-,-
null,null,default,,,-,write,620.0,-,-
file,,,,,-,read,0.0,-,-
null,null,default,,,-,read,7.0,-,-
file,,,,,-,write,310.0,-,-
null,null-nowq,no-write-workqueue=1,,,-,write,310.0,-,-
file,,,,,-,read,0.0,-,-
null,null-nowq,no-write-workqueue=1,,,-,read,0.0,-,-
file,,,,,-,write,310.0,-,-
dmcrypt,luks2i,aes-xts-plain64/hmac-sha256,768,512,-,write,1110.0,-,-
file,,,,,-,read,0.0,-,-
dmcrypt,luks2i,aes-xts-plain64/hmac-sha256,768,512,-,read,570.0,-,-
file,,,,,-,write,310.0,-,-
dmcrypt,luks2i,aes-gcm-random/aead,256,4096,-,write,710.0,-,-
file,,,,,-,read,0.0,-,-
dmcrypt,luks2i,aes-gcm-random/aead,256,4096,-,read,100.0,-,-
CSV
"$bench" --from "$tmp/fixed.csv" --out "$tmp/fixed" > "$tmp/fixed.out" \
  || fail "--from on a fixed runs file failed"
cat "$tmp/fixed.out"
expect_equal "cpu.csv from fixed figures" \
"image,cipher,key_bits,sector,direction,file_ms_per_gib,ms_per_gib,openssl_ms_per_gib,ratio,cipher_ms_per_gib,cipher_library
luks1,aes-xts-plain64,512,512,write,310.0,502.0,160.0,1.20,200.0,openssl
luks1,aes-xts-plain64,512,512,read,0.0,410.0,160.0,2.56,100.5,openssl
plain,aes-xts-plain64,256,4096,write,310.0,290.0,100.0,-0.20,60.0,libgcrypt
plain,aes-xts-plain64,256,4096,read,0.0,0.0,100.0,0.00,0.0,libgcrypt
plain,aes-cbc-essiv:sha256,128,4096,write,310.0,348.0,100.0,0.38,90.0,libgcrypt
plain,aes-cbc-essiv:sha256,128,4096,read,0.0,123.0,100.0,1.23,50.0,libgcrypt
luks2i,aes-xts-plain64/hmac-sha256,768,512,write,310.0,1110.0,800.0,1.00,-,-
luks2i,aes-xts-plain64/hmac-sha256,768,512,read,0.0,570.0,800.0,0.71,-,-
luks2i,aes-gcm-random/aead,256,4096,write,310.0,710.0,200.0,2.00,-,-
luks2i,aes-gcm-random/aead,256,4096,read,0.0,100.0,200.0,0.50,-,-" \
  "$(cat "$tmp/fixed/cpu.csv")"
expect_equal "integrity.csv from fixed figures" \
"cipher,key_bits,sector,direction,ms_per_gib,xts_ms_per_gib,over_xts,extra_ms_per_gib,mac_openssl_ms_per_gib
aes-xts-plain64/hmac-sha256,768,512,write,1110.0,502.0,2.21,608.0,640.0
aes-xts-plain64/hmac-sha256,768,512,read,570.0,410.0,1.39,160.0,640.0
aes-gcm-random/aead,256,4096,write,710.0,-,-,-,200.0
aes-gcm-random/aead,256,4096,read,100.0,-,-,-,200.0" \
  "$(cat "$tmp/fixed/integrity.csv")"
expect_equal "cbc.csv from fixed figures" \
"cipher,key_bits,sector,cipher_library,direction,ms_per_gib,xts_ms_per_gib,over_xts
aes-cbc-essiv:sha256,128,4096,libgcrypt,write,348.0,290.0,1.20
aes-cbc-essiv:sha256,128,4096,libgcrypt,read,123.0,0.0,-" \
  "$(cat "$tmp/fixed/cbc.csv")"
expect_equal "writepath.csv from fixed figures" \
"table,direction,file_ms_per_gib,ms_per_gib,over_file
default,write,310.0,620.0,2.00
default,read,0.0,7.0,-
no-write-workqueue=1,write,310.0,310.0,1.00
no-write-workqueue=1,read,0.0,0.0,-" \
  "$(cat "$tmp/fixed/writepath.csv")"
# The printed tables say the same, with their units.
for row in \
  "luks1 +aes-xts-plain64 +512 +512 +write +310.0 +502.0 +160.0 +1.20 +200.0 +openssl" \
  "plain +aes-xts-plain64 +256 +4096 +write +310.0 +290.0 +100.0 +-0.20 +60.0 +libgcrypt" \
  "aes-cbc-essiv:sha256 +128 +4096 +libgcrypt +read +123.0 +0.0 +-" \
  "no-write-workqueue=1 +write +310.0 +310.0 +1.00" \
  "luks2i +aes-xts-plain64/hmac-sha256 +768 +512 +read +0.0 +570.0 +800.0 +0.71 +- +-" \
  "aes-xts-plain64/hmac-sha256 +768 +512 +write +1110.0 +502.0 +2.21 +608.0 +640.0" \
  "aes-gcm-random/aead +256 +4096 +read +100.0 +- +- +- +200.0"; do
  grep -Eq "^$row\$" "$tmp/fixed.out" || fail "no printed row '$row'"
done
expect_equal "unit lines" 4 "$(grep -c 'ms/GiB' "$tmp/fixed.out")"
grep -q 'dmcrypt: the median of 3 run(s) of the case; file: the median of all 9 runs' \
  "$tmp/fixed.out" || fail "the table does not say how many runs it pooled"
exit 0
