#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Plain dm-crypt mappings against the oracle, both directions, exact
# bytes: every table the kernel accepted in the reference transcripts
# (plain-cbc-essiv.txt, plain-optional-args.txt) and a few more for the
# other IV generators and key sizes, each given once as table= and once
# as cipher=/key=/offset=/iv-offset=/sector-size= parameters, on an
# image of 32768 sectors (16 MiB) as in the transcripts.
# The quick run (default) keeps one of the transcript tables that differ
# only in an IV offset or an extra option (p2 for p1, p8 for p3, p10 for
# p4), drops the extra tables whose cipher, chain mode and IV generator
# others show (x8, x13, x23), cuts the longer extra ones to 4096 sectors
# (2 MiB) on an image that ends where they do, and checks the parameters
# path on the tables that bring a parameter not yet checked (a key file
# and a key on the line, every option, offset, IV offset, sector size);
# the oracle reads and writes the last 2 MiB of the transcripts' 16 MiB
# mappings, the plugin all of it.
# The full run (DMCRYPT_TEST_FULL=1) checks every table as it is, and
# each one's parameters too (through the filter or under a sanitizer,
# every third table's and those that bring a new parameter).
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_oracle
requires_cmd nbdkit nbdcopy nbdinfo
ref="$shared/reference/kernel-dmsetup"
scratch
cd "$tmp" || fail "cd $tmp"

# The plugin parameters that say what TABLE says, one a line.
table_to_params ()  # table_to_params TABLE KEYARG
{
  local w i
  read -r -a w <<<"$1"
  printf '%s\n' "cipher=${w[3]}" "$2" "offset=${w[7]}" "iv-offset=${w[5]}"
  for (( i = 9; i < 9 + ${w[8]:-0}; i++ )); do
    case ${w[i]} in
      sector_size:*) echo "sector-size=${w[i]#sector_size:}" ;;
      *) echo "${w[i]//_/-}=true" ;;
    esac
  done
}

# Serves the mapping of TABLE on p.img with PLUGIN_ARGS and compares
# with the oracle reading TABLE: size, both directions, and the bytes
# of p.img outside the mapping.
check_mapping ()  # check_mapping TITLE TABLE plugin-args...
{
  local title=$1 table=$2 w size want head0 tail0 off_bytes end_bytes
  local seek=0
  shift 2
  echo "$title"
  read -r -a w <<<"$table"
  want=$(( w[1] * 512 ))
  off_bytes=$(( w[7] * 512 )); end_bytes=$(( off_bytes + want ))
  # The quick run has the oracle read and write the last 2 MiB of a
  # longer mapping (the plugin writes and reads all of it).
  if ! full_run && (( want > 2 << 20 )); then seek=$(( want - (2 << 20) )); fi
  expect_equal "oracle's size" "$want" \
    "$(oracle size p.img --table "$table")"

  # One server start for the size and the write: a.bin has the size the
  # table says, checked before the write's outcome.
  head0=$(head -c "$off_bytes" p.img | sha256sum)
  tail0=$(tail -c +$(( end_bytes + 1 )) p.img | sha256sum)
  random_file a.bin "$want"
  rm -f size.out
  serve_dmcrypt 'nbdinfo --size "$uri" >size.out && nbdcopy a.bin "$uri"' \
    file=p.img "$@"
  rc=$?
  [ -s size.out ] || fail "plugin refused: $title"
  size=$(cat size.out)
  expect_equal "export size (bytes)" "$want" "$size"
  [ $rc -eq 0 ] || fail "plugin write"
  oracle decrypt p.img a.out --table "$table" --seek "$seek" \
    || fail "oracle decrypt"
  tail -c +$(( seek + 1 )) a.bin > a.want
  expect_same "plugin wrote, oracle read from byte $seek" a.want a.out
  if [ "$off_bytes" -gt 0 ]; then
    expect_equal "sha256 of the $off_bytes bytes before the mapping" \
      "$head0" "$(head -c "$off_bytes" p.img | sha256sum)"
  fi
  if [ "$end_bytes" -lt "$(stat -c %s p.img)" ]; then
    expect_equal "sha256 of the bytes after the mapping" \
      "$tail0" "$(tail -c +$(( end_bytes + 1 )) p.img | sha256sum)"
  fi

  random_file b.bin $(( size - seek ))
  oracle encrypt b.bin p.img --table "$table" --seek "$seek" \
    || fail "oracle encrypt"
  { head -c "$seek" a.bin; cat b.bin; } > b.want
  serve_dmcrypt 'nbdcopy "$uri" b.out' file=p.img "$@" \
    || fail "plugin read"
  expect_same "oracle wrote from byte $seek, plugin read" b.want b.out
}

: > tables
if [ -e "$ref/plain-optional-args.txt" ]; then
  oracle transcripts "$ref/plain-cbc-essiv.txt" \
    "$ref/plain-optional-args.txt" >records || fail "oracle transcripts"
  awk -F'\t' '$1 == "TABLE" && $4 == "accepted" { print $3 "\t" $5 }' \
    records > tables
  count=$(wc -l < tables)
  [ "$count" -ge 10 ] || fail "only $count accepted tables in transcripts"
  echo "$count tables the kernel accepted"
else
  echo "NOTE: $ref is absent: its tables are skipped, the others run"
fi

# The IV generators, key sizes and corners the transcripts do not show.
# x6's XTS key has equal halves, which the kernel takes outside FIPS
# mode; x9's IV offset makes the 32-bit "plain" IV wrap in the mapping.
# x11 takes eboiv through XTS; x12 on, the other block ciphers, on the
# last 2 MiB of the image (the oracle does their XTS by hand, in Python);
# x21 on, Serpent and Twofish (nettle's in the oracle, libgcrypt's in
# the plugin) and LRW (by hand in both).
k=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
k=$k$k
x6opts="2 iv_large_sectors sector_size:4096"
extra=(
  "x1 0 32768 crypt aes-xts-plain64 ${k:0:96} 4 vda 0 1 sector_size:2048"
  "x2 0 32760 crypt aes-cbc-plain64be ${k:0:48} 8 vda 8 1 sector_size:1024"
  "x3 0 32768 crypt aes-cbc-benbi ${k:0:64} 0 vda 0 1 sector_size:4096"
  "x4 0 32768 crypt aes-cbc-null ${k:0:32} 0 vda 0"
  "x5 0 32768 crypt aes-ecb ${k:0:64} 0 vda 0 1 sector_size:4096"
  "x6 0 30720 crypt aes-xts-plain $k 2040 vda 2048 $x6opts"
  "x7 0 32768 crypt aes-cbc-eboiv ${k:0:64} 0 vda 0 1 sector_size:4096"
  "x8 0 32768 crypt aes-cbc-essiv:sha256 ${k:0:32} 3 vda 0"
  "x9 0 32768 crypt aes-cbc-plain ${k:0:48} 4294967000 vda 0"
  "x10 0 32768 crypt capi:cbc(aes)-essiv:sha256 ${k:0:64} 0 vda 0"
  "x11 0 4096 crypt aes-xts-eboiv ${k:0:64} 0 vda 28672 1 sector_size:4096"
  "x12 0 4096 crypt camellia-xts-plain64 $k 8 vda 28672 1 sector_size:2048"
  "x13 0 4096 crypt camellia-cbc-essiv:sha256 ${k:0:48} 0 vda 28672"
  "x14 0 4096 crypt aria-xts-plain64 ${k:0:64} 0 vda 28672"
  "x15 0 4096 crypt sm4-xts-benbi ${k:0:64} 0 vda 28672 1 sector_size:4096"
  "x16 0 4096 crypt des3_ede-cbc-benbi ${k:0:48} 0 vda 28672"
  "x17 0 4096 crypt des-cbc-plain64 ${k:0:16} 0 vda 28672"
  "x18 0 4096 crypt blowfish-cbc-plain64be ${k:0:112} 0 vda 28672"
  "x19 0 4096 crypt cast5-cbc-essiv:md5 ${k:0:32} 0 vda 28672"
  "x20 0 4096 crypt seed-cbc-eboiv ${k:0:32} 0 vda 28672 1 sector_size:1024"
  "x21 0 4096 crypt serpent-xts-plain64 $k 0 vda 28672 1 sector_size:4096"
  "x22 0 4096 crypt serpent-cbc-plain ${k:0:40} 0 vda 28672"
  "x23 0 4096 crypt twofish-cbc-essiv:sha256 ${k:0:64} 8 vda 28672"
  "x24 0 4096 crypt twofish-xts-essiv:wp256 ${k:0:64} 0 vda 28672"
  "x25 0 4096 crypt aes-lrw-plain64 ${k:0:64} 0 vda 28672"
  "x26 0 4096 crypt capi:lrw(serpent)-benbi ${k:0:96} 0 vda 28672"
)
for e in "${extra[@]}"; do
  printf '%s\t%s\n' "${e%% *}" "${e#* }" >> tables
done
if full_run; then
  echo "full run: every table"
else
  grep -v -P '^(p1|p3|p4|x8|x13|x23)\t' tables > tables.quick
  mv tables.quick tables
  echo "quick run: $(wc -l < tables) tables, the parameters path on" \
       "those with a new parameter; DMCRYPT_TEST_FULL=1 for all"
fi
count=$(wc -l < tables)

# The parameters of a table the parameters path has not checked yet
# (option names, and "offset", "iv-offset" when not 0), one a line.
params_seen=" "
new_params ()  # new_params TABLE
{
  local w i p
  read -r -a w <<<"$1"
  for p in $( (( w[5] )) && echo iv-offset; (( w[7] )) && echo offset
              for (( i = 9; i < 9 + ${w[8]:-0}; i++ )); do
                echo "${w[i]%%:*}"
              done ); do
    [[ $params_seen == *" $p "* ]] || echo "$p"
  done
}

n=0 checked_params=0
while IFS=$'\t' read -r name table; do
  n=$(( n + 1 ))
  img_sectors=32768
  if ! full_run && [[ $name == x* ]]; then
    read -r -a w <<<"$table"
    if (( w[1] > 4096 )); then
      w[1]=4096 table="${w[*]}" img_sectors=$(( w[7] + 4096 ))
    fi
  fi
  random_file p.img $(( img_sectors * 512 ))
  check_mapping "$name: table=$table" "$table" table="$table"

  # The same mapping from parameters; every other one takes the key
  # from a file.  Their size is the rest of the image, as in the table.
  # Both front ends turn parameters into a table with the same code, so
  # through the filter, and under a sanitizer, every third table is
  # enough for that path, and in the quick run the tables that bring a
  # parameter not checked yet (the first two: a key file, a key on the
  # line).
  fresh=$(new_params "$table")
  if [ -z "$fresh" ] && (( checked_params >= 2 )); then
    if ! full_run || { (( n % 3 != 1 )) &&
         { [ "${DMCRYPT_FRONTEND:-plugin}" = filter ] ||
           [ -n "${DMCRYPT_SANITIZER:-}" ]; }; }; then
      continue
    fi
  fi
  params_seen+="$(echo $fresh) "
  read -r -a words <<<"$table"
  keyarg="key=${words[4]}"
  checked_params=$(( checked_params + 1 ))
  if (( checked_params % 2 )); then
    printf '%s\n' "${words[4]}" > key.hex; keyarg=key=+key.hex
  fi
  mapfile -t params < <(table_to_params "$table" "$keyarg")
  random_file p.img $(( img_sectors * 512 ))
  check_mapping "$name: ${params[*]//key=[0-9a-f]*/key=HEX}" "$table" \
    "${params[@]}"
done < tables
[ "$n" -eq "$count" ] || fail "checked $n of $count tables"
echo "PASS"
