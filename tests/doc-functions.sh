# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the command blocks of the documentation as a user would, for
# tests/test-doc-commands*.sh (sourced after functions.sh).  Which blocks
# are commands: "Commands in the documentation" in docs/testing.md, and
# tests/doc-blocks.py, which extracts them.
#
# Each document's blocks run in order in one bash session (state carries
# over, as for a user who follows the document from the top), with
# set -e -o pipefail and stdin from /dev/null (nothing may prompt), in a
# directory of their own, each block for at most $doc_block_timeout
# seconds.  The environment is the one a user has after "make install":
# the directory $tmp/bin, first on PATH, holds
#   nbdkit         tests/doc-nbdkit: "dmcrypt" is the built plugin, servers
#                  listen on Unix sockets in the scratch directory only,
#                  and the test learns of every server, to stop it;
#   dmcryptctl, dmcrypt-trace   the built tools (make install puts them
#                  into $BINDIR; the benchmarks' seeker stays in tools/);
#   nbdsh          Debian's, run by $PY: the python3 first on PATH may
#                  be another, without the nbd module;
#   cryptsetup     in the quick run (not with full_run) tests/doc-cryptsetup:
#                  new keyslots get a cheap KDF unless the command names
#                  its cost, as the documents are not about the KDF.
# XDG_RUNTIME_DIR and TMPDIR point into the scratch directory, so that
# control sockets and temporary files stay there.

doc_block_timeout=${DOC_BLOCK_TIMEOUT:-180}

# The documents whose blocks are run.
doc_documents ()
{
  local d
  echo README.md
  echo plugin/nbdkit-dmcrypt-plugin.pod
  echo filter/nbdkit-dmcrypt-filter.pod
  echo tools/dmcryptctl.pod
  for d in "$topdir"/docs/*.md; do echo "docs/$(basename "$d")"; done
}

# Documents that must hold commands: a README that lost its blocks to a
# bad edit must not pass for one whose blocks all work.
doc_must_have_commands () { case $1 in README.md|*.pod) return 0 ;; esac; return 1; }

doc_setup ()
{
  local t real
  requires_cmd nbdkit nbdinfo nbdcopy cryptsetup qemu-img realpath setsid
  plugin_built_or_fail
  for t in dmcryptctl dmcrypt-trace; do
    [ -x "$topdir/tools/$t" ] || fail "tools/$t is not built: run make first"
  done
  scratch
  real=$(command -v nbdkit)
  mkdir "$tmp/bin"
  ln -s "$srcdir/doc-nbdkit" "$tmp/bin/nbdkit"
  for t in dmcryptctl dmcrypt-trace; do
    ln -s "$topdir/tools/$t" "$tmp/bin/$t"
  done
  printf '#!/bin/sh\nexec %s -m nbd "$@"\n' "$PY" > "$tmp/bin/nbdsh"
  chmod +x "$tmp/bin/nbdsh"
  export DMCRYPT_DOC_REAL_NBDKIT=$real DMCRYPT_DOC_PLUGIN=$plugin
  export DMCRYPT_DOC_FILTER=$topdir/filter/nbdkit-dmcrypt-filter.so
  if full_run; then
    doc_variant="full run: cryptsetup's own KDF defaults"
  else
    ln -s "$srcdir/doc-cryptsetup" "$tmp/bin/cryptsetup"
    export DMCRYPT_DOC_REAL_CRYPTSETUP=$(command -v cryptsetup)
    doc_variant="quick run: new keyslots with a cheap KDF;"
    doc_variant+=" DMCRYPT_TEST_FULL=1 for cryptsetup's defaults"
  fi
}

# Prints the blocks of DOC that MODE runs, as "NNN LINE" lines, and a
# "skip:" line for each block left out.  MODE "plain" runs every block
# that needs no FUSE; "fuse" runs the document up to its last FUSE block,
# which needs the blocks before it (what comes after, plain has run).
_doc_select ()  # _doc_select INDEX DOC MODE
{
  local n line needs picked=() last_fuse=-1
  while read -r n line needs; do
    case ",$needs," in
      *,root,*) if [ "$(id -u)" -ne 0 ]; then
                  echo "skip: $2:$line needs root"; continue
                fi ;;
    esac
    case ",$needs," in
      *,fuse,*) if [ "$3" = plain ]; then
                  echo "skip: $2:$line needs FUSE (test-doc-commands-fuse.sh)"
                  continue
                fi
                last_fuse=${#picked[@]} ;;
    esac
    picked+=("$n $line")
  done < "$1"
  if [ "$3" = fuse ]; then
    picked=("${picked[@]:0:$((last_fuse + 1))}")
  fi
  [ ${#picked[@]} -eq 0 ] || printf '%s\n' "${picked[@]}"
}

# The script of one session: BLOCKS' files sourced in order, each noting
# its number and start time in STATE/current and its output in STATE/NNN.out.
_doc_session_script ()  # _doc_session_script SELECTED BLOCKS STATE WORK
{
  local n line
  cat <<'EOF'
set -e -o pipefail
trap 'echo "doc test: exit status $? from: $BASH_COMMAND" >&2' ERR
EOF
  printf 'cd %q\n' "$4"
  while read -r n line; do
    printf 'echo "%s $EPOCHSECONDS" | tee -a %q > %q\n' "$n" "$3/times" \
      "$3/current"
    printf 'source %q > %q 2>&1\n' "$2/$n.sh" "$3/$n.out"
  done < "$1"
  printf 'echo "done $EPOCHSECONDS" | tee -a %q > %q\n' "$3/times" \
    "$3/current"
}

# Runs the session SCRIPT in a process group of its own, killing the group
# when a block runs longer than $doc_block_timeout.  Prints the number of
# the block that timed out, if one did; returns the session's status.
_doc_run_session ()  # _doc_run_session SCRIPT STATE
{
  local pid n started rc
  ( exec setsid bash "$1" </dev/null >"$2/session.log" 2>&1 ) &
  pid=$!
  echo "$pid" > "$2/session.pid"
  while kill -0 "$pid" 2>/dev/null; do
    if read -r n started 2>/dev/null < "$2/current" && [ "$n" != done ] &&
       [ $(( EPOCHSECONDS - started )) -gt "$doc_block_timeout" ]; then
      echo "$n"
      kill -TERM -- -"$pid" 2>/dev/null
      break
    fi
    sleep 0.2
  done
  wait "$pid"; rc=$?
  return $rc
}

# Stops what the session left behind: FUSE mounts under DIR, the processes
# still in its process group, and the servers it started (those whose
# environment shows they are ours: a pid may have been reused).
_doc_stop_all ()  # _doc_stop_all DIR STATE
{
  local mnt pid pidfile i
  while read -r _ mnt _; do
    case $mnt in "$1"/*) fusermount3 -u -z "$mnt" 2>/dev/null ;; esac
  done < /proc/self/mounts
  pid=$(cat "$2/session.pid")
  kill -TERM -- -"$pid" 2>/dev/null
  [ -f "$2/servers" ] || return 0
  while read -r pidfile; do
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    { tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null \
      | grep -qxF "DMCRYPT_DOC_STATE=$2" || continue
    kill "$pid" 2>/dev/null
    for (( i = 0; i < 100; i++ )); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  done < "$2/servers"
}

# How long block N ran, by the start times in TIMES.
_doc_block_seconds ()  # _doc_block_seconds TIMES N
{
  awk -v n="$2" 'started != "" { print $2 - started; exit }
                 $1 == n { started = $2 }' "$1"
}

# What a failed block printed, with the block itself.
_doc_report_failure ()  # _doc_report_failure DOC LINE BLOCKFILE OUTFILE WHY
{
  echo "FAIL: $1:$2: $5; the block:"
  sed 's/^/    | /' "$3"
  echo "  its output:"
  sed 's/^/    > /' "$4" 2>/dev/null
}

# Runs DOC's command blocks in MODE (plain or fuse).  Returns 0 when every
# block ran, 1 when one failed, 3 when MODE has nothing to run in DOC.
doc_run ()  # doc_run DOC MODE
{
  local doc=$1 mode=$2 dir state n line rc timed_out failed why
  dir=$tmp/$(basename "$doc").$mode
  state=$dir/state
  mkdir -p "$dir/blocks" "$dir/work" "$dir/run" "$dir/tmp" "$state"
  chmod 0700 "$dir/run"
  "$PY" "$srcdir/doc-blocks.py" extract "$topdir/$doc" "$dir/blocks" \
    || { echo "FAIL: $doc breaks the convention (above)"; return 1; }
  _doc_select "$dir/blocks/index" "$doc" "$mode" > "$dir/all"
  grep '^skip: ' "$dir/all"
  grep -v '^skip: ' "$dir/all" > "$dir/selected"
  if [ ! -s "$dir/selected" ]; then
    if [ "$mode" = plain ] && doc_must_have_commands "$doc"; then
      echo "FAIL: $doc has no command blocks"; return 1
    fi
    echo "none: $doc has no command blocks for this test"
    return 3
  fi
  _doc_session_script "$dir/selected" "$dir/blocks" "$state" "$dir/work" \
    > "$dir/session.sh"
  timed_out=$(
    export PATH=$tmp/bin:$PATH XDG_RUNTIME_DIR=$dir/run TMPDIR=$dir/tmp \
           DMCRYPT_DOC_STATE=$state DMCRYPT_DOC_SCRATCH=$dir
    _doc_run_session "$dir/session.sh" "$state")
  rc=$?
  _doc_stop_all "$dir" "$state"
  read -r failed _ < "$state/current" || failed=none
  [ "$rc" -eq 0 ] && [ "$failed" = done ] && failed=
  why="exit status $rc"
  [ -z "$timed_out" ] || why="timed out after ${doc_block_timeout}s"
  while read -r n line; do
    if [ "$n" = "$failed" ]; then
      _doc_report_failure "$doc" "$line" "$dir/blocks/$n.sh" \
        "$state/$n.out" "$why"
      return 1
    fi
    echo "ok: $doc:$line ($(_doc_block_seconds "$state/times" "$n")s)"
  done < "$dir/selected"
  if [ -n "$failed" ]; then
    echo "FAIL: $doc: the session ended with status $rc outside its blocks"
    cat "$state/session.log"
    return 1
  fi
  return 0
}

# FUSE as an ordinary user needs /dev/fuse and a working fusermount3; in a
# container it may be there and still not mount.  Prints why FUSE cannot
# be used and returns 1, or returns 0.
fuse_why_not ()
{
  local fuse_pid mnt=$tmp/fuse-probe c
  for c in nbdfuse fusermount3; do
    command -v "$c" >/dev/null || { echo "$c is not installed"; return 1; }
  done
  [ -r /dev/fuse ] && [ -w /dev/fuse ] || {
    echo "/dev/fuse is not usable by $(id -un) (nbdfuse needs FUSE)"
    return 1; }
  mkdir -p "$mnt"
  nbdfuse -P "$tmp/fuse-probe.pid" "$mnt" [ nbdkit memory 1M ] \
    2>"$tmp/fuse-probe.log" &
  fuse_pid=$!
  if ! fuse_wait_ready $fuse_pid "$tmp/fuse-probe.pid"; then
    kill $fuse_pid 2>/dev/null; wait $fuse_pid
    echo "nbdfuse cannot mount here: $(head -n1 "$tmp/fuse-probe.log")"
    return 1
  fi
  fusermount3 -u "$mnt" || { echo "cannot unmount the FUSE probe"; return 1; }
  wait $fuse_pid
  rm -f "$tmp/fuse-probe.pid"
}

# Skips, with the reason, unless FUSE mounts here.
requires_fuse ()
{
  local why
  why=$(fuse_why_not) || skip "$why"
}
