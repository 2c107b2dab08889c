#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tools/install-deps.sh probes each need and installs only the packages
# of those really absent.  apt-get, apt and dpkg are shims first on PATH
# that record their calls, so the real system is never touched; needs are
# hidden by a PATH without the command, or by DMCRYPT_DEPS_HIDE.  Where
# openssh-server is installed, the mark that keeps the system's sshd from
# starting is made first (DMCRYPT_DEPS_SSHD_OFF: in the scratch directory).
# front-end: none
# sanitizer: none
source "$(dirname "$0")/functions.sh"
script="$topdir/tools/install-deps.sh"
scratch
chmod 0755 "$tmp"

calls=$tmp/calls shims=$tmp/shims out=$tmp/out err=$tmp/err
mkdir "$shims"
: > "$calls"; chmod 0666 "$calls"
# apt-get records its verb and package names; "install" fails with the
# message in $tmp/install-error, if any, until an "update" has run.
cat > "$shims/apt-get" <<EOF
#!/bin/bash
words=() skip=false
for a; do
  if \$skip; then skip=false; continue; fi
  case \$a in -o|-c|-t) skip=true ;; -*) ;; *) words+=("\$a") ;; esac
done
echo "apt-get \${words[*]}" >> "$calls"
case \${words[0]} in
  update) touch "$tmp/updated" ;;
  install)
    if [ -e "$tmp/install-error" ] && [ ! -e "$tmp/updated" ]; then
      cat "$tmp/install-error" >&2; exit 100
    fi ;;
esac
EOF
for c in apt aptitude dpkg dpkg-query; do
  printf '#!/bin/sh\necho "%s $*" >> "%s"\n' "$c" "$calls" > "$shims/$c"
done
chmod 0755 "$shims"/*

# run_deps [VAR=VALUE...] [script args]: the script with the shims first
# on $search_path; sets $rc, leaves its output in $out and $err.  The
# mark that keeps the system's sshd off is made in $sshd_off, never in
# /etc/ssh.
search_path=$PATH
sshd_off=$tmp/etc-ssh/sshd_not_to_be_run
run_deps ()
{
  local vars=()
  while [ $# -gt 0 ] && [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  : > "$calls"; rm -f "$tmp/updated"
  env -u DMCRYPT_DEPS_HIDE -u DMCRYPT_DEPS_UID \
    DMCRYPT_DEPS_SSHD_OFF="$sshd_off" \
    PATH="$shims:$search_path" "${vars[@]}" \
    bash "$script" "$@" >"$out" 2>"$err"
  rc=$?
}

# expect_calls WHAT [CALL...]: exactly these apt/dpkg calls, in order.
expect_calls ()
{
  local what=$1 want="" c; shift
  for c; do want+="$c;"; done
  expect_equal "$what: apt/dpkg calls" "$want" "$(tr '\n' ';' < "$calls")"
}

# expect_run WHAT RC STDOUT STDERR: exit status and exact output.
expect_run ()
{
  expect_equal "$1: exit status" "$2" "$rc"
  expect_equal "$1: stdout" "$3" "$(cat "$out")"
  expect_equal "$1: stderr" "$4" "$(cat "$err")"
}

# A PATH of symlinks to every command on $PATH except those named.
farm_without ()  # farm_without DIR COMMAND...
{
  local farm=$1 d f; shift
  mkdir -m 0755 "$farm"
  local IFS=:
  for d in $PATH; do
    for f in "$d"/*; do
      if [ -f "$f" ] && [ -x "$f" ] && [ ! -e "$farm/${f##*/}" ]; then
        case " $* " in
          *" ${f##*/} "*) ;;
          *) ln -s "$f" "$farm/${f##*/}" ;;
        esac
      fi
    done
  done
}

# 1. This machine has everything: nothing said, nothing called.
run_deps --check
[ $rc -eq 0 ] || skip "this machine lacks $(cat "$out"):" \
  "run tools/install-deps.sh as root"
expect_calls "--check, nothing missing"
expect_run "--check, nothing missing" 0 "" ""
for uid in 0 1000; do
  run_deps DMCRYPT_DEPS_UID=$uid
  expect_run "uid $uid, nothing missing" 0 "" ""
  expect_calls "uid $uid, nothing missing"
done

# 2. One command gone from PATH: exactly its package, installed once.
farm_without "$tmp/no-nbdfuse" nbdfuse
search_path=$tmp/no-nbdfuse
run_deps --check
expect_run "--check, no nbdfuse" 1 "libnbd-bin" ""
run_deps DMCRYPT_DEPS_UID=0
expect_run "root, no nbdfuse" 0 "install-deps: installing libnbd-bin" ""
expect_calls "root, no nbdfuse" "apt-get install libnbd-bin"

# Without pkg-config the modules are still found by their .pc files.
farm_without "$tmp/no-pkg-config" pkg-config
search_path=$tmp/no-pkg-config
run_deps --check
expect_run "--check, no pkg-config" 1 "pkg-config" ""
expect_calls "--check, no pkg-config"
search_path=$PATH

# Several needs hidden: each package named once, in the list's order.
clang_major=$(clang -dumpversion) || fail "clang -dumpversion"
run_deps DMCRYPT_DEPS_HIDE="json-c nbdinfo nbdcopy libclang_rt.fuzzer" \
  --check
expect_run "--check, four hidden" 1 \
  "libjson-c-dev libnbd-bin libclang-rt-${clang_major%%.*}-dev" ""
expect_calls "--check, four hidden"

# The cipher libraries: each need by its own package.
run_deps DMCRYPT_DEPS_HIDE="libgcrypt libargon2 nettle" --check
expect_run "--check, no cipher libraries" 1 \
  "libgcrypt20-dev libargon2-dev nettle-dev" ""
expect_calls "--check, no cipher libraries"

# openssh-server: the mark that keeps the system's sshd from starting is
# made before the install, and only once.
run_deps DMCRYPT_DEPS_UID=0 DMCRYPT_DEPS_HIDE=sshd
expect_run "root, no sshd" 0 "install-deps: installing openssh-server
install-deps: $sshd_off keeps the system's sshd from starting" ""
expect_calls "root, no sshd" "apt-get install openssh-server"
[ -f "$sshd_off" ] || fail "root, no sshd: $sshd_off was not made"
run_deps DMCRYPT_DEPS_UID=0 DMCRYPT_DEPS_HIDE=sshd
expect_run "root, no sshd, marked" 0 "install-deps: installing openssh-server" ""
rm "$sshd_off"
run_deps DMCRYPT_DEPS_UID=0 DMCRYPT_DEPS_HIDE=nbdfuse
[ -e "$sshd_off" ] && fail "root, no nbdfuse: $sshd_off was made"
run_deps DMCRYPT_DEPS_UID=1000 DMCRYPT_DEPS_HIDE=sshd
expect_run "uid 1000, no sshd" 0 "" "install-deps: missing sshd;\
 as root: apt-get install openssh-server"
[ -e "$sshd_off" ] && fail "uid 1000: $sshd_off was made"

# The package lists are refreshed only when the install wants them.
echo "E: Unable to locate package fuse2fs" > "$tmp/install-error"
run_deps DMCRYPT_DEPS_UID=0 DMCRYPT_DEPS_HIDE=fuse2fs
expect_run "root, stale lists" 0 "install-deps: installing fuse2fs" ""
expect_calls "root, stale lists" "apt-get install fuse2fs" \
  "apt-get update" "apt-get install fuse2fs"

echo "E: Sub-process /usr/bin/dpkg returned an error code (1)" \
  > "$tmp/install-error"
run_deps DMCRYPT_DEPS_UID=0 DMCRYPT_DEPS_HIDE=cryptography
expect_run "root, failing install" 1 \
  "install-deps: installing python3-cryptography" \
  "install-deps: apt-get install failed: $(cat "$tmp/install-error")"
expect_calls "root, failing install" "apt-get install python3-cryptography"
rm "$tmp/install-error"

# 3. An ordinary user is told what is missing, and nothing is called.
user_line="install-deps: missing nbdfuse; as root: apt-get install libnbd-bin"
search_path=$tmp/no-nbdfuse
run_deps DMCRYPT_DEPS_UID=1000
expect_run "uid 1000, no nbdfuse" 0 "" "$user_line"
expect_calls "uid 1000, no nbdfuse"
if [ "$(id -u)" -ne 0 ]; then
  run_deps
  expect_run "$(id -un), no nbdfuse" 0 "" "$user_line"
  expect_calls "$(id -un), no nbdfuse"
elif command -v setpriv >/dev/null; then
  cp "$script" "$tmp/install-deps.sh"
  : > "$calls"
  setpriv --reuid=65534 --regid=65534 --clear-groups \
    env -i PATH="$shims:$search_path" bash "$tmp/install-deps.sh" \
    >"$out" 2>"$err"
  rc=$?
  expect_run "nobody, no nbdfuse" 0 "" "$user_line"
  expect_calls "nobody, no nbdfuse"
else
  echo "  (no setpriv: the real uid check runs as an ordinary user only)"
fi

run_deps --bogus
expect_run "bad option" 2 "" "usage: install-deps.sh [--check]"
echo PASS
