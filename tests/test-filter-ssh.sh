#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The filter over nbdkit's ssh plugin (SFTP), against an sshd of the
# test's own: on a free loopback port, as the current user (root or
# not), with its host key, authorized key and configuration in the
# scratch directory.  A LUKS2 image written through the filter over ssh
# is read by the oracle and by the plugin, and read back over ssh on
# several connections at once; tests/stress.py keeps many unaligned
# requests in flight on several connections against a shadow, which the
# oracle's plaintext must equal afterwards (the ssh plugin is
# serialize_requests: the engine's threads must call it one at a time);
# -r never writes; a host key that does not match is refused, naming
# why.  Skips, saying why, without sshd or the ssh plugin, or where sshd
# cannot start or will not let this user in; sshd's log is printed on
# every failure after it started.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
filter="$topdir/filter/nbdkit-dmcrypt-filter.so"
[ -f "$filter" ] || fail "$filter is not built: run make first"
requires_oracle
requires "$PY" -c 'import nbd'
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo ssh-keygen timeout
# sshd re-executes itself, so it must be started by its absolute path.
sshd=/usr/sbin/sshd
[ -x "$sshd" ] || skip "$sshd is not installed (openssh-server)"
nbdkit ssh --dump-plugin >/dev/null 2>&1 \
  || skip "nbdkit's ssh plugin is not installed"
scratch
cd "$tmp" || fail "cd $tmp"
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
# Only the key given below may log in: no agent's.
unset SSH_AUTH_SOCK

# ---- The sshd ----

sshdir=$tmp/ssh
mkdir -m 0700 "$sshdir"
user=$(id -un) || fail "id -un"
for key in host client other; do
  ssh-keygen -q -t ed25519 -N '' -C "dmcrypt-test-$key" \
    -f "$sshdir/${key}_key" || fail "ssh-keygen"
done
cp "$sshdir/client_key.pub" "$sshdir/authorized_keys"

# As root, sshd confines each connection's unauthenticated child to
# /run/sshd (built in: no option moves it), which the system's ssh
# service makes when it starts; without it, it is made here and left,
# as the service leaves it.  Not as root, sshd does no privilege
# separation and needs none of this.
if [ "$(id -u)" -eq 0 ] && [ ! -d /run/sshd ]; then
  mkdir -m 0755 /run/sshd 2>/dev/null || [ -d /run/sshd ] \
    || skip "cannot make /run/sshd for sshd"
fi

# sshd_config PORT USEPAM: sftp only, this user only, by key only.
# StrictModes no: the scratch directory is under the world-writable
# /tmp.  UsePAM no keeps the system's PAM stack out, where sshd's own
# account check lets the user in.
sshd_config ()
{
  cat > "$sshdir/sshd_config" <<EOF
ListenAddress 127.0.0.1:$1
HostKey $sshdir/host_key
PidFile $sshdir/sshd.pid
AuthorizedKeysFile $sshdir/authorized_keys
AllowUsers $user
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM $2
StrictModes no
Subsystem sftp internal-sftp
ForceCommand internal-sftp
DisableForwarding yes
PermitTTY no
MaxStartups 64
LogLevel VERBOSE
EOF
}

sshd_pid=
stop_sshd ()
{
  [ -n "$sshd_pid" ] || return 0
  kill "$sshd_pid" 2>/dev/null
  wait "$sshd_pid" 2>/dev/null
  sshd_pid=
}
cleanup_fn stop_sshd

print_sshd_log ()
{
  echo "sshd's log:"
  sed 's/^/  | /' "$sshdir/sshd.log"
}

# start_sshd USEPAM: sshd in the foreground of a background job on a
# free loopback port ($port), logging to $sshdir/sshd.log.  A port taken
# between choosing and binding it is chosen again.  Returns 1 when sshd
# did not start.
start_sshd ()
{
  local try i
  for (( try = 0; try < 5; try++ )); do
    port=$("$PY" -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') \
      || fail "no free port"
    sshd_config "$port" "$1"
    rm -f "$sshdir/sshd.pid"
    "$sshd" -f "$sshdir/sshd_config" -D -e </dev/null 2>"$sshdir/sshd.log" &
    sshd_pid=$!
    # The pid file is written once sshd listens.
    for (( i = 0; i < 300; i++ )); do
      [ -s "$sshdir/sshd.pid" ] && return 0
      kill -0 "$sshd_pid" 2>/dev/null || break
      sleep 0.1
    done
    stop_sshd
    grep -q "Address already in use" "$sshdir/sshd.log" || return 1
  done
  return 1
}

# CMD (with $uri) against nbdkit [options] PLUGIN ARGS, captive.
over_ssh ()  # over_ssh CMD [nbdkit options] [--filter=...] PLUGIN ARGS...
{
  local cmd=$1; shift
  timeout 300 nbdkit -U - "$@" --run "$cmd" </dev/null
}

# Starts sshd and sets what its clients need: $ssh, the ssh plugin with
# its parameters but the path (config= reads no ssh configuration of the
# user's or the system's), $via, the same under the filter, and $stranger,
# the filter over the ssh plugin with a known host key that is not sshd's.
sshd_up ()  # sshd_up USEPAM
{
  start_sshd "$1" || { print_sshd_log; skip "sshd did not start"; }
  echo "[127.0.0.1]:$port $(cat "$sshdir/host_key.pub")" \
    > "$sshdir/known_hosts"
  echo "[127.0.0.1]:$port $(cat "$sshdir/other_key.pub")" \
    > "$sshdir/other_hosts"
  local common=(ssh host=127.0.0.1 port="$port" user="$user"
                identity="$sshdir/client_key" config=)
  ssh=("${common[@]}" known-hosts="$sshdir/known_hosts")
  via=(--filter="$filter" "${ssh[@]}")
  stranger=(--filter="$filter" "${common[@]}"
            known-hosts="$sshdir/other_hosts")
}

# The ssh plugin alone first, to tell a user sshd will not let in from a
# fault of dmcrypt's.  sshd's own account check, without PAM, counts an
# account whose password field starts with "!" as locked, even for a
# key, and systemd's NSS module hands out such a field for "nobody" to
# those who cannot read /etc/shadow: then PAM's account check decides.
truncate -s 1M probe.img
probe () { over_ssh 'nbdinfo --size "$uri"' "${ssh[@]}" path="$tmp/probe.img"; }
sshd_up no
if ! probe_size=$(probe 2>probe.log) &&
   grep -q "not allowed because account is locked" "$sshdir/sshd.log"; then
  echo "  (without PAM, sshd counts $user as locked: UsePAM yes)"
  stop_sshd
  sshd_up yes
  probe_size=$(probe 2>probe.log)
fi
if [ "$probe_size" != $((1 << 20)) ]; then
  cat probe.log
  print_sshd_log
  skip "the ssh plugin cannot read a file through this sshd as $user"
fi
echo "sshd on 127.0.0.1:$port: $user logs in by key, the ssh plugin reads"

# From here, every failure shows what sshd said.
fail ()
{
  print_sshd_log >&2
  echo "FAIL: $*" >&2
  exit 1
}

pw='filter-ssh-pw'
printf %s "$pw" > pw
random_file data.bin $((4 << 20))

echo "LUKS2 over ssh: written through the filter, read by the oracle and the plugin"
truncate -s 64M l2.img
luks_format luks2 l2.img "$pw"
key2=$(luks_volume_key l2.img "$pw")
size=$(over_ssh 'nbdinfo --size "$uri"' "${via[@]}" path="$tmp/l2.img" \
         passphrase=+pw) || fail "the filter did not serve l2.img over ssh"
expect_equal "LUKS2 export size over ssh" $((48 << 20)) "$size"
over_ssh 'nbdcopy data.bin "$uri"' "${via[@]}" path="$tmp/l2.img" \
  passphrase=+pw || fail "write through the filter over ssh"
oracle decrypt l2.img l2.out --luks-key "$key2" || fail "oracle decrypt"
head -c $((4 << 20)) l2.out > l2.head
expect_same "filter wrote over ssh, oracle read" data.bin l2.head
serve_dmcrypt "nbdcopy \"\$uri\" p.out" l2.img passphrase=+pw \
  || fail "plugin read"
expect_same "filter wrote over ssh, plugin read" l2.out p.out

echo "read back over ssh: 4 connections, 8 requests in flight on each"
over_ssh 'nbdcopy --connections=4 --threads=4 --requests=8 "$uri" r.out' \
  -v "${via[@]}" path="$tmp/l2.img" passphrase=+pw 2>r.log \
  || { tail r.log; fail "read through the filter over ssh"; }
expect_same "read back through the filter over ssh" l2.out r.out
grep -q "calls to it are serialised" r.log \
  || fail "ssh (serialize_requests in nbdkit 1.32): calls not serialised"

seed=$RANDOM
echo "many requests in flight on 4 connections (tests/stress.py, seed $seed)"
truncate -s 24M st.img
luks_format luks2 st.img "$pw" --sector-size 4096
# The run ends after --ops requests; --seconds is only a bound.
over_ssh "'$PY' '$srcdir/stress.py' run \"\$uri\" '$tmp/st.shadow' \
            --ops 2000 --seconds 250 --conns 4 --depth 16 \
            --sector-size 4096 --seed $seed" \
  "${via[@]}" path="$tmp/st.img" passphrase=+pw || fail "stress over ssh"
oracle decrypt st.img st.out --luks-key "$(luks_volume_key st.img "$pw")" \
  || fail "oracle decrypt"
expect_same "the oracle's plaintext after the stress" st.shadow st.out

echo "-r over ssh: the export is read-only and the image never written"
sum=$(sha256_of l2.img)
ro=$(over_ssh 'nbdinfo --json "$uri"' -r "${via[@]}" path="$tmp/l2.img" \
       passphrase=+pw \
       | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["exports"][0]["is_read_only"])') \
  || fail "-r: nbdinfo"
expect_equal "-r export read-only" True "$ro"
over_ssh 'nbdcopy data.bin "$uri"' -r "${via[@]}" path="$tmp/l2.img" \
  passphrase=+pw 2>/dev/null && fail "-r: a write succeeded"
expect_equal "image sha256 after -r" "$sum" "$(sha256_of l2.img)"

echo "a host key that does not match: the command's connections are refused"
over_ssh 'nbdinfo --size "$uri"' "${stranger[@]}" path="$tmp/l2.img" \
  passphrase=+pw \
  >hk.log 2>&1 && fail "served with a host key that does not match"
grep -q "host key" hk.log || { cat hk.log; fail "no reason given"; }
expect_equal "image sha256 after the refusal" "$sum" "$(sha256_of l2.img)"
echo "filter over ssh: all checks passed"
