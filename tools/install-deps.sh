#!/usr/bin/env bash
# Installs the Debian packages dmcrypt needs to build, test, demo and
# benchmark.  As root it installs what is missing; as an ordinary user it
# only says what is missing and carries on (tests that need it skip).
set -u
pkgs=(
  gcc make pkg-config perl
  nbdkit nbdkit-plugin-dev libnbd-bin libnbd-dev nbdfuse fuse3
  libcryptsetup-dev cryptsetup-bin libssl-dev libjson-c-dev
  qemu-utils fio gnuplot-nox e2fsprogs util-linux xz-utils
  python3 python3-cryptography python3-libnbd
  clang libclang-rt-14-dev valgrind
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: not root; missing packages: ${missing[*]}" >&2
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || true
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
  || { echo "install-deps: apt-get install failed" >&2; exit 1; }
