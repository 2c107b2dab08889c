#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian packages dmcrypt needs to build, test, demo and
# benchmark.  Each need is probed for itself (a command, a pkg-config
# module, a Python module, clang's fuzzer runtime, a static binary) and
# mapped to the Debian 12 package that provides it: package names alone
# mislead (nbdfuse, for one, is shipped by libnbd-bin), and asking dpkg
# about a name no package carries made every run reinstall.
#
#   tools/install-deps.sh          as root: install what is missing;
#                                  otherwise: name it on one line, exit 0
#   tools/install-deps.sh --check  print the missing packages, exit 1 if any
#
# openssh-server is for the ssh test's own sshd on a loopback port: when
# it is installed here, /etc/ssh/sshd_not_to_be_run is made first, which
# the package's init script, runit service and systemd units all obey,
# so that no system sshd starts, now or at boot (remove the file to run
# one).
#
# Test hooks: DMCRYPT_DEPS_HIDE="nbdfuse json-c" counts those needs (the
# second word of a line below) as absent; DMCRYPT_DEPS_UID stands in for
# the effective uid; DMCRYPT_DEPS_SSHD_OFF stands in for
# /etc/ssh/sshd_not_to_be_run.
set -u

usage () { echo "usage: install-deps.sh [--check]" >&2; exit 2; }
check_only=false
case $# in
  0) ;;
  1) [ "$1" = --check ] || usage; check_only=true ;;
  *) usage ;;
esac

# Commands such as cryptsetup and mkfs.ext4 live in sbin, which an
# ordinary user's PATH may lack (make check-user adds it back).
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
# The python3-* packages serve Debian's interpreter, which the tests run,
# whatever python3 comes first on PATH.
debian_python=/usr/bin/python3

# kind  need  package
needs=(
  # building the plugin, the tools and their man pages
  "cmd gcc gcc"
  "cmd make make"
  "cmd pkg-config pkg-config"
  "cmd pod2man perl"
  "pc nbdkit nbdkit-plugin-dev"
  "pc libcryptsetup libcryptsetup-dev"
  "pc libcrypto libssl-dev"
  "pc json-c libjson-c-dev"
  # Serpent and Twofish (OpenSSL 3.0 has neither); Argon2 keyslots that
  # dmcrypt opens itself where libcryptsetup would need device-mapper
  "pc libgcrypt libgcrypt20-dev"
  "pc libargon2 libargon2-dev"
  "pc libnbd libnbd-dev"
  # serving, and the NBD clients the tests, demo and bench drive it with
  "cmd nbdkit nbdkit"
  "cmd nbdinfo libnbd-bin"
  "cmd nbdcopy libnbd-bin"
  "cmd nbdfuse libnbd-bin"
  "cmd fusermount3 fuse3"
  "cmd qemu-img qemu-utils"
  "cmd qemu-nbd qemu-utils"
  # the filter over ssh: a test's own sshd on a loopback port, its keys
  "cmd sshd openssh-server"
  "cmd ssh-keygen openssh-client"
  # making and checking images and file systems
  "cmd cryptsetup cryptsetup-bin"
  # LUKS tokens: Clevis with a test's own Tang, tpm2 through swtpm
  # (tests/test-tokens.sh)
  "cmd clevis clevis"
  "file /usr/bin/clevis-luks-bind clevis-luks"
  "file /usr/bin/clevis-encrypt-tpm2 clevis-tpm2"
  "file /usr/libexec/tangd tang"
  "cmd jose jose"
  "cmd luksmeta luksmeta"
  "cmd curl curl"
  "cmd swtpm swtpm"
  "cmd swtpm_setup swtpm-tools"
  "cmd tpm2_createprimary tpm2-tools"
  "cmd mkfs.ext4 e2fsprogs"
  "cmd debugfs e2fsprogs"
  "cmd fuse2fs fuse2fs"
  "cmd xz xz-utils"
  "cmd setpriv util-linux"
  "cmd ps procps"
  # the real-kernel tests: Debian's kernel in QEMU on an initramfs of
  # busybox-static and the host's tools (tests/kernel/kernel.sh)
  "cmd qemu-system-x86_64 qemu-system-x86"
  "static /bin/busybox busybox-static"
  "cmd dmsetup dmsetup"
  "cmd nbd-client nbd-client"
  "cmd socat socat"
  "cmd depmod kmod"
  "cmd cpio cpio"
  # the Python oracles and stress clients
  "file $debian_python python3"
  "py cryptography python3-cryptography"
  "py nbd python3-libnbd"
  # the oracle's Serpent and Twofish, a library apart from the plugin's
  "pc nettle nettle-dev"
  # make bench, its charts and those of dmcrypt-trace --png
  "cmd fio fio"
  "cmd openssl openssl"
  "cmd gnuplot gnuplot-nox"
  # make fuzz and the fuzz smoke test; the valgrind test
  "cmd clang clang"
  "fuzzer libclang_rt.fuzzer libclang-rt-14-dev"
  "cmd valgrind valgrind"
)

has_pc ()  # has_pc MODULE
{
  if type -P pkg-config >/dev/null; then
    pkg-config --exists "$1"
  else
    compgen -G "/usr/lib/*/pkgconfig/$1.pc" >/dev/null \
      || [ -e "/usr/lib/pkgconfig/$1.pc" ] \
      || [ -e "/usr/share/pkgconfig/$1.pc" ]
  fi
}

# clang finds its fuzzer runtime only in the libclang-rt package of its
# own major version; without clang, Debian 12's clang 14 is assumed.
fuzzer_package ()
{
  local v
  v=$(clang -dumpversion 2>/dev/null) || v=14
  echo "libclang-rt-${v%%.*}-dev"
}

has_fuzzer_runtime ()
{
  local a
  type -P clang >/dev/null || return 1
  a=$(clang -print-file-name="libclang_rt.fuzzer-$(uname -m).a")
  [ -e "$a" ]
}

present ()  # present KIND NEED
{
  case " ${DMCRYPT_DEPS_HIDE:-} " in *" $2 "*) return 1 ;; esac
  case $1 in
    cmd)    type -P "$2" >/dev/null ;;
    file)   [ -x "$2" ] ;;
    static) [ -x "$2" ] && ! ldd "$2" >/dev/null 2>&1 ;;
    pc)     has_pc "$2" ;;
    py)     "$debian_python" -c "import $2" >/dev/null 2>&1 ;;
    fuzzer) has_fuzzer_runtime ;;
  esac
}

missing_needs=() missing_pkgs=()
for line in "${needs[@]}"; do
  read -r kind need pkg <<< "$line"
  present "$kind" "$need" && continue
  [ "$kind" = fuzzer ] && pkg=$(fuzzer_package)
  missing_needs+=("$need")
  case " ${missing_pkgs[*]} " in
    *" $pkg "*) ;;
    *) missing_pkgs+=("$pkg") ;;
  esac
done

if $check_only; then
  [ ${#missing_pkgs[@]} -eq 0 ] && exit 0
  echo "${missing_pkgs[*]}"
  exit 1
fi
[ ${#missing_pkgs[@]} -eq 0 ] && exit 0
if [ "${DMCRYPT_DEPS_UID:-$(id -u)}" != 0 ]; then
  echo "install-deps: missing ${missing_needs[*]};" \
       "as root: apt-get install ${missing_pkgs[*]}" >&2
  exit 0
fi

echo "install-deps: installing ${missing_pkgs[*]}"
sshd_off=${DMCRYPT_DEPS_SSHD_OFF:-/etc/ssh/sshd_not_to_be_run}
case " ${missing_pkgs[*]} " in
  *" openssh-server "*)
    if [ ! -e "$sshd_off" ]; then
      mkdir -p "${sshd_off%/*}" && : > "$sshd_off" \
        || { echo "install-deps: cannot make $sshd_off" >&2; exit 1; }
      echo "install-deps: $sshd_off keeps the system's sshd from starting"
    fi ;;
esac
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
apt_install ()
{
  apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=300 \
    "${missing_pkgs[@]}" >"$log" 2>&1
}
# Stale or absent package lists show as unknown packages or failed
# downloads; only then is a refresh worth its time.
lists_wanting ()
{
  grep -qE 'Unable to locate|no installation candidate|to fetch' "$log"
}
apt_failed ()  # apt_failed WHAT: one line from apt's log, then exit 1
{
  local why
  why=$(grep -m1 '^E:' "$log" || tail -n1 "$log")
  echo "install-deps: $1 failed: $why" >&2
  exit 1
}
apt_install && exit 0
lists_wanting || apt_failed "apt-get install"
apt-get update -qq >"$log" 2>&1 || apt_failed "apt-get update"
apt_install || apt_failed "apt-get install"
