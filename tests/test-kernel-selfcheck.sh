#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The real-kernel comparisons catch defects: tests/test-kernel-dmcrypt.sh
# runs with dmcrypt's side of some plain tables deliberately wrong (an
# iv_offset one sector off: a one-step change in every IV; the data one
# sector further in; the IV off only when reading what the kernel wrote)
# and must report exactly those cases as failed, with the comparison
# that caught each, while an unchanged case in the same boot passes.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
scratch
MUTATE="xts-plain64=iv cbc-essiv-4096=iv ecb=offset cbc-eboiv=read-iv" \
KERNEL_CASES="luks1 xts-plain64 cbc-essiv-4096 ecb cbc-eboiv" \
  bash "$srcdir/test-kernel-dmcrypt.sh" > "$tmp/out" 2>&1
rc=$?
sed "s/^/  | /" "$tmp/out"
[ $rc -eq 77 ] && skip "$(sed -n 's/^SKIP: //p' "$tmp/out")"
[ $rc -eq 1 ] || fail "the mutated run exited $rc, not 1"
expect_line ()  # expect_line REGEX: one line of the output matches
{
  grep -qE "$1" "$tmp/out" || fail "no line matches: $1"
  echo "  seen: $(grep -m1 -E "$1" "$tmp/out")"
}
expect_line "^REPORT: PASS: kernel [^:]+: luks1\$"
expect_line "^REPORT: FAIL: kernel [^:]+: xts-plain64: A: "
expect_line "^REPORT: FAIL: kernel [^:]+: cbc-essiv-4096: A: "
expect_line "^REPORT: FAIL: kernel [^:]+: ecb: A: "
expect_line "^REPORT: FAIL: kernel [^:]+: cbc-eboiv: B: "
[ "$(grep -cE '^REPORT: (PASS|FAIL): kernel ' "$tmp/out")" -eq 5 ] || fail "not five cases reported"
report "mutated cases: 4 failed as they must; the unchanged one passed"
echo PASS
