#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Secrets given in the +FILE and key-file forms never reach the log, even
# with nbdkit -v: not the passphrase, not the volume key (in hex, upper or
# lower case, with or without separators, not even an 8-byte piece of it).
# (table= and literal key= are printed by nbdkit's own -v config log; the
# contract accepts that, so they are not used here.)
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy cryptsetup timeout
plugin_built_or_fail
scratch

# logged NAME SECRETS_FILE plugin-args...: serve with -v, write and read
# through it, then look for every secret in everything printed.
logged ()
{
  local name=$1 secrets=$2; shift 2
  local log="$tmp/$name.log"

  timeout 60 nbdkit -v -f -U - "$plugin" "$@" --run \
    "head -c 1M /dev/urandom > '$tmp/in' &&
     nbdcopy '$tmp/in' \"\$uri\" && nbdcopy \"\$uri\" - | head -c 1M |
     cmp -s - '$tmp/in'" >"$log" 2>&1 \
    || { tail -5 "$log"; fail "$name: serving failed"; }
  grep -q 'debug' "$log" || fail "$name: no -v debug output was captured"
  "$PY" - "$log" "$secrets" <<'EOF' || fail "$name: a secret was logged"
import sys
log = open(sys.argv[1], "rb").read()
low = log.lower()
for line in open(sys.argv[2]):
    kind, value = line.split(" ", 1)
    value = value.rstrip("\n")
    if kind == "text":
        needles = [value.encode()]
    else:   # hex: every 8-byte window, plain and with separators
        digits = value.lower()
        needles = []
        for i in range(0, len(digits) - 15, 2):
            w = digits[i:i + 16]
            needles.append(w.encode())
            pairs = [w[j:j + 2] for j in range(0, 16, 2)]
            needles += [s.join(pairs).encode() for s in (" ", ":", "\\x")]
        needles.append(bytes.fromhex(value))
    for n in needles:
        if n in log or (kind != "text" and n in low):
            sys.exit("FAIL: %s secret found in the log: %r" % (kind, n))
print("no secret in %d bytes of log" % len(log))
EOF
  echo "ok: $name"
}

# LUKS2 with passphrase=+FILE.
pw="secret-pass-$(random_hex 8)"
printf %s "$pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" "$pw"
vk=$(luks_volume_key "$tmp/luks2.img" "$pw")
[ ${#vk} -ge 64 ] || fail "no volume key from luksDump"
printf 'text %s\nhex %s\n' "$pw" "$vk" > "$tmp/secrets2"
logged luks2-passphrase-file "$tmp/secrets2" \
  file="$tmp/luks2.img" passphrase=+"$tmp/pw"

# LUKS2 with passphrase=-FD.
logged luks2-passphrase-fd "$tmp/secrets2" \
  file="$tmp/luks2.img" passphrase=-3 3<"$tmp/pw"

# LUKS1 with a key file.
make_luks1_with_keyfile "$tmp/luks1.img" "$tmp/keyfile" "$tmp/secrets1"
logged luks1-keyfile "$tmp/secrets1" \
  file="$tmp/luks1.img" keyfile="$tmp/keyfile"

# Plain mode with key=+FILE.
key=$(random_hex 64)
printf '%s\n' "$key" > "$tmp/key.hex"
printf 'hex %s\n' "$key" > "$tmp/secrets-plain"
truncate -s 16M "$tmp/plain.img"
logged plain-key-file "$tmp/secrets-plain" \
  file="$tmp/plain.img" cipher=aes-xts-plain64 key=+"$tmp/key.hex"
echo PASS
