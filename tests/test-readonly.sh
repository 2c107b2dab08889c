#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nbdkit -r never writes a byte to the image: not on reads, not when a
# client tries to write, and not when libcryptsetup would repair a
# damaged LUKS2 header copy.  An image the server may only read is
# served read-only.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy cryptsetup timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch

# A client that sends writes, zeroes and trims anyway (libnbd's own checks
# are switched off) and wants every one refused with EPERM or EROFS.
cat > "$tmp/try-writes.py" <<'EOF'
import errno, sys
import nbd
h = nbd.NBD()
h.set_strict_mode(0)
h.connect_uri(sys.argv[1])
if not h.is_read_only():
    sys.exit("FAIL: export is not advertised read-only")
tries = [("pwrite", lambda: h.pwrite(b"x" * 4096, 0)),
         ("unaligned pwrite", lambda: h.pwrite(b"y" * 10, 4095)),
         ("zero", lambda: h.zero(4096, 8192)),
         ("trim", lambda: h.trim(4096, 8192))]
for name, call in tries:
    try:
        call()
    except nbd.Error as e:
        if e.errnum not in (errno.EPERM, errno.EROFS):
            sys.exit("FAIL: %s refused with %s, not EPERM/EROFS"
                     % (name, e.string))
        continue
    sys.exit("FAIL: %s on a read-only export succeeded" % name)
h.flush()
h.shutdown()
print("writes, zeroes and trims refused")
EOF

# serve_ro NAME OUT nbdkit-args...: copy the plaintext out, try writes.
# The server runs as the user in the array run_as (empty: as we are).
run_as=()
serve_ro ()
{
  local name=$1 out=$2; shift 2
  timeout 60 "${run_as[@]}" nbdkit -U - "$@" --run \
    "nbdcopy \"\$uri\" '$out' && '$PY' '$tmp/try-writes.py' \"\$uri\"" \
    2>"$tmp/$name.log"
  local rc=$?
  cat "$tmp/$name.log"
  [ $rc -eq 0 ] || fail "$name: read-only serving failed"
  # nbdkit itself logs the refused requests; nothing else is an error.
  grep -v 'invalid request' "$tmp/$name.log" | grep -i 'error' \
    && fail "$name: errors logged while serving read-only"
  return 0
}

printf %s "ro-pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" ro-pw
# Some plaintext to read back.
timeout 60 nbdkit -U - "$plugin" file="$tmp/luks2.img" passphrase=+"$tmp/pw" \
  --run "head -c 3M /dev/urandom | nbdcopy - \"\$uri\"" \
  || fail "cannot write the initial plaintext"
cp "$tmp/luks2.img" "$tmp/damaged.img"

# 1. -r on a healthy image.
sum=$(sha256_of "$tmp/luks2.img")
serve_ro healthy "$tmp/healthy.raw" -r "$plugin" file="$tmp/luks2.img" \
  passphrase=+"$tmp/pw"
[ "$(sha256_of "$tmp/luks2.img")" = "$sum" ] \
  || fail "-r: the image changed"
echo "ok: -r leaves a healthy LUKS2 image unchanged"

# 2. -r on a LUKS2 image whose primary header is damaged: a few bytes of
# the primary JSON area (it starts at 4 KiB) break its checksum, while the
# secondary copy (at 16 KiB, the default header size) stays intact.
printf 'DAMAGED' | dd of="$tmp/damaged.img" bs=1 seek=$((4096 + 64)) \
  conv=notrunc status=none
dsum=$(sha256_of "$tmp/damaged.img")
serve_ro damaged "$tmp/damaged.raw" -r "$plugin" file="$tmp/damaged.img" \
  passphrase=+"$tmp/pw"
[ "$(sha256_of "$tmp/damaged.img")" = "$dsum" ] \
  || fail "-r: the image with a damaged primary header was written to"
cmp -s "$tmp/healthy.raw" "$tmp/damaged.raw" \
  || fail "-r: the damaged-header image shows different plaintext"
echo "ok: -r opens a damaged primary header from the secondary, no write"
# Show that the damage is one libcryptsetup would repair, so the check
# above means something (the repair needs metadata locking, which an
# ordinary user may not have: then this only informs).
cp "$tmp/damaged.img" "$tmp/control.img"
cryptsetup luksDump "$tmp/control.img" >/dev/null 2>&1
if [ "$(sha256_of "$tmp/control.img")" != "$dsum" ]; then
  echo "ok: cryptsetup luksDump itself repairs (writes) that damage"
else
  echo "note: cryptsetup luksDump did not repair the damage here"
fi

# 3. An image the server may only read is served read-only, without -r.
# Root may write any file whatever its mode, so root runs the server as
# nobody for this part.
chmod 0444 "$tmp/luks2.img"
if [ "$(id -u)" -eq 0 ]; then
  run_as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  chmod 0777 "$tmp"     # nobody writes the plaintext copy here
  chmod 0644 "$tmp/pw" "$tmp/try-writes.py"
  "${run_as[@]}" test -r "$plugin" \
    || fail "nobody cannot read $plugin: cannot check a 0444 image as root"
fi
serve_ro mode-0444 "$tmp/mode0444.raw" "$plugin" file="$tmp/luks2.img" \
  passphrase=+"$tmp/pw"
[ "$(sha256_of "$tmp/luks2.img")" = "$sum" ] \
  || fail "0444: the image changed"
cmp -s "$tmp/healthy.raw" "$tmp/mode0444.raw" \
  || fail "0444: different plaintext"
[ "$(grep -c 'luks2.img is not writable (Permission denied): serving it read-only' \
      "$tmp/mode-0444.log")" -eq 1 ] \
  || fail "0444: the server did not say once why it serves read-only"
grep -q 'serving it read-only' "$tmp/healthy.log" \
  && fail "-r: a read-only notice although -r was asked for"
echo "ok: a 0444 image is served read-only and unchanged, and it says so"
echo PASS
