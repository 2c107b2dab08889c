#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make demo: a small LUKS2 image, served by dmcrypt, written and read
# through NBD.  Everything lands in ./demo/ (removed and made anew), or
# in $DEMO_DIR.
set -eu
cd "$(dirname "$0")/.."
plugin=$PWD/plugin/nbdkit-dmcrypt-plugin.so
dir=${DEMO_DIR:-$PWD/demo}
rm -rf "$dir"; mkdir -p "$dir"
step () { printf '\n==> %s\n' "$*"; }

step "Making a 64 MiB LUKS2 image (aes-xts-plain64, 512-bit key): demo/demo.img"
truncate -s 64M "$dir/demo.img"
printf %s 'demo passphrase' > "$dir/pw.txt"
cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 \
  --pbkdf-force-iterations 1000 --key-file "$dir/pw.txt" "$dir/demo.img"
cryptsetup luksDump "$dir/demo.img" | grep -E '^(Version|	cipher|	sector|	offset)'

step "Serving it: nbdkit dmcrypt demo/demo.img passphrase=+demo/pw.txt"
head -c 8M /dev/urandom > "$dir/data.bin"
nbdkit -U - "$plugin" "$dir/demo.img" passphrase=+"$dir/pw.txt" --run '
  echo "export size: $(nbdinfo --size "$uri") bytes"
  echo "writing 8 MiB of random data at offset 0 with nbdcopy"
  nbdcopy '"$dir"'/data.bin "$uri"
  echo "reading the whole export back"
  nbdcopy "$uri" '"$dir"'/export.bin
'

step "Checking"
head -c 8M "$dir/export.bin" > "$dir/readback.bin"
sum_in=$(sha256sum < "$dir/data.bin" | cut -c1-64)
sum_out=$(sha256sum < "$dir/readback.bin" | cut -c1-64)
echo "sha256 written:   $sum_in"
echo "sha256 read back: $sum_out"
[ "$sum_in" = "$sum_out" ] || { echo "demo: MISMATCH" >&2; exit 1; }
offset=$(cryptsetup luksDump "$dir/demo.img" | awk '/offset:/ {print $2; exit}')
raw=$(dd if="$dir/demo.img" bs=1M skip=$((offset / 1048576)) count=8 \
        status=none | sha256sum | cut -c1-64)
echo "sha256 of the raw ciphertext at the data offset ($offset bytes): $raw"
[ "$raw" != "$sum_in" ] || { echo "demo: data is not encrypted" >&2; exit 1; }

step "Decrypting the image independently (cryptsetup's volume key + tests/oracle.py)"
key=$(cryptsetup luksDump --dump-volume-key --batch-mode \
        --key-file "$dir/pw.txt" "$dir/demo.img" \
      | awk '/MK dump:/ {p=1; sub(/.*MK dump:/, "")} p' | tr -d ' \t\n:')
/usr/bin/python3 tests/oracle.py decrypt --luks-key "$key" --length 8388608 \
  "$dir/demo.img" "$dir/oracle.bin"
sum_oracle=$(sha256sum < "$dir/oracle.bin" | cut -c1-64)
echo "sha256 by the oracle: $sum_oracle"
[ "$sum_oracle" = "$sum_in" ] || { echo "demo: oracle disagrees" >&2; exit 1; }
unset key
echo
echo "demo: OK — plaintext round-trips through dmcrypt, the image holds only ciphertext."
echo "Try it yourself:  nbdkit $plugin demo/demo.img passphrase=+demo/pw.txt"
