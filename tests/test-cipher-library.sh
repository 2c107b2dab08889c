#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cipher-library=: OpenSSL's and libgcrypt's AES (XTS, and the ECB under
# the XTS construction and CBC across sectors) make the same image from
# the same writes at every sector size (so what one wrote the other
# reads), `dmcryptctl status --stats` names the library of the live
# table, a volume without the parameter uses what --dump-plugin says
# "auto" means here, CBC a sector at a time (eboiv) stays OpenSSL's, and
# a bad value is refused with one line.  The bytes themselves are checked against the kernel's
# vectors and the oracle by test-cipher and test-luks2-oracle.
source "$(dirname "$0")/functions.sh"
requires "$PY" -c 'import nbd'
source "$srcdir/control-functions.sh"

key=$(random_hex 64)
head -c 1048576 /dev/urandom > "$tmp/data"

# library_of NAME: the cipher_library line of NAME's status.
library_of ()
{
  ctl status --stats "$1" | sed -n 's/^cipher_library: //p'
}

# key_for SPEC: the test's key, as long as SPEC takes (XTS two halves).
key_for ()
{
  case $1 in
    aes-xts-*) echo "$key" ;;
    *) echo "${key:0:64}" ;;
  esac
}

# write_with LIB SECTOR_SIZE IMG [SPEC [WANT]]: writes the data at 64 KiB
# through a fresh volume over IMG with cipher-library=LIB, and checks
# that its status names WANT (LIB by default).
write_with ()
{
  local lib=$1 ss=$2 img=$3 spec=${4:-aes-xts-plain64} want=${5:-$1} k
  k=$(key_for "$spec")
  rm -f "$img"; truncate -s 4M "$img"
  start_volume w file="$img" cipher-library="$lib" \
    table="0 8192 crypt $spec $k 0 $img 0 1 sector_size:$ss" \
    || fail "start with cipher-library=$lib"
  nbdio "$(uri_of w)" write 65536 "$tmp/data" || fail "write with $lib"
  [ "$(library_of w)" = "$want" ] \
    || fail "$spec with cipher-library=$lib: status says" \
            "'$(library_of w)', not $want"
  stop_volume w
}

# same_image SPEC SECTOR_SIZE: both libraries write the same image, and
# libgcrypt reads back what OpenSSL wrote.
same_image ()
{
  local spec=$1 ss=$2 k
  k=$(key_for "$spec")
  write_with openssl "$ss" "$tmp/o.img" "$spec"
  write_with libgcrypt "$ss" "$tmp/g.img" "$spec"
  cmp -s "$tmp/o.img" "$tmp/g.img" \
    || fail "$spec, $ss-byte sectors: the two libraries wrote different images"
  cmp -s "$tmp/o.img" <(head -c 4194304 /dev/zero) \
    && fail "$spec, $ss-byte sectors: nothing was written"
  start_volume r file="$tmp/o.img" cipher-library=libgcrypt \
    table="0 8192 crypt $spec $k 0 $tmp/o.img 0 1 sector_size:$ss" \
    || fail "start to read"
  nbdio "$(uri_of r)" read 65536 1048576 | cmp -s - "$tmp/data" \
    || fail "$spec, $ss-byte sectors: libgcrypt did not read what OpenSSL wrote"
  stop_volume r
  echo "ok: $spec, $ss-byte sectors, the same image from both libraries"
}

for ss in 512 1024 2048 4096; do
  same_image aes-xts-plain64 "$ss"
done
# The XTS construction on libgcrypt's ECB, and CBC across sectors on it
# (at 512 bytes a chunk's columns are libgcrypt's, at 4096 OpenSSL's).
same_image aes-xts-essiv:sha256 1024
same_image aes-cbc-essiv:sha256 512
same_image aes-cbc-essiv:sha256 4096

write_with libgcrypt 4096 "$tmp/c.img" aes-cbc-eboiv openssl
echo "ok: aes-cbc-eboiv stays OpenSSL's"

auto=$(nbdkit "$plugin" --dump-plugin | sed -n 's/^dmcrypt_cipher_library_auto=//p')
case $auto in
  openssl|libgcrypt) ;;
  *) fail "--dump-plugin: dmcrypt_cipher_library_auto='$auto'" ;;
esac
start_volume a file="$tmp/o.img" \
  table="0 8192 crypt aes-xts-plain64 $key 0 $tmp/o.img 0" || fail "start"
[ "$(library_of a)" = "$auto" ] \
  || fail "auto: status says '$(library_of a)', --dump-plugin '$auto'"
stop_volume a
echo "ok: auto is $auto here"

nbdkit "$plugin" file="$tmp/o.img" cipher-library=gnutls \
  table="0 8192 crypt aes-xts-plain64 $key 0 $tmp/o.img 0" --run true \
  2> "$tmp/bad.err" && fail "cipher-library=gnutls accepted"
[ "$(grep -c . "$tmp/bad.err")" = 1 ] \
  && grep -q "cipher-library: 'gnutls' is not auto, openssl or libgcrypt" \
    "$tmp/bad.err" || fail "bad value: $(cat "$tmp/bad.err")"
echo "ok: a bad value is refused with one line"
