# Helpers sourced by every tests/test-*.sh script.
#
# A test exits 0 when it passed, 77 when it skipped (after printing the
# reason), anything else when it failed.

set -u
set -o pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
topdir=$(cd "$srcdir/.." && pwd)
plugin="$topdir/plugin/nbdkit-dmcrypt-plugin.so"
shared="$topdir/../shared"
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
fail () { echo "FAIL: $*" >&2; exit 1; }

requires () { "$@" >/dev/null 2>&1 || skip "requires: $*"; }
requires_cmd () { local c; for c in "$@"; do command -v "$c" >/dev/null || skip "$c is not installed"; done; }
requires_root () { [ "$(id -u)" -eq 0 ] || skip "needs root: $*"; }
requires_shared () { [ -e "$shared/$1" ] || skip "../shared/$1 is absent"; }

# A scratch directory removed at exit.
scratch ()
{
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-test.XXXXXX")
  cleanup_fn "rm -rf '$tmp'"
}

# Fast LUKS formatting: cryptsetup's KDF benchmark is skipped.
luks_format ()  # luks_format TYPE IMAGE PASSPHRASE [extra cryptsetup args]
{
  local type=$1 img=$2 pw=$3; shift 3
  local kdf=(--pbkdf pbkdf2 --pbkdf-force-iterations 1000)
  [ "$type" = luks1 ] && kdf=(--pbkdf pbkdf2 --iter-time 1)
  printf %s "$pw" | cryptsetup luksFormat --batch-mode --type "$type" \
    "${kdf[@]}" --key-file - "$@" "$img" >/dev/null
}

# Volume key of a LUKS image as hex, through cryptsetup.
luks_volume_key ()  # luks_volume_key IMAGE PASSPHRASE
{
  local f
  f=$(mktemp); printf %s "$2" > "$f"
  cryptsetup luksDump --dump-volume-key --batch-mode --key-file "$f" "$1" \
    | awk '/MK dump:/ {p=1; sub(/.*MK dump:/, "")} p' \
    | tr -d ' \t\n:' | head -c 2048
  rm -f "$f"
}

# Runs nbdkit with the in-tree plugin, captive around a command.
dmcrypt_run ()  # dmcrypt_run [nbdkit args...] -- plugin args... --run CMD
{
  nbdkit -U - "$plugin" "$@"
}
