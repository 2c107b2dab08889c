#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs each libFuzzer fuzzer for a bounded time on a scratch copy of its
# seed corpus (fuzz/corpus/NAME), with its dictionary (fuzz/NAME.dict).
#   fuzz/run.sh BUILD_DIR SECONDS NAME...
# Exit 0 when no fuzzer found anything.  A crashing input is kept in
# fuzz/crashes/ (not committed): add it to fuzz/regressions/NAME/ once
# the bug is fixed, and tests/unit/test-fuzz-regressions replays it.
set -u
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR SECONDS NAME..." >&2; exit 2; }
build=$1 seconds=$2; shift 2
fuzzdir=$(cd "$(dirname "$0")" && pwd)
crashes="$fuzzdir/crashes"
work=$(mktemp -d "${TMPDIR:-/tmp}/dmcrypt-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

failed=()
for name in "$@"; do
  bin="$build/fuzz-$name"
  [ -x "$bin" ] || { echo "fuzz: $bin is not built" >&2; exit 2; }
  mkdir -p "$work/$name" "$work/$name-artifacts"
  cp "$fuzzdir/corpus/$name/"* "$work/$name/" 2>/dev/null
  dict=()
  [ -f "$fuzzdir/$name.dict" ] && dict=(-dict="$fuzzdir/$name.dict")
  # libFuzzer's own limits bound each input; timeout bounds the whole.
  TMPDIR="$work" timeout -k 10 $((seconds + 120)) "$bin" \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$work/$name-artifacts/" "$work/$name" \
    >"$work/$name.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
  cov=$(grep -o 'cov: [0-9]*' "$work/$name.log" | tail -1)
  if [ $rc -eq 0 ]; then
    printf 'fuzz: %-14s %ss, %s runs, %s, no crash\n' "$name" "$seconds" \
      "${runs:-?}" "${cov:-cov: ?}"
    continue
  fi
  failed+=("$name")
  mkdir -p "$crashes"
  cp "$work/$name-artifacts/"* "$crashes/" 2>/dev/null
  echo "fuzz: $name FAILED (exit $rc); its log ends:" >&2
  grep -v '^#[0-9]' "$work/$name.log" | tail -n 40 | sed 's/^/    | /' >&2
  ls "$work/$name-artifacts/" 2>/dev/null \
    | sed "s|^|fuzz: input kept as $crashes/|" >&2
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failed: ${failed[*]}" >&2; exit 1; }
