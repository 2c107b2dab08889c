# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers sourced by every tests/test-*.sh script.
#
# A test exits 0 when it passed, 77 when it skipped (after printing the
# reason), anything else when it failed.

set -u
set -o pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
topdir=$(cd "$srcdir/.." && pwd)
plugin="$topdir/plugin/nbdkit-dmcrypt-plugin.so"
# The third-party data the tests read (kernel transcripts, cryptsetup's
# test images): tests/data holds a copy of what they need from
# ../shared, in its layout, so that the suite never runs only in part.
shared="$topdir/tests/data"
[ -d "$shared/testdata" ] || shared="$topdir/../shared"
PY=/usr/bin/python3

_cleanups=()
cleanup_fn () { _cleanups+=("$*"); }
_run_cleanups ()
{
  local i
  for (( i=${#_cleanups[@]}-1; i>=0; i-- )); do eval "${_cleanups[$i]}"; done
}
trap _run_cleanups EXIT

skip () { echo "SKIP: $*"; exit 77; }
# The suite's long tests run a quick variant that still covers every
# kind of case; DMCRYPT_TEST_FULL=1 (make check-full) runs them whole.
# "full_run" is true in the whole run; a test prints which it ran.
full_run () { [ "${DMCRYPT_TEST_FULL:-0}" = 1 ]; }
# A line for the suite's own output: tests/run-tests.sh prints a test's
# REPORT lines under its verdict (the kernel tests name each case so).
report () { echo "REPORT: $*"; }
fail () { echo "FAIL: $*" >&2; exit 1; }

requires () { "$@" >/dev/null 2>&1 || skip "requires: $*"; }
requires_cmd () { local c; for c in "$@"; do command -v "$c" >/dev/null || skip "$c is not installed"; done; }
requires_root () { [ "$(id -u)" -eq 0 ] || skip "needs root: $*"; }
requires_shared () { [ -e "$shared/$1" ] || skip "../shared/$1 is absent"; }

# A scratch directory removed at exit.  It also holds the test's own
# registry of running volumes (DMCRYPT_RUNTIME_DIR, control/sockdir.h),
# so that every server a test starts, control socket and name, stays
# apart from other tests and from the user's own volumes.  Made here, so
# that a server the test runs as another user ignores it (not its own)
# instead of taking it.
scratch ()
{
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-test.XXXXXX")
  cleanup_fn "rm -rf '$tmp'"
  export DMCRYPT_RUNTIME_DIR="$tmp/registry"
  mkdir -m 0700 "$DMCRYPT_RUNTIME_DIR"
}

# Fast LUKS formatting: cryptsetup's KDF benchmark is skipped.
# A 32 MiB LUKS2 image ($tmp/luks2.img, 4096-byte sectors, passphrase
# blk-pw in $tmp/pw) attached to a loop device, $loop (as root).
loop_luks2_image ()
{
  printf %s "blk-pw" > "$tmp/pw"
  truncate -s 32M "$tmp/luks2.img"
  luks_format luks2 "$tmp/luks2.img" blk-pw --sector-size 4096
  loop=$(losetup -f --show "$tmp/luks2.img" 2>"$tmp/losetup.err") \
    || skip "losetup cannot attach a loop device here: $(cat "$tmp/losetup.err")"
  cleanup_fn "losetup -d '$loop' 2>/dev/null"
  echo "using $loop"
}

luks_format ()  # luks_format TYPE IMAGE PASSPHRASE [extra cryptsetup args]
{
  local type=$1 img=$2 pw=$3; shift 3
  local kdf=(--pbkdf pbkdf2 --pbkdf-force-iterations 1000)
  printf %s "$pw" | cryptsetup luksFormat --batch-mode --type "$type" \
    "${kdf[@]}" --key-file - "$@" "$img" >/dev/null
}

# Volume key of a LUKS image as hex, through cryptsetup.
luks_volume_key_file ()  # luks_volume_key_file IMAGE KEYFILE
{
  cryptsetup luksDump --dump-volume-key --batch-mode --key-file "$2" "$1" \
    | awk '/MK dump:/ {p=1; sub(/.*MK dump:/, "")} p' \
    | tr -d ' \t\n:' | head -c 2048
}

luks_volume_key ()  # luks_volume_key IMAGE PASSPHRASE
{
  local f
  f=$(mktemp); printf %s "$2" > "$f"
  luks_volume_key_file "$1" "$f"
  rm -f "$f"
}

# A 16 MiB LUKS1 image keyed by a new 64-byte KEYFILE; SECRETS gets the
# volume key and the key file as "hex ..." lines, the secrets that the
# key hygiene tests search for.
make_luks1_with_keyfile ()  # IMAGE KEYFILE SECRETS
{
  local vk
  head -c 64 /dev/urandom > "$2"
  truncate -s 16M "$1"
  cryptsetup luksFormat --batch-mode --type luks1 --pbkdf pbkdf2 \
    --iter-time 1 "$1" "$2" >/dev/null || fail "luksFormat luks1"
  vk=$(luks_volume_key_file "$1" "$2")
  [ ${#vk} -ge 64 ] || fail "no volume key from luksDump (luks1)"
  printf 'hex %s\nhex %s\n' "$vk" "$(od -An -v -tx1 "$2" | tr -d ' \n')" \
    > "$3"
}

# Runs nbdkit with the in-tree plugin, captive around a command.
dmcrypt_run ()  # dmcrypt_run [nbdkit args...] -- plugin args... --run CMD
{
  nbdkit -U - "$plugin" "$@"
}

# ---- Helpers of the robustness tests (stress, ext4, bad input, ...) ----

# BYTES random bytes as lower-case hex digits.
random_hex ()  # random_hex BYTES
{
  head -c "$1" /dev/urandom | od -An -v -tx1 | tr -d ' \n'
}

# The sha256 of a file, digits only.
sha256_of ()  # sha256_of FILE
{
  sha256sum "$1" | cut -d' ' -f1
}

# A test of the plugin fails (not skips) when the plugin was not built.
plugin_built_or_fail ()
{
  [ -f "$plugin" ] || fail "$plugin is not built: run make first"
}

# The trace analyser; a test that reads traces with it fails (not skips)
# when it was not built.
analyser="$topdir/tools/dmcrypt-trace"
analyser_built_or_fail ()
{
  [ -x "$analyser" ] || fail "$analyser is not built: run make first"
}

# A gnuplot first on PATH that keeps what it is told -- its arguments,
# the files among them and, called without any, its standard input --
# in DIR/gnuplot-*.log, one file a call, and lets the real gnuplot draw
# it: tests read a plot's title and legend there, not in its pixels.
# gnuplot_log PNG: the log of the call that drew PNG.
gnuplot_recorder ()  # gnuplot_recorder DIR
{
  local real
  real=$(command -v gnuplot) || fail "gnuplot_recorder: no gnuplot"
  mkdir -p "$1" || fail "gnuplot_recorder: cannot make $1"
  gnuplot_logs=$1
  cat > "$1/gnuplot" <<EOF
#!/usr/bin/env bash
log=\$(mktemp "$1/gnuplot-XXXXXX.log") || exit 1
for a in "\$@"; do
  printf '%s\n' "\$a"
  [ -f "\$a" ] && cat "\$a"
done > "\$log"
if [ \$# -eq 0 ]; then tee -a "\$log" | "$real"; exit; fi
exec "$real" "\$@"
EOF
  chmod +x "$1/gnuplot"
  PATH=$1:$PATH
}
gnuplot_log ()  # gnuplot_log PNG
{
  grep -l -F -e "'$1'" -e "\"$1\"" "$gnuplot_logs"/gnuplot-*.log \
    2> /dev/null | head -n 1
}
# The title (set title, or a multiplot's) of the plot drawn into PNG,
# as gnuplot prints it; the entries of its legend, one a line.
gnuplot_title ()  # gnuplot_title PNG
{
  local log
  log=$(gnuplot_log "$1")
  [ -n "$log" ] || fail "no gnuplot call drew $1"
  sed -n -e 's/^set multiplot layout [0-9,]* title \(".*"\)$/print \1/p' \
    -e 's/^set title \(".*"\)$/print \1/p' "$log" | head -n 1 \
    > "$gnuplot_logs/title.gp"
  [ -s "$gnuplot_logs/title.gp" ] || fail "$1 has no title in $log"
  gnuplot "$gnuplot_logs/title.gp" 2>&1
}
gnuplot_keys ()  # gnuplot_keys PNG
{
  local log
  log=$(gnuplot_log "$1")
  [ -n "$log" ] || fail "no gnuplot call drew $1"
  grep '^plot ' "$log" | grep -o -E "title (\"[^\"]*\"|'[^']*')" \
    | sed -E "s/^title [\"'](.*)[\"']$/\1/"
}

# Waits up to 10 s for nbdfuse (PID) to mount: until FILE (its pidfile,
# or the mounted file) is there and not empty.  Fails if PID exits first.
fuse_wait_ready ()  # fuse_wait_ready PID FILE
{
  local i
  for (( i = 0; i < 100; i++ )); do
    [ -s "$2" ] && return 0
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  [ -s "$2" ]
}

# ---- Helpers of the compatibility tests (oracle, qemu, luks filter) ----

# Seconds allowed to each server run or external tool of these tests.
compat_timeout=${COMPAT_TIMEOUT:-180}

# The independent dm-crypt implementation, tests/oracle.py.
oracle () { "$PY" "$srcdir/oracle.py" "$@"; }

requires_oracle ()
{
  "$PY" -c 'import cryptography' 2>/dev/null \
    || skip "$PY lacks the cryptography package (python3-cryptography)"
}

# BYTES random bytes into FILE.
random_file ()  # random_file FILE BYTES
{
  head -c "$2" /dev/urandom > "$1"
  [ "$(stat -c %s "$1")" -eq "$2" ] || fail "random_file $1: short"
}

# Passes quietly-ish when EXPECTED and ACTUAL hold the same bytes; else
# prints sizes, hashes and which 512-byte sectors differ, and fails.
expect_same ()  # expect_same WHAT EXPECTED ACTUAL
{
  if cmp -s "$2" "$3"; then
    echo "  same: $1 ($(stat -c %s "$3") bytes)"
    return 0
  fi
  echo "MISMATCH: $1"
  "$PY" - "$2" "$3" <<'PYEOF' >&2
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
print("  expected %s: %d bytes; actual %s: %d bytes"
      % (sys.argv[1], len(a), sys.argv[2], len(b)))
n = min(len(a), len(b))
bad = [s for s in range(0, n, 512) if a[s:s + 512] != b[s:s + 512]]
if bad:
    first = next(i for i in range(bad[0], n) if a[i] != b[i])
    print("  first differing byte at %d; %d of %d sectors differ; "
          "sectors: %s%s" % (first, len(bad), (n + 511) // 512,
                             " ".join(str(s // 512) for s in bad[:12]),
                             " ..." if len(bad) > 12 else ""))
PYEOF
  fail "$1: bytes differ"
}

# Fails unless two numbers are equal, naming both sources.
expect_equal ()  # expect_equal WHAT EXPECTED ACTUAL
{
  [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
  echo "  equal: $1 = $3"
}

# Unpacks cryptsetup's test archive NAME (testdata/cryptsetup/NAME in
# tests/data, else in ../shared) into the current directory, sparse.
unpack_cryptsetup_images ()  # unpack_cryptsetup_images NAME.tar.xz
{
  local tarball=testdata/cryptsetup/$1 dir
  for dir in "$topdir/tests/data" "$topdir/../shared"; do
    [ -f "$dir/$tarball" ] && break
  done
  [ -f "$dir/$tarball" ] \
    || skip "$tarball is in neither tests/data nor ../shared"
  tar -xJSf "$dir/$tarball" --no-same-owner || fail "cannot unpack $tarball"
}

# The plugin must not start on IMAGE with ARGS: nbdkit exits 1 after one
# error line matching PATTERN (grep -E), and IMAGE is left as it was.
expect_refused ()  # expect_refused WHAT PATTERN IMAGE [plugin-args...]
{
  local what=$1 pattern=$2 image=$3 before rc=0; shift 3
  before=$(sha256_of "$image")
  timeout "$compat_timeout" nbdkit -U - "$plugin" "$image" "$@" \
    --run true </dev/null >"$tmp/refused.log" 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || { cat "$tmp/refused.log"; fail "$what: exit $rc, not 1"; }
  [ "$(grep -c 'error:' "$tmp/refused.log")" -eq 1 ] \
    || { cat "$tmp/refused.log"; fail "$what: not exactly one error line"; }
  grep -Eq "$pattern" "$tmp/refused.log" \
    || { cat "$tmp/refused.log"; fail "$what: no reason"; }
  expect_equal "$what: image unchanged" "$before" "$(sha256_of "$image")"
  echo "  refused: $what: $(grep 'error:' "$tmp/refused.log")"
}

# Runs CMD (which sees $uri) against the plugin serving with ARGS.
# Stdin is /dev/null, so a loop reading its own stdin may call it.
serve_dmcrypt ()  # serve_dmcrypt CMD plugin-args...
{
  local cmd=$1; shift
  timeout "$compat_timeout" nbdkit -U - "$plugin" "$@" --run "$cmd" \
    </dev/null
}

# Runs CMD against nbdkit's luks filter over IMG.  The filter of nbdkit
# 1.32 knows the plain and plain64 IV generators only (no essiv), and
# must only see valid LUKS1 images.
serve_luks_filter ()  # serve_luks_filter IMG PWFILE CMD
{
  timeout "$compat_timeout" nbdkit -U - file "$1" --filter=luks \
    passphrase=+"$2" --run "$3" </dev/null
}

# qemu's LUKS1 driver as a second opinion: the plaintext of IMG into OUT,
# and IN written as the plaintext of IMG.
_qemu_luks_opts () { echo "driver=luks,key-secret=sec0,file.filename=$1"; }
qemu_luks_read ()  # qemu_luks_read IMG PWFILE OUT
{
  timeout "$compat_timeout" qemu-img convert \
    --object secret,id=sec0,file="$2" \
    --image-opts "$(_qemu_luks_opts "$1")" -O raw "$3"
}
qemu_luks_write ()  # qemu_luks_write IN IMG PWFILE
{
  timeout "$compat_timeout" qemu-img convert -n -f raw \
    --object secret,id=sec0,file="$3" \
    --target-image-opts "$1" "$(_qemu_luks_opts "$2")"
}
qemu_luks_size ()  # qemu_luks_size IMG PWFILE
{
  timeout "$compat_timeout" qemu-img info --output=json \
    --object secret,id=sec0,file="$2" --image-opts "$(_qemu_luks_opts "$1")" \
    | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["virtual-size"])'
}

# ---- Forcing engine parameters on every test (docs/engine.md) ----
# DMCRYPT_TEST_PARAMS="scheduler=fifo workers=3" tests/run-tests.sh runs
# the whole suite with those plugin parameters: an nbdkit wrapper first
# on PATH (so "timeout nbdkit" finds it too) inserts them right after
# the plugin's path, and a test's own parameters, later on the line,
# still win.
dmcrypt_force_params ()
{
  local dir real
  [ -n "${DMCRYPT_TEST_PARAMS:-}" ] || return 0
  real=$(command -v nbdkit) || return 0
  dir=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-force.XXXXXX")
  cleanup_fn "rm -rf '$dir'"
  cat > "$dir/nbdkit" <<EOF
#!/usr/bin/env bash
args=()
for a in "\$@"; do
  args+=("\$a")
  [ "\$a" = "$plugin" ] && args+=($DMCRYPT_TEST_PARAMS)
done
exec "$real" "\${args[@]}"
EOF
  # Tests may run nbdkit as another user (test-readonly.sh).
  chmod 755 "$dir" "$dir/nbdkit"
  PATH="$dir:$PATH"
}

# ---- Sanitizer runs (make check-asan, make check-tsan) ----
# With DMCRYPT_SANITIZER=asan|tsan, "nbdkit" is tests/bin/nbdkit, which
# preloads the sanitizer runtime (and tests/sanitizer-preload.c, built
# here) into the real nbdkit, and into nothing it runs.
if [ -n "${DMCRYPT_SANITIZER:-}" ] && [ -z "${DMCRYPT_REAL_NBDKIT:-}" ] &&
   DMCRYPT_REAL_NBDKIT=$(command -v nbdkit); then
  _sandir=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-san.XXXXXX")
  cleanup_fn "rm -rf '$_sandir'"
  ${CC:-gcc} -shared -fPIC -o "$_sandir/preload.so" \
    "$srcdir/sanitizer-preload.c" || fail "cannot build the preload"
  chmod 755 "$_sandir"           # nbdkit may run as another user
  export DMCRYPT_REAL_NBDKIT DMCRYPT_SANITIZER_PRELOAD="$_sandir/preload.so"
  PATH="$srcdir/bin:$PATH"
fi
dmcrypt_force_params
# nbdkit itself, not a wrapper, for what runs it directly (gdb,
# valgrind), and the words that name dmcrypt on its command line.
nbdkit_program=${DMCRYPT_REAL_NBDKIT:-$(command -v nbdkit || echo nbdkit)}
dmcrypt_entry=("$plugin")

# ---- The suite through the filter (make check-filter) ----
# DMCRYPT_FRONTEND=filter tests/run-tests.sh runs the tests with the
# filter over nbdkit's file plugin where they name the plugin: an nbdkit
# wrapper first on PATH turns "nbdkit ... PLUGIN.so ARGS" into
# "nbdkit ... --filter=FILTER.so file ARGS" (file= and the bare image
# then go to the file plugin; --help and --dump-plugin still describe
# the plugin).  The filter opens its volume after nbdkit forked, so
# under --run the command starts even when the volume could not open
# (the server then refuses connections): the wrapper runs a --run
# command only once a connection was served, as the plugin runs it only
# once the volume opened.  Tests of what only the plugin does skip with
# the reason (requires_plugin_frontend).
filter_so="$topdir/filter/nbdkit-dmcrypt-filter.so"
requires_plugin_frontend ()  # requires_plugin_frontend WHY
{
  [ "${DMCRYPT_FRONTEND:-plugin}" = plugin ] \
    || skip "the filter front end: $*"
}
dmcrypt_frontend ()
{
  local dir real
  case ${DMCRYPT_FRONTEND:-plugin} in
    plugin) return 0 ;;
    filter) ;;
    *) fail "DMCRYPT_FRONTEND=$DMCRYPT_FRONTEND: plugin or filter" ;;
  esac
  [ -f "$filter_so" ] || fail "$filter_so is not built: run make first"
  dmcrypt_entry=(--filter="$filter_so" file)
  real=$(command -v nbdkit) || return 0
  dir=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-frontend.XXXXXX")
  cleanup_fn "rm -rf '$dir'"
  cat > "$dir/nbdkit" <<EOF
#!/usr/bin/env bash
case " \$* " in
  *" --help "*|*" --dump-plugin "*) exec "$real" "\$@" ;;
esac
args=() prev=
for a in "\$@"; do
  if [ "\$a" = "$plugin" ]; then args+=(--filter="$filter_so" file)
  elif [ "\$prev" = --run ]; then
    args+=("nbdinfo --size \"\\\$uri\" >/dev/null 2>&1 && { \$a
}")
  else args+=("\$a"); fi
  prev=\$a
done
exec "$real" "\${args[@]}"
EOF
  chmod 755 "$dir" "$dir/nbdkit"
  PATH="$dir:$PATH"
}
dmcrypt_frontend
