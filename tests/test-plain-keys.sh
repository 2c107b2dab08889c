#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Plain-mode keys that never appear on the command line, derived as
# "cryptsetup open --type plain" derives them: a passphrase hashed with
# hash= (ripemd160 by default, sha256, sha512:32 = 32 hashed bytes then
# zeros, plain = the passphrase itself, cut or zero-padded), and a
# binary key-file= read for exactly key-size bits from keyfile-offset.
# Each key is computed again here with Python's hashlib (cryptsetup's
# algorithm: round i hashes i "A"s then the passphrase) and the data the
# plugin wrote is decrypted by the independent oracle with that key.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_oracle
requires_cmd nbdkit nbdcopy nbdinfo
scratch
cd "$tmp" || fail "cd $tmp"

# The key cryptsetup derives: plain_key HASH KEYBYTES PASSFILE
plain_key ()
{
  "$PY" - "$@" <<'PYEOF'
import hashlib, sys
spec, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
pw = open(path, "rb").read()
if pw.endswith(b"\n"):                 # nbdkit's +FILE drops one newline
    pw = pw[:-1]
name, _, length = spec.partition(":")
hashed = int(length) if length else size
if name == "plain":
    key = pw[:hashed].ljust(hashed, b"\0")
else:
    key, rnd = b"", 0
    while len(key) < hashed:
        h = hashlib.new(name, b"A" * rnd + pw).digest()
        key += h[:hashed - len(key)]
        rnd += 1
print((key + bytes(size - hashed)).hex())
PYEOF
}

truncate -s 16M p.img
sectors=32768

# check TITLE CIPHER KEYHEX plugin-args...: the plugin writes random
# plaintext, the oracle must read it back with KEYHEX.
check ()
{
  local title=$1 cipher=$2 key=$3; shift 3
  local table="0 $sectors crypt $cipher $key 0 p.img 0"
  echo "$title"
  random_file a.bin $((sectors * 512))
  serve_dmcrypt 'nbdcopy a.bin "$uri"' file=p.img "$@" \
    || fail "$title: the plugin refused"
  oracle decrypt p.img a.out --table "$table" || fail "oracle decrypt"
  expect_same "$title: plugin wrote, oracle read with the derived key" \
    a.bin a.out
}

printf '%s\n' 'correct horse battery staple' > pw.txt
check "defaults: ripemd160, 256 bits, aes-cbc-essiv:sha256" \
  aes-cbc-essiv:sha256 "$(plain_key ripemd160 32 pw.txt)" \
  type=plain passphrase=+pw.txt
check "sha256, 512-bit aes-xts-plain64" aes-xts-plain64 \
  "$(plain_key sha256 64 pw.txt)" \
  type=plain passphrase=+pw.txt hash=sha256 key-size=512 \
  cipher=aes-xts-plain64
check "sha512:32 (32 hashed bytes, then zeros)" aes-xts-plain64 \
  "$(plain_key sha512:32 64 pw.txt)" \
  type=plain passphrase=+pw.txt hash=sha512:32 key-size=512 \
  cipher=aes-xts-plain64
check "hash=plain, passphrase shorter than the key: zero-padded" \
  aes-cbc-plain64 "$(plain_key plain 32 pw.txt)" \
  type=plain passphrase=+pw.txt hash=plain cipher=aes-cbc-plain64
printf '%s' 'a passphrase longer than thirty-two bytes, cut' > long.txt
check "hash=plain, passphrase longer than the key: cut" \
  aes-cbc-plain64 "$(plain_key plain 32 long.txt)" \
  type=plain passphrase=+long.txt hash=plain cipher=aes-cbc-plain64
exec 7<pw.txt
check "passphrase from a descriptor (-7)" aes-xts-plain64 \
  "$(plain_key sha256 64 pw.txt)" \
  type=plain passphrase=-7 hash=sha256 key-size=512 cipher=aes-xts-plain64
exec 7<&-

head -c 4096 /dev/urandom > key.bin
key_at () { od -An -v -tx1 -j "$1" -N "$2" key.bin | tr -d ' \n'; }
check "key-file, 512 bits from offset 0" aes-xts-plain64 "$(key_at 0 64)" \
  type=plain key-file=key.bin key-size=512 cipher=aes-xts-plain64
check "keyfile= spelling, keyfile-offset=100, 256 bits" \
  aes-cbc-essiv:sha256 "$(key_at 100 32)" \
  type=plain keyfile=key.bin keyfile-offset=100
check "key-file with cipher= alone (plain mode implied)" aes-xts-plain64 \
  "$(key_at 0 32)" key-file=key.bin cipher=aes-xts-plain64

# Refusals: one error line naming the problem.
refuse ()  # refuse REGEX plugin-args...
{
  local regex=$1; shift
  if timeout 30 nbdkit -U - "$plugin" file=p.img "$@" --run true \
       </dev/null 2>err.txt; then
    fail "accepted: $*"
  fi
  [ "$(grep -c . err.txt)" -eq 1 ] || { cat err.txt; fail "not one line: $*"; }
  grep -Eqi -- "$regex" err.txt || { cat err.txt; fail "no /$regex/: $*"; }
  grep -q 'correct horse' err.txt && fail "the passphrase is in the error"
  echo "ok: refused $* -- $(cat err.txt)"
}
head -c 20 /dev/urandom > short.bin
refuse 'hash=.*passphrase' type=plain key-file=key.bin hash=sha256
refuse 'keyfile-size' type=plain key-file=key.bin keyfile-size=32
refuse 'short.bin.*(read|amount)' type=plain key-file=short.bin key-size=256
refuse 'key-size.*(bytes|byte)' type=plain passphrase=+pw.txt key-size=250
refuse 'hash=nosuchhash' type=plain passphrase=+pw.txt hash=nosuchhash
refuse 'one plain-mode key' type=plain passphrase=+pw.txt key-file=key.bin
refuse 'key-size=256 but key= holds 512' cipher=aes-xts-plain64 \
  key=+<(key_at 0 64) key-size=256
echo PASS
