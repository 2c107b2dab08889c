# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers of the control tests (tests/test-control-*.sh), sourced after
# functions.sh.  Each test gets its own registry (DMCRYPT_RUNTIME_DIR,
# set by scratch) and its own default socket directory (through
# XDG_RUNTIME_DIR), so it sees only the volumes it started: $registry
# holds an entry per volume, a symlink to its socket in $sockdir.

ctl_bin="$topdir/tools/dmcryptctl"
[ -x "$ctl_bin" ] || fail "$ctl_bin is not built: run make first"
plugin_built_or_fail
requires_cmd nbdkit timeout
scratch
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
sockdir="$XDG_RUNTIME_DIR/dmcrypt"
registry="$DMCRYPT_RUNTIME_DIR"

# dmcryptctl, bounded.
ctl () { timeout 60 "$ctl_bin" "$@"; }

# start_volume NAME plugin-args...: serves NAME in the background on
# $tmp/NAME.nbd (pid in $tmp/NAME.pid, log in $tmp/NAME.log) and waits
# for its control socket.  NAME is also passed as name= unless NAME
# starts with "@" (then the plugin picks the name itself).
start_volume ()
{
  local name=$1 i nameopt=(); shift
  case $name in
    @*) name=${name#@} ;;
    *) nameopt=(name="$name") ;;
  esac
  rm -f "$tmp/$name.pid" "$tmp/$name.nbd"
  nbdkit --log=stderr -U "$tmp/$name.nbd" -P "$tmp/$name.pid" "$plugin" \
    "${nameopt[@]}" "$@" 2>>"$tmp/$name.log" \
    || { cat "$tmp/$name.log" >&2; return 1; }
  for (( i = 0; i < 100; i++ )); do
    [ -s "$tmp/$name.pid" ] && [ -S "$tmp/$name.nbd" ] && break
    sleep 0.1
  done
  [ -s "$tmp/$name.pid" ] || { cat "$tmp/$name.log" >&2; return 1; }
  cleanup_fn "stop_volume '$name'"
}

# stop_volume NAME [SIGNAL]: ends the server and waits (at most 10 s).
stop_volume ()
{
  local pid i
  pid=$(cat "$tmp/$1.pid" 2>/dev/null) || return 0
  kill -"${2:-TERM}" "$pid" 2>/dev/null || return 0
  for (( i = 0; i < 100; i++ )); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  return 0
}

uri_of () { echo "nbd+unix:///?socket=$tmp/$1.nbd"; }

# A libnbd client for the tests: nbdio.py URI COMMAND...
#   write OFFSET FILE      pwrite FILE's bytes at OFFSET, then flush
#   read OFFSET COUNT      pread to stdout
#   trim OFFSET COUNT      trim, then flush
#   ro                     prints 1 if the export is read-only, else 0
#   can-trim               prints 1 if trim is offered, else 0
#   hold-write OFFSET FILE CMD
#                          on one connection: write, run CMD (a shell
#                          command), write again; prints "first:ok"
#                          or "first:ERRNO", "second:..." likewise
#   hold-trim OFFSET COUNT CMD   the same with trims, the second one
#                          of the COUNT bytes after the first
# A failed request prints its errno name on stdout and exits 3.
cat > "$tmp/nbdio.py" <<'EOF'
import errno, subprocess, sys
import nbd

def name(e):
    return errno.errorcode.get(e.errnum, str(e.errnum))

def attempt(label, fn):
    try:
        fn()
        print(label + ":ok")
    except nbd.Error as e:
        print(label + ":" + name(e))

uri, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
h = nbd.NBD()
h.set_strict_mode(0)           # let the server, not libnbd, refuse
h.connect_uri(uri)
try:
    if cmd == "write":
        h.pwrite(open(args[1], "rb").read(), int(args[0]))
        h.flush()
    elif cmd == "read":
        sys.stdout.buffer.write(h.pread(int(args[1]), int(args[0])))
    elif cmd == "trim":
        h.trim(int(args[1]), int(args[0]))
        h.flush()
    elif cmd == "ro":
        print(int(h.is_read_only()))
    elif cmd == "can-trim":
        print(int(h.can_trim()))
    elif cmd in ("hold-write", "hold-trim"):
        off = int(args[0])
        if cmd == "hold-write":
            data = open(args[1], "rb").read()
            op = lambda: (h.pwrite(data, off), h.flush())
            second = op
        else:
            n = int(args[1])
            op = lambda: (h.trim(n, off), h.flush())
            second = lambda: (h.trim(n, off + n), h.flush())
        attempt("first", op)
        sys.stdout.flush()
        subprocess.run(args[2], shell=True, check=True)
        attempt("second", second)
    else:
        sys.exit("nbdio.py: unknown command " + cmd)
except nbd.Error as e:
    print(name(e))
    sys.exit(3)
h.shutdown()
EOF
nbdio () { timeout 60 "$PY" "$tmp/nbdio.py" "$@"; }

# expect_fail WHAT CMD...: CMD must exit 1 and say "Command failed.".
expect_fail ()
{
  local what=$1 rc; shift
  "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
  cat "$tmp/out" "$tmp/err"
  [ $rc -eq 1 ] || fail "$what: exit status $rc, expected 1"
  grep -qx 'Command failed.' "$tmp/err" \
    || fail "$what: no 'Command failed.' line"
}

# info_field NAME 'Label:' -> the value dmcryptctl info prints for it.
info_field ()
{
  ctl info "$1" | sed -n "s/^$2 *//p"
}

# refused_rw_reload NAME 'ERRNO TEXT' REASON: "table --showkeys |
# reload NAME" must fail with dmsetup's line for ERRNO TEXT and say
# REASON, leaving a read-only live table and no inactive one.
refused_rw_reload ()
{
  ctl table --showkeys "$1" > "$tmp/$1.table" || fail "$1: table --showkeys"
  expect_fail "$1: read-write reload" ctl reload "$1" "$tmp/$1.table"
  grep -qx "device-mapper: reload ioctl on $1  failed: $2" "$tmp/err" \
    || fail "$1: read-write reload: not dmsetup's '$2' line"
  grep -q -- "$3" "$tmp/err" || fail "$1: read-write reload: no '$3'"
  [ "$(info_field "$1" 'Tables present:')" = LIVE ] \
    || fail "$1: the refused reload left an inactive table"
  [ "$(info_field "$1" 'State:')" = "ACTIVE (READ-ONLY)" ] \
    || fail "$1: the refused reload changed the live table"
}
