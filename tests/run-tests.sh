#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs every test and prints "N passed, N failed, N skipped" last.
#   tests/run-tests.sh            all tests
#   tests/run-tests.sh unit       unit tests only
#   tests/run-tests.sh PATTERN    tests whose name contains PATTERN
# With DMCRYPT_FRONTEND=filter (make check-filter) the tests that never
# serve a volume through a front end (the C unit tests and the shell
# tests marked "# front-end: none") skip: they run the same code as in
# make check.  With DMCRYPT_SANITIZER (make check-asan, check-tsan) the
# shell tests marked "# sanitizer: none" skip: they run none of
# dmcrypt's code, or build their own sanitized copy of it, or check a
# harness (bench, documentation, kernel comparison) whose dmcrypt paths
# the rest of the suite runs under the sanitizer.
set -u
cd "$(dirname "$0")/.." || exit 1
filter=${1:-}
pass=0 failn=0 skipn=0 failed=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-logs.XXXXXX")

# Does test T serve nothing through the plugin or the filter?
no_front_end ()
{
  [ "${1##*.}" != sh ] || grep -q '^# front-end: none$' "$1"
}

tests=()
for t in tests/unit/test-*.c; do [ -e "$t" ] && tests+=("${t%.c}"); done
if [ "$filter" != unit ]; then
  for t in tests/test-*.sh; do [ -e "$t" ] && tests+=("$t"); done
fi

# Runs test T, its log in $logdir/NAME.log; writes "RC SECONDS" to
# $logdir/NAME.rc when done.
run_one ()
{
  local t=$1 name log start rc
  name=$(basename "$t")
  log="$logdir/$name.log"
  start=$(date +%s)
  if [ "${t##*.}" = sh ]; then
    timeout 900 bash "$t" </dev/null >"$log" 2>&1; rc=$?
  else
    timeout 600 "$t" </dev/null >"$log" 2>&1; rc=$?
  fi
  echo "$rc $(( $(date +%s) - start ))" > "$logdir/$name.rc.tmp"
  mv "$logdir/$name.rc.tmp" "$logdir/$name.rc"
}

# Prints test NAME's verdict from its .rc and log, and counts it.
verdict ()
{
  local name=$1 log="$logdir/$1.log" rc secs
  read -r rc secs < "$logdir/$name.rc"
  case $rc in
    0)  pass=$((pass+1)); printf 'PASS: %s (%ss)\n' "$name" "$secs" ;;
    77) skipn=$((skipn+1))
        printf 'SKIP: %s: %s\n' "$name" "$(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: //')" ;;
    *)  failn=$((failn+1)); failed+=("$name")
        printf 'FAIL: %s (exit %s, %ss)\n' "$name" "$rc" "$secs"
        tail -n 25 "$log" | sed 's/^/    | /' ;;
  esac
  sed -n 's/^REPORT: /    /p' "$log"
}

# DMCRYPT_TEST_JOBS tests at a time (default: one per CPU).  Every test
# has its own scratch directory (its sockets there) and registry of
# volumes, so they do not meet; verdicts print as tests end.
jobs=${DMCRYPT_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in ''|*[!0-9]*|0) echo "run-tests: DMCRYPT_TEST_JOBS must be a positive number" >&2; exit 2 ;; esac
running=()
reap ()  # waits for one test to end, prints the verdicts of those ended
{
  local n still=() ended=false
  for n in "${running[@]}"; do [ -e "$logdir/$n.rc" ] && ended=true; done
  if ! $ended; then
    wait -n 2>/dev/null
    # No child left, yet a test has no verdict: its runner was killed.
    if [ $? -eq 127 ]; then
      for n in "${running[@]}"; do
        [ -e "$logdir/$n.rc" ] || echo "137 0" > "$logdir/$n.rc"
      done
    fi
  fi
  for n in "${running[@]}"; do
    if [ -e "$logdir/$n.rc" ]; then verdict "$n"; else still+=("$n"); fi
  done
  running=("${still[@]}")
}

for t in "${tests[@]}"; do
  name=$(basename "$t")
  if [ -n "$filter" ] && [ "$filter" != unit ]; then
    case "$name" in *"$filter"*) ;; *) continue ;; esac
  fi
  if [ "${DMCRYPT_FRONTEND:-plugin}" = filter ] && no_front_end "$t"; then
    skipn=$((skipn+1))
    printf 'SKIP: %s: serves nothing through a front end (make check runs it)\n' "$name"
    continue
  fi
  if [ -n "${DMCRYPT_SANITIZER:-}" ] && [ "${t##*.}" = sh ] &&
     grep -q '^# sanitizer: none$' "$t"; then
    skipn=$((skipn+1))
    printf 'SKIP: %s: nothing for %s to check here (make check runs it)\n' \
      "$name" "$DMCRYPT_SANITIZER"
    continue
  fi
  while [ ${#running[@]} -ge "$jobs" ]; do reap; done
  run_one "$t" &
  running+=("$name")
done
while [ ${#running[@]} -gt 0 ]; do reap; done
rm -rf "$logdir"
if [ $skipn -gt 0 ]; then
  echo "$pass passed, $failn failed, $skipn skipped"
else
  echo "$pass passed, $failn failed"
fi
[ $failn -eq 0 ]
