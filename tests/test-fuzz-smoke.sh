#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make fuzz-smoke: every libFuzzer fuzzer (table, cipher spec, plugin
# parameters, control protocol, headers, bulk ciphers) builds with
# clang's fuzzer, ASan and UBSan, and runs on its seed corpus without a
# crash or a broken rule: 3 seconds each in the quick run, make
# fuzz-smoke's 10 with DMCRYPT_TEST_FULL=1.  The objects go to a scratch
# directory, not the tree.
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
requires_cmd clang make timeout
scratch

# libFuzzer ships in libclang-rt-*-dev, apart from clang itself.
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
  'int LLVMFuzzerTestOneInput (const uint8_t *d, size_t n)' \
  '{ (void) d; (void) n; return 0; }' > "$tmp/probe.c"
clang -fsanitize=fuzzer,address,undefined -o "$tmp/probe" "$tmp/probe.c" \
  >/dev/null 2>&1 || skip "clang cannot link libFuzzer (libclang-rt-14-dev)"

seconds=3
full_run && seconds=10
echo "$seconds s per fuzzer (DMCRYPT_TEST_FULL=1: 10 s)"
timeout 600 make -s -C "$topdir" TREE_AS_BUILT=1 fuzz-smoke FUZZ_BUILD="$tmp/build" \
  FUZZ_SMOKE_SECONDS=$seconds >"$tmp/make.log" 2>&1
rc=$?
cat "$tmp/make.log"
[ $rc -eq 0 ] || fail "make fuzz-smoke failed (exit $rc)"
names=$(make -s -C "$topdir" TREE_AS_BUILT=1 --eval 'fuzz-names: ; @echo $(FUZZ_NAMES)' \
          fuzz-names)
[ -n "$names" ] || fail "no fuzzer named in the Makefile"
for name in $names; do
  grep -q "^fuzz: $name .* no crash" "$tmp/make.log" \
    || fail "fuzzer $name did not report a clean run"
done
echo PASS
