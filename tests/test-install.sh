#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make install puts the plugin where "nbdkit dmcrypt" finds it and the
# filter where "nbdkit --filter=dmcrypt" finds it, with their man pages;
# checked in a DESTDIR so the test needs no root.
# front-end: none
source "$(dirname "$0")/functions.sh"
requires_cmd make nbdkit pkg-config
plugin_built_or_fail
scratch

plugindir=$(pkg-config --variable=plugindir nbdkit)
[ -n "$plugindir" ] || fail "pkg-config knows no nbdkit plugindir"
# The suite runs this beside servers that load the build under test
# (make check-asan's, whose flags this make does not know): other flags
# must not rebuild anything.
make -n -C "$topdir" install TREE_AS_BUILT=1 CFLAGS="-O0 -DPROBE" \
  >"$tmp/dry" 2>&1 || { cat "$tmp/dry"; fail "make -n install failed"; }
if grep -e ' -c -o ' -e '-DPROBE' "$tmp/dry"; then
  fail "make install with TREE_AS_BUILT=1 would rebuild the tree (above)"
fi
make -s -C "$topdir" install TREE_AS_BUILT=1 DESTDIR="$tmp/root" >"$tmp/log" 2>&1 \
  || { cat "$tmp/log"; fail "make install failed"; }
so="$tmp/root$plugindir/nbdkit-dmcrypt-plugin.so"
[ -x "$so" ] || fail "no plugin at $so"
cmp -s "$so" "$plugin" || fail "installed plugin differs from the build"
[ -s "$tmp/root/usr/share/man/man1/nbdkit-dmcrypt-plugin.1" ] \
  || fail "man page not installed"
nbdkit --dump-plugin "$so" > "$tmp/dump" || fail "nbdkit cannot load it"
grep -q '^name=dmcrypt$' "$tmp/dump" || fail "dump-plugin: no name=dmcrypt"
grep -q '^dmcrypt_version=' "$tmp/dump" || fail "dump-plugin: no version"
grep -q '^thread_model=parallel$' "$tmp/dump" \
  || fail "thread model is not parallel"
filterdir=$(pkg-config --variable=filterdir nbdkit)
fso="$tmp/root$filterdir/nbdkit-dmcrypt-filter.so"
[ -x "$fso" ] || fail "no filter at $fso"
cmp -s "$fso" "$topdir/filter/nbdkit-dmcrypt-filter.so" \
  || fail "installed filter differs from the build"
[ -s "$tmp/root/usr/share/man/man1/nbdkit-dmcrypt-filter.1" ] \
  || fail "filter man page not installed"
nbdkit --filter="$fso" null --dump-plugin > "$tmp/fdump" 2>&1 \
  || { cat "$tmp/fdump"; fail "nbdkit cannot load the filter"; }
for t in dmcryptctl dmcrypt-trace; do
  [ -x "$tmp/root/usr/local/bin/$t" ] || fail "$t not installed"
done
[ -e "$tmp/root/usr/local/bin/seeker" ] \
  && fail "the benchmarks' seeker was installed on the user's PATH"
echo "ok: installed into $plugindir and $filterdir under DESTDIR, loads, parallel"
echo PASS
