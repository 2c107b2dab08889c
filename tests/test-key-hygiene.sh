#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Key hygiene, end to end through nbdkit:
#  1. output: with -v and every dmcrypt.* debug flag, the trace= file,
#     dmcryptctl's output and the errors of refused starts hold neither
#     the passphrase nor the volume key (plain -v: test-keys-not-logged);
#  2. core dumps: the live server's memory does hold the key (so the
#     scanner is shown to find it), and its core dump (gcore) holds
#     neither key nor passphrase: not in secmem pages (MADV_DONTDUMP),
#     not in OpenSSL's key schedules (crypto/ossl_heap.c), and the
#     passphrase was dropped after unlock; for a passphrase file (LUKS2,
#     argon2id), a key file (LUKS1) and a hex key file (plain mode);
#  3. after "key wipe" the key is nowhere in the server's memory;
#  4. key pages are "dd" in smaps and, when RLIMIT_MEMLOCK allows,
#     locked (VmLck > 0), in a daemonized server (after fork) too.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit cryptsetup timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
ctl_bin="$topdir/tools/dmcryptctl"
[ -x "$ctl_bin" ] || fail "$ctl_bin is not built: run make first"
scratch

# Memory checks read other processes' memory and the lock counters,
# which a sanitizer runtime changes (its mlock does nothing, its shadow
# is terabytes): they run on the ordinary build only.
memory_checks=true
[ -n "${DMCRYPT_SANITIZER:-}" ] && memory_checks=false

# ---- the scanner ---------------------------------------------------------
# scan.py SECRETS (file FILE... | pid PID): prints each secret piece found
# and exits 1 if any.  SECRETS lines: "text VALUE" or "hex DIGITS".  A key
# is looked for in 8-byte pieces: raw, with each 32-bit word byte-swapped
# (OpenSSL's C AES key schedule), and as hex digits in either case.  All
# the pieces are looked for in one pass (one regular expression of them
# all): a core dump is hundreds of MiB, mostly zeros, and a pass per
# piece took most of this test's time.
cat > "$tmp/scan.py" <<'EOF'
import mmap, re, sys

def needles(path):
    out = []
    for line in open(path):
        kind, value = line.rstrip("\n").split(" ", 1)
        if kind == "text":
            out.append(("passphrase", value.encode()))
            continue
        raw = bytes.fromhex(value)
        starts = list(range(0, len(raw) - 7, 8))
        if len(raw) % 8:
            starts.append(len(raw) - 8)
        for i in starts:
            p = raw[i:i + 8]
            out.append(("key bytes %d-%d" % (i, i + 7), p))
            out.append(("key words %d-%d swapped" % (i, i + 7),
                        p[3::-1] + p[7:3:-1]))
            out.append(("key hex %d-%d" % (i, i + 7), p.hex().encode()))
            out.append(("KEY HEX %d-%d" % (i, i + 7),
                        p.hex().upper().encode()))
    return out

def scan(data, where, found):
    seen = set()
    m = PATTERN.search(data)
    while m:
        n = m.group()
        if n not in seen:
            seen.add(n)
            for what in NAMES[n]:
                found.append("%s at %s+0x%x" % (what, where, m.start()))
        m = PATTERN.search(data, m.start() + 1)   # overlapping ones too

def scan_pid(pid, found):
    mem = open("/proc/%s/mem" % pid, "rb", 0)
    for line in open("/proc/%s/maps" % pid):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        name = f[5] if len(f) > 5 else "anon"
        if f[1][0] != "r" or name in ("[vvar]", "[vsyscall]"):
            continue
        step = 16 << 20
        for at in range(lo, hi, step):
            try:
                mem.seek(at)
                chunk = mem.read(min(step + 64, hi - at))
            except OSError:
                continue
            scan(chunk, "%s(%x)" % (name, at), found)

NAMES = {}
for what, n in needles(sys.argv[1]):
    NAMES.setdefault(n, []).append(what)
PATTERN = re.compile(b"|".join(
    re.escape(n) for n in sorted(NAMES, key=len, reverse=True)))
found = []
if sys.argv[2] == "pid":
    scan_pid(sys.argv[3], found)
else:
    for path in sys.argv[3:]:
        with open(path, "rb") as fp:
            if fp.seek(0, 2) == 0:
                continue
            data = mmap.mmap(fp.fileno(), 0, access=mmap.ACCESS_READ)
            scan(data, path.rsplit("/", 1)[-1], found)
for f in sorted(set(found))[:20]:
    print("found: " + f)
sys.exit(1 if found else 0)
EOF
secret_free ()  # secret_free WHAT SECRETS (file FILE... | pid PID)
{
  local what=$1 secrets=$2; shift 2
  "$PY" "$tmp/scan.py" "$secrets" "$@" || fail "$what: a secret was found"
  echo "ok: $what: no secret"
}
secret_found ()  # the scanner's positive control
{
  local what=$1 secrets=$2; shift 2
  "$PY" "$tmp/scan.py" "$secrets" "$@" >/dev/null \
    && fail "$what: the key is not found, so its absence elsewhere proves" \
            "nothing"
  echo "ok: $what: the scanner finds the key"
}

# A client that writes and reads back 1 MiB, prints "ready", then keeps
# its connection (and the server's per-thread key schedules) until
# killed.  With "once" it disconnects at once instead.
cat > "$tmp/client.py" <<'EOF'
import os, sys, time
import nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
data = os.urandom(1 << 20)
h.pwrite(data, 0)
h.flush()
if h.pread(len(data), 0) != data:
    sys.exit("client: read back differs")
print("ready", flush=True)
if len(sys.argv) > 2:
    h.shutdown()
    sys.exit(0)
time.sleep(300)
EOF

# wait_for FILE: up to 30 s for FILE to exist (non-empty).
wait_for ()
{
  local i
  for (( i = 0; i < 300; i++ )); do
    [ -s "$1" ] || [ -S "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# ---- images and secrets --------------------------------------------------
pw="hygiene-$(random_hex 12)"
printf %s "$pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
printf %s "$pw" | cryptsetup luksFormat --batch-mode --type luks2 \
  --pbkdf argon2id --pbkdf-memory 32768 --pbkdf-force-iterations 4 \
  --key-file - "$tmp/luks2.img" >/dev/null || fail "luksFormat luks2"
vk2=$(luks_volume_key "$tmp/luks2.img" "$pw")
[ ${#vk2} -eq 128 ] || fail "no volume key from luksDump"
printf 'text %s\nhex %s\n' "$pw" "$vk2" > "$tmp/secrets-luks2"

make_luks1_with_keyfile "$tmp/luks1.img" "$tmp/keyfile" "$tmp/secrets-luks1"

keyp=$(random_hex 64)
printf '%s\n' "$keyp" > "$tmp/key.hex"
printf 'hex %s\n' "$keyp" > "$tmp/secrets-plain"
truncate -s 16M "$tmp/plain.img"

L2=(file="$tmp/luks2.img" passphrase=+"$tmp/pw")
L1=(file="$tmp/luks1.img" keyfile="$tmp/keyfile")
PL=(file="$tmp/plain.img" cipher=aes-xts-plain64 key=+"$tmp/key.hex")

# ---- 1. output -----------------------------------------------------------
flags=$(nm -D "$plugin" 2>/dev/null | sed -n 's/.* B dmcrypt_debug_//p')
[ -n "$flags" ] || flags="luks queue workers writeout"
dflags=()
for f in $flags; do dflags+=(-D "dmcrypt.$f=1"); done

sock="$tmp/v.sock"
timeout 120 nbdkit -f -v "${dflags[@]}" -U "$sock" -P "$tmp/v.pid" \
  "$plugin" "${L2[@]}" trace="$tmp/trace" control="$tmp/ctl.sock" \
  name=hygiene 2>"$tmp/debug.log" &
server=$!
cleanup_fn "kill $server 2>/dev/null"
wait_for "$tmp/ctl.sock" || { cat "$tmp/debug.log"; fail "server start"; }
timeout 60 "$PY" "$tmp/client.py" "nbd+unix:///?socket=$sock" once \
  >/dev/null || fail "client"
for cmd in "table" "table --inactive" "info" "status" "status --stats" "ls"
do
  # shellcheck disable=SC2086
  timeout 30 "$ctl_bin" $cmd "$tmp/ctl.sock" >>"$tmp/ctl.out" 2>&1
done
kill "$server"; wait "$server"
grep -q 'debug: libcryptsetup: ' "$tmp/debug.log" || fail "no debug output"
[ -s "$tmp/trace" ] || fail "no trace output"
grep -q crypt "$tmp/ctl.out" || fail "no table from dmcryptctl"
echo "debug flags: $(echo $flags); $(wc -l < "$tmp/debug.log") log lines," \
  "$(wc -l < "$tmp/trace") trace lines"
secret_free "-v -D dmcrypt.* log, trace, dmcryptctl" "$tmp/secrets-luks2" \
  file "$tmp/debug.log" "$tmp/trace" "$tmp/ctl.out"

# Refused starts: their one error line names no secret, right or wrong.
refused ()  # refused NAME SECRETS plugin-args...
{
  local name=$1 secrets=$2; shift 2
  timeout 60 nbdkit -U - "$plugin" "$@" --run true \
    </dev/null >"$tmp/$name.err" 2>&1 && fail "$name: accepted"
  grep -qi error "$tmp/$name.err" || fail "$name: no error message"
  secret_free "error: $(head -c 70 "$tmp/$name.err")" "$secrets" \
    file "$tmp/$name.err"
}
wrong="$pw-wrong"
printf %s "$wrong" > "$tmp/wrongpw"
printf 'text %s\ntext %s\nhex %s\n' "$pw" "$wrong" "$vk2" \
  > "$tmp/secrets-wrong"
refused wrong-passphrase "$tmp/secrets-wrong" \
  file="$tmp/luks2.img" passphrase=+"$tmp/wrongpw"
refused wrong-type "$tmp/secrets-luks2" "${L2[@]}" type=luks1
printf '%s\n' "${keyp}0" > "$tmp/odd.hex"
refused odd-key-file "$tmp/secrets-plain" \
  file="$tmp/plain.img" cipher=aes-xts-plain64 key=+"$tmp/odd.hex"
refused short-key "$tmp/secrets-plain" \
  file="$tmp/plain.img" cipher=aes-cbc-essiv:sha256 key="${keyp:0:62}"
refused table-bad-option "$tmp/secrets-plain" file="$tmp/plain.img" \
  table="0 32768 crypt aes-xts-plain64 $keyp 0 x 0 1 frobnicate"
refused table-bad-cipher "$tmp/secrets-plain" file="$tmp/plain.img" \
  table="0 32768 crypt kuznyechik-xts-plain64 $keyp 0 x 0"

if ! $memory_checks; then
  echo "note: memory, core dump and lock checks skipped under" \
       "DMCRYPT_SANITIZER=$DMCRYPT_SANITIZER"
  echo PASS
  exit 0
fi

# ---- 2. core dumps -------------------------------------------------------
# gdb runs the server, so it may always trace it; SIGUSR1 (kept from
# nbdkit) makes gdb write the core.
if ! command -v gdb >/dev/null; then
  echo "note: gdb is not installed: core dump checks skipped"
  have_gdb=false
elif ! timeout 60 gdb -q -nx -batch -ex run --args /bin/true \
        >/dev/null 2>&1; then
  echo "note: gdb cannot run a program here (no ptrace): core dump" \
       "checks skipped"
  have_gdb=false
else
  have_gdb=true
fi

# core_case NAME SECRETS plugin-args...
core_case ()
{
  local name=$1 secrets=$2 pid i; shift 2
  local sock="$tmp/$name.sock" core="$tmp/$name.core"

  rm -f "$sock" "$tmp/$name.pid"
  timeout 300 gdb -q -nx -batch -ex 'set startup-with-shell off' \
    -ex 'handle SIGUSR1 stop print nopass' \
    -ex 'handle SIGPIPE nostop noprint pass' \
    -ex run -ex "gcore $core" -ex kill \
    --args "$nbdkit_program" -f -t 4 -U "$sock" -P "$tmp/$name.pid" \
    "${dmcrypt_entry[@]}" workers=2 "$@" >"$tmp/$name.gdb" 2>&1 &
  local gdb_pid=$!
  cleanup_fn "kill $gdb_pid 2>/dev/null"
  wait_for "$sock" && wait_for "$tmp/$name.pid" \
    || { cat "$tmp/$name.gdb"; fail "$name: server start under gdb"; }
  pid=$(cat "$tmp/$name.pid")
  timeout 300 "$PY" "$tmp/client.py" "nbd+unix:///?socket=$sock" \
    >"$tmp/$name.client" &
  local client=$!
  cleanup_fn "kill $client 2>/dev/null"
  for (( i = 0; i < 300; i++ )); do
    grep -q ready "$tmp/$name.client" && break
    kill -0 "$client" 2>/dev/null || fail "$name: client failed"
    sleep 0.1
  done
  grep -q ready "$tmp/$name.client" || fail "$name: client not ready"

  secret_found "$name: live memory" "$secrets" pid "$pid"
  kill -USR1 "$pid"
  wait "$gdb_pid"
  kill "$client" 2>/dev/null
  [ -s "$core" ] || { cat "$tmp/$name.gdb"; fail "$name: no core written"; }
  echo "$name: core of $(( $(stat -c %s "$core") >> 20 )) MiB"
  secret_free "$name: core dump" "$secrets" file "$core"
  rm -f "$core"
}
if $have_gdb; then
  core_case luks2-passphrase "$tmp/secrets-luks2" "${L2[@]}"
  core_case luks1-keyfile "$tmp/secrets-luks1" "${L1[@]}"
  core_case plain-hex-key "$tmp/secrets-plain" "${PL[@]}"
fi

# ---- 3. key wipe ---------------------------------------------------------
rm -f "$tmp/w.sock" "$tmp/w.pid" "$tmp/w-ctl.sock"
timeout 120 nbdkit -f -U "$tmp/w.sock" -P "$tmp/w.pid" "$plugin" \
  "${L2[@]}" control="$tmp/w-ctl.sock" name=wipe 2>"$tmp/w.log" &
server=$!
cleanup_fn "kill $server 2>/dev/null"
wait_for "$tmp/w-ctl.sock" && wait_for "$tmp/w.pid" \
  || { cat "$tmp/w.log"; fail "wipe: server start"; }
timeout 60 "$PY" "$tmp/client.py" "nbd+unix:///?socket=$tmp/w.sock" once \
  >/dev/null || fail "wipe: client"
pid=$(cat "$tmp/w.pid")
secret_found "before key wipe" "$tmp/secrets-luks2" pid "$pid"
timeout 30 "$ctl_bin" suspend "$tmp/w-ctl.sock" \
  && timeout 30 "$ctl_bin" message "$tmp/w-ctl.sock" 0 key wipe \
  || fail "suspend + key wipe"
secret_free "after key wipe, all memory" "$tmp/secrets-luks2" pid "$pid"
kill "$server"; wait "$server"

# ---- 4. locks and dump flags ---------------------------------------------
# Daemonized (nbdkit forks after unlocking): the child must lock again.
limit=$(ulimit -l)
rm -f "$tmp/d.sock" "$tmp/d.pid"
timeout 60 nbdkit -U "$tmp/d.sock" -P "$tmp/d.pid" "$plugin" "${L2[@]}" \
  2>"$tmp/d.log" || { cat "$tmp/d.log"; fail "daemon start"; }
wait_for "$tmp/d.pid" || fail "daemon: no pid file"
pid=$(cat "$tmp/d.pid")
cleanup_fn "kill $pid 2>/dev/null"
timeout 60 "$PY" "$tmp/client.py" "nbd+unix:///?socket=$tmp/d.sock" once \
  >/dev/null || fail "daemon: client"
locked_kib=$(awk '/^VmLck:/ {print $2}' "/proc/$pid/status")
want_locks=0
if [ "$limit" = unlimited ] || [ "$limit" -ge 64 ]; then want_locks=1; fi
# Anonymous mappings with "dd": the key pages (a few KiB each) and the
# OpenSSL arena (4 MiB); with locking expected, "lo" on every key page
# (secmem locks them again in the forked child).
"$PY" - "$pid" "$want_locks" <<'EOF' || fail "key pages in smaps"
import sys
dd = []
for line in open("/proc/%s/smaps" % sys.argv[1]):
    f = line.split()
    if "-" in f[0] and len(f) >= 5 and ":" in f[3]:
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        size_kib, anon = (hi - lo) >> 10, len(f) == 5
    elif f[0] == "VmFlags:" and "dd" in f[1:] and anon:
        dd.append((size_kib, "lo" in f[1:]))
print("dd mappings (KiB, locked):", dd)
keys = [locked for kib, locked in dd if kib <= 64]
if not keys or not any(kib == 4096 for kib, _ in dd):
    sys.exit("FAIL: want small key pages and the 4 MiB arena as dd")
if sys.argv[2] == "1" and not all(keys):
    sys.exit("FAIL: a key page is not locked in the daemonized server")
EOF
if [ $want_locks = 1 ]; then
  [ "${locked_kib:-0}" -gt 0 ] \
    || fail "daemonized server: VmLck is ${locked_kib:-?} kB (limit $limit)"
  echo "ok: daemonized server locks $locked_kib kB (RLIMIT_MEMLOCK $limit)"
else
  echo "note: RLIMIT_MEMLOCK is $limit KiB: locking not expected"
fi
kill "$pid"
echo PASS
