#!/usr/bin/env bash
# make fuzz-smoke: every libFuzzer fuzzer (table, cipher spec, plugin
# parameters, control protocol) builds with clang's fuzzer, ASan and
# UBSan, and runs 10 seconds on its seed corpus without a crash or a
# broken rule.  The objects go to a scratch directory, not the tree.
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

timeout 600 make -s -C "$topdir" fuzz-smoke FUZZ_BUILD="$tmp/build" \
  >"$tmp/make.log" 2>&1
rc=$?
cat "$tmp/make.log"
[ $rc -eq 0 ] || fail "make fuzz-smoke failed (exit $rc)"
for name in table cipher-spec params control-proto; do
  grep -q "^fuzz: $name .* no crash" "$tmp/make.log" \
    || fail "fuzzer $name did not report a clean run"
done
echo PASS
