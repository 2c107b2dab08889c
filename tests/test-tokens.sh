#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# LUKS tokens, as cryptsetup open tries them: LUKS2 and LUKS1 images
# bound by clevis luks bind to a Tang server of the test's own (on a
# free loopback port) open with no passphrase and show the bytes the
# oracle wrote with the volume key; an sss binding over two Tangs
# (t=1) opens with one of them stopped; a tpm2 binding opens through
# swtpm; a stopped Tang with token-only=true, token-only=true on an
# image without tokens, token-id= naming no token and a systemd-tpm2
# token without a TPM are each one error line that names the token;
# with passphrase= the token's failure is a note and the passphrase
# opens the image.  FileVault2, which has no tokens, refuses them by
# name.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
requires_oracle
requires_cmd cryptsetup clevis luksmeta jose socat curl nbdkit nbdcopy
[ -x /usr/libexec/tangd ] || skip "tang is not installed (/usr/libexec/tangd)"
scratch
cd "$tmp" || fail "cd $tmp"

pw=token-test-passphrase
printf %s "$pw" > pw

# A TCP port nothing listens on now.
free_port ()
{
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# A Tang server on a free port with keys in DIR: its URL in
# tang_url, its socat's pid in tang_pid.  Stopped at exit.
start_tang ()  # start_tang DIR
{
  local port i
  mkdir -p "$1"
  [ -n "$(ls "$1")" ] || /usr/libexec/tangd-keygen "$1" \
    || fail "tangd-keygen $1"
  port=$(free_port)
  socat TCP-LISTEN:"$port",bind=127.0.0.1,fork,reuseaddr \
    EXEC:"/usr/libexec/tangd $1" 2>/dev/null &
  tang_pid=$!
  cleanup_fn "kill $tang_pid 2>/dev/null"
  tang_url=http://127.0.0.1:$port
  for (( i = 0; i < 100; i++ )); do
    curl -sf "$tang_url/adv" >/dev/null && return 0
    sleep 0.1
  done
  fail "Tang on port $port did not answer"
}

# IMG formatted as TYPE (fast PBKDF) and bound with Clevis PIN CONFIG.
# clevis luks bind adds its keyslot through luksAddKey, which keeps the
# PBKDF of the slot it was given.
bound_image ()  # bound_image TYPE IMG SIZE PIN CONFIG
{
  rm -f "$2"; truncate -s "$3" "$2"
  luks_format "$1" "$2" "$pw" || fail "luksFormat $1"
  clevis luks bind -y -d "$2" -k pw "$4" "$5" </dev/null >/dev/null \
    || fail "clevis luks bind $4 on $1"
}

# The oracle writes random bytes with the volume key; the plugin must
# read them back opened with ARGS (no passphrase).
check_token_read ()  # check_token_read IMG plugin-args...
{
  local img=$1 size; shift
  size=$(serve_dmcrypt 'nbdinfo --size "$uri"' file="$img" \
           passphrase=+pw) || fail "$img does not open with its passphrase"
  random_file "$img.in" "$size"
  oracle encrypt "$img.in" "$img" --luks-key \
    "$(luks_volume_key "$img" "$pw")" || fail "oracle encrypt $img"
  serve_dmcrypt 'nbdcopy "$uri" '"$img.out" file="$img" "$@" \
    2>"$img.log" || { cat "$img.log"; fail "$img: no open by its token"; }
  expect_same "$img: oracle wrote, token read" "$img.in" "$img.out"
}

start_tang tang1
tang1_pid=$tang_pid tang1_url=$tang_url
tang='{"url":"'$tang1_url'"}'

echo "LUKS2 bound to Tang"
bound_image luks2 l2.img 32M tang "$tang"
check_token_read l2.img
check_token_read l2.img token-type=clevis token-only=true
# Clevis's passphrase stays out of nbdkit's -v log and libcryptsetup's.
clevis_pw=$(clevis luks pass -d l2.img -s 1) || fail "clevis luks pass"
[ ${#clevis_pw} -ge 20 ] || fail "clevis luks pass: a short passphrase"
timeout "$compat_timeout" nbdkit -v -U - "$plugin" file=l2.img \
  -D dmcrypt.luks=1 --run true </dev/null >verbose.log 2>&1 \
  || { tail verbose.log; fail "l2.img did not open under -v"; }
grep -q 'Key slot 1 unlocked' verbose.log || fail "-v: no keyslot 1"
grep -qF "$clevis_pw" verbose.log && fail "Clevis's passphrase is logged"
echo "  -v: keyslot 1 named, Clevis's passphrase not logged"
echo "LUKS1 bound to Tang (luksmeta)"
bound_image luks1 l1.img 16M tang "$tang"
check_token_read l1.img
check_token_read l1.img token-id=1

echo "sss, t=1, over two Tangs, one of them stopped"
start_tang tang2
sss='{"t":1,"pins":{"tang":[{"url":"'$tang_url'"},{"url":"'$tang1_url'"}]}}'
bound_image luks2 sss.img 32M sss "$sss"
kill "$tang_pid"; wait "$tang_pid" 2>/dev/null
check_token_read sss.img

echo "A token with no answer, and what follows"
kill "$tang1_pid"; wait "$tang1_pid" 2>/dev/null
expect_refused "Tang stopped, token-only=true" \
  'token 0 \(clevis\) cannot unlock: .*127\.0\.0\.1.*token-only' \
  l2.img token-only=true
expect_refused "Tang stopped, no passphrase (LUKS1)" \
  'luksmeta slot 1 \(clevis\) cannot unlock' l1.img
serve_dmcrypt 'nbdcopy "$uri" l2.fallback' file=l2.img token-id=0 \
  passphrase=+pw 2>fallback.log \
  || { cat fallback.log; fail "the passphrase did not follow the token"; }
grep -q 'note: token 0 (clevis) cannot unlock' fallback.log \
  || { cat fallback.log; fail "the failed token was not said"; }
expect_same "passphrase after the token" l2.img.in l2.fallback
grep -q "$pw" fallback.log && fail "the passphrase is in the log"
echo "  fallback: $(grep note: fallback.log)"

echo "No token to try"
rm -f plain2.img; truncate -s 32M plain2.img
luks_format luks2 plain2.img "$pw"
expect_refused "token-only=true without tokens" \
  'token-only=true, but the header has no token.*tokens: none' \
  plain2.img token-only=true
expect_refused "no passphrase and no tokens" \
  'no passphrase= or keyfile=, and the header has no token' plain2.img
expect_refused "token-id= naming no token" \
  'token-id=5: no such token \(tokens: 0 clevis\)' l2.img token-id=5
expect_refused "token-type= naming no token" \
  'token-type=systemd-fido2: no token of that type' l2.img \
  token-type=systemd-fido2
expect_refused "key-slot= without a secret" 'key-slot needs passphrase=' \
  l2.img key-slot=0

echo "FileVault2 has no tokens"
if (unpack_cryptsetup_images fvault2-images.tar.xz) >/dev/null; then
  printf %s heslo123 > fv-pw
  expect_refused "FileVault2 without a passphrase" \
    'a FileVault2 volume has no tokens: give passphrase= or keyfile=' \
    fvault2-images/small
  expect_refused "FileVault2 with token-only=true" \
    'token-id, token-type and token-only are for LUKS; .* is a FileVault2' \
    fvault2-images/small passphrase=+fv-pw token-only=true
else
  echo "  (fvault2-images.tar.xz is absent: the case is left out)"
fi

echo "A systemd-tpm2 token without a TPM"
if [ -e /dev/tpmrm0 ] || [ -e /dev/tpm0 ]; then
  echo "  (this machine has a TPM: the case is left out)"
elif ! compgen -G \
     '/usr/lib/*/cryptsetup/libcryptsetup-token-systemd-tpm2.so' >/dev/null
then
  echo "  (libcryptsetup's systemd-tpm2 plugin is not installed)"
else
  cp plain2.img tpm2tok.img
  printf %s '{"type":"systemd-tpm2","keyslots":["0"],"tpm2-blob":'\
'"AJ4AIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==","tpm2-pcrs":[7],'\
'"tpm2-pcr-bank":"sha256","tpm2-primary-alg":"ecc","tpm2-policy-hash":'\
'"0000000000000000000000000000000000000000000000000000000000000000",'\
'"tpm2-pin":false}' > tpm2.json
  cryptsetup token import --token-id 3 tpm2tok.img < tpm2.json \
    || fail "cryptsetup token import"
  expect_refused "systemd-tpm2 without a TPM" \
    'token 3 \(systemd-tpm2\) cannot unlock' tpm2tok.img
  serve_dmcrypt true file=tpm2tok.img token-id=3 passphrase=+pw \
    2>tpm2.log || { cat tpm2.log; fail "no passphrase after systemd-tpm2"; }
  grep -q 'note: token 3 (systemd-tpm2) cannot unlock' tpm2.log \
    || { cat tpm2.log; fail "the systemd-tpm2 token was not said"; }
fi

echo "tpm2 pin through swtpm"
if ! command -v swtpm >/dev/null || [ ! -x /usr/bin/clevis-encrypt-tpm2 ]
then
  echo "SKIP (tpm2 case): swtpm or clevis-tpm2 is not installed"
else
  mkdir tpmstate
  port=$(free_port)
  swtpm socket --tpm2 --tpmstate dir=tpmstate \
    --server type=tcp,port="$port",bindaddr=127.0.0.1 \
    --ctrl type=tcp,port=$(( port + 1 )),bindaddr=127.0.0.1 \
    --flags not-need-init,startup-clear 2>swtpm.log &
  swtpm_pid=$!
  cleanup_fn "kill $swtpm_pid 2>/dev/null"
  export TPM2TOOLS_TCTI="swtpm:host=127.0.0.1,port=$port"
  for (( i = 0; i < 100; i++ )); do
    echo -n x | clevis encrypt tpm2 '{}' >/dev/null 2>&1 && break
    sleep 0.1
  done
  if [ "$i" -lt 100 ]; then
    bound_image luks2 tpm2.img 32M tpm2 '{}'
    check_token_read tpm2.img
  else
    echo "SKIP (tpm2 case): clevis cannot use swtpm on port $port:" \
      "$(head -c 200 swtpm.log)"
  fi
  unset TPM2TOOLS_TCTI
fi

# What no device here can show: libcryptsetup's systemd plugins find a
# TPM only under /sys/class/tpmrm (swtpm on a socket does not count),
# FIDO2 keys and smart cards only on USB; their success is not tried.
[ -e /dev/tpmrm0 ] \
  || echo "SKIP (systemd-tpm2 unlocking): no TPM device (/dev/tpmrm0)"
echo "SKIP (systemd-fido2, systemd-pkcs11 unlocking): no security key" \
     "or smart card here"
