#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make check-user: the test suite as an ordinary user, as unprivileged CI
# runs it.  As root, the built tree is copied to a world-readable scratch
# directory (with ../shared beside it) and the suite runs there as
# "nobody"; as an ordinary user it simply runs the suite.
set -u
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" -ne 0 ]; then
  exec tests/run-tests.sh "$@"
fi
user=${DMCRYPT_TEST_USER:-nobody}
uid=$(id -u "$user") || { echo "check-user: no user $user" >&2; exit 1; }
gid=$(id -g "$user")
work=$(mktemp -d /tmp/dmcrypt-user.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
mkdir "$work/main" "$work/home"
tar -cf - --exclude=.git --exclude=demo --exclude=bench-results \
  --exclude=lab-results . \
  | tar -xf - -C "$work/main"
[ -d ../shared ] && ln -s "$(cd ../shared && pwd)" "$work/shared"
chown -R "$uid:$gid" "$work/home"
chmod -R a+rX "$work/main"
echo "check-user: running the suite as $user ($uid) in $work/main"
cd "$work/main" || exit 1
# The real-kernel tests' cache (the kernel package, its initramfs) is
# the user's own and outlives the scratch home.
setpriv --reuid="$uid" --regid="$gid" --clear-groups \
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" \
      TMPDIR=/tmp LANG=C.UTF-8 DMCRYPT_KERNEL_CACHE="/tmp/dmcrypt-kernel-$uid" \
      tests/run-tests.sh "$@"
