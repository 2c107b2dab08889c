#!/usr/bin/env bash
# make install puts the plugin where "nbdkit dmcrypt" finds it, with its
# man page; checked in a DESTDIR so the test needs no root.
source "$(dirname "$0")/functions.sh"
requires_cmd make nbdkit pkg-config
plugin_built_or_fail
scratch

plugindir=$(pkg-config --variable=plugindir nbdkit)
[ -n "$plugindir" ] || fail "pkg-config knows no nbdkit plugindir"
make -s -C "$topdir" install DESTDIR="$tmp/root" >"$tmp/log" 2>&1 \
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
echo "ok: installed into $plugindir under DESTDIR, loads, parallel"
echo PASS
