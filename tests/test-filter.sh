#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dmcrypt as an nbdkit filter (filter/nbdkit-dmcrypt-filter.so): LUKS1,
# LUKS2 and plain ciphertext served by other plugins — file, memory,
# nbd (a second nbdkit, qemu-nbd), curl (HTTP range requests from a local
# server), partitioning, and stacked with cow, partition
# and noparallel
# — read and written exactly as the plugin and independent
# implementations (tests/oracle.py, nbdkit's luks filter) read and write
# them.  Start-up failures exit non-zero in the foreground; in the
# background (where nbdkit has exited 0) the server ends without its
# socket and PID file, the error in its log; -r never writes;
# dmcrypt-KEY= reaches dmcrypt while a bare KEY= then goes to the
# plugin; the control socket works in filter mode.
source "$(dirname "$0")/functions.sh"
plugin_built_or_fail
analyser_built_or_fail
filter="$topdir/filter/nbdkit-dmcrypt-filter.so"
[ -f "$filter" ] || fail "$filter is not built: run make first"
requires_oracle
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo timeout
scratch
cd "$tmp" || fail "cd $tmp"
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -m 0700 "$XDG_RUNTIME_DIR"

pw=filter-test-pw
printf %s "$pw" > pw
random_file data.bin $((4 << 20))

# CMD (with $uri) against nbdkit with the filter over PLUGIN ARGS.
through_filter ()  # through_filter CMD [nbdkit options] PLUGIN ARGS...
{
  local cmd=$1; shift
  timeout 120 nbdkit -U - --filter="$filter" "$@" --run "$cmd" </dev/null
}

# The first 4 MiB of plaintext of an export into OUT.
read_head () { echo "nbdcopy \"\$uri\" - 2>/dev/null | head -c $((4 << 20)) > $1"; }
# The first 4 MiB of a file into OUT.
head_of () { head -c $((4 << 20)) "$1" > "$2"; }

echo "LUKS2 over the file plugin: written through the filter, read by the oracle"
truncate -s 64M l2.img
luks_format luks2 l2.img "$pw"
key2=$(luks_volume_key l2.img "$pw")
size=$(through_filter 'nbdinfo --size "$uri"' file l2.img passphrase=+pw) \
  || fail "the filter did not serve l2.img"
expect_equal "LUKS2 export size" $((48 << 20)) "$size"
through_filter 'nbdcopy data.bin "$uri"' file l2.img passphrase=+pw \
  || fail "write through the filter"
oracle decrypt l2.img l2.out --luks-key "$key2" || fail "oracle decrypt"
head_of l2.out l2.head
expect_same "filter wrote, oracle read" data.bin l2.head
serve_dmcrypt "$(read_head p.out)" l2.img passphrase=+pw \
  || fail "plugin read"
expect_same "filter wrote, plugin read" data.bin p.out

echo "LUKS1 over the file plugin: nbdkit's luks filter reads what we wrote"
truncate -s 32M l1.img
luks_format luks1 l1.img "$pw" --cipher aes-xts-plain64 --key-size 512
through_filter 'nbdcopy data.bin "$uri"' file l1.img passphrase=+pw \
  || fail "LUKS1 write through the filter"
serve_luks_filter l1.img pw "$(read_head k.out)" || fail "luks filter read"
expect_same "dmcrypt filter wrote, luks filter read" data.bin k.out

echo "plain table over the memory plugin (it starts as zeros)"
tkey=$(random_hex 64)
echo "0 32768 crypt aes-xts-plain64 $tkey 0 mem 0" > t.table
through_filter "nbdcopy data.bin \"\$uri\" && $(read_head m.out)" \
  memory 16M table=+t.table || fail "memory round trip"
expect_same "memory: written and read back" data.bin m.out
# No file= names the data: the label does, and the default name.
through_filter "'$topdir/tools/dmcryptctl' table dmcrypt > mt.out" \
  memory 16M table=+t.table || fail "table over memory"
expect_equal "table over memory" \
  "0 32768 crypt aes-xts-plain64 $(printf '%0128d' 0) 0 nbdkit-next-layer 0" \
  "$(cat mt.out)"

echo "LUKS2 over the nbd plugin: the ciphertext served by a second nbdkit"
nbdkit -U "$tmp/ct.sock" -P "$tmp/ct.pid" file l2.img \
  || fail "ciphertext server"
cleanup_fn "kill \$(cat '$tmp/ct.pid') 2>/dev/null"
for (( i = 0; i < 50; i++ )); do [ -S ct.sock ] && break; sleep 0.1; done
through_filter "$(read_head n.out)" nbd socket="$tmp/ct.sock" \
  passphrase=+pw || fail "read over nbd"
expect_same "over nbd: what the filter wrote over file" data.bin n.out

echo "LUKS2 served by qemu-nbd, read through the nbd plugin"
if command -v qemu-nbd >/dev/null; then
  # -e 2: the filter opens the layer below twice (its own context and
  # the connection's); qemu-nbd takes one client by default.
  qemu-nbd -t -e 2 -f raw -k "$tmp/q.sock" l2.img >q.log 2>&1 &
  qpid=$!
  cleanup_fn "kill $qpid 2>/dev/null"
  for (( i = 0; i < 50; i++ )); do [ -S q.sock ] && break; sleep 0.1; done
  through_filter "$(read_head q.out)" nbd socket="$tmp/q.sock" \
    passphrase=+pw 2>/dev/null || { cat q.log; fail "read over qemu-nbd"; }
  expect_same "over qemu-nbd" data.bin q.out
  kill "$qpid"
else
  echo "  (qemu-nbd is not installed: this case is not run)"
fi

echo "LUKS2 over HTTP range requests (the curl plugin, read-only)"
mkdir www && cp l2.img www/
"$PY" "$srcdir/range-http-server.py" "$tmp/www" "$tmp/port" &
hpid=$!
cleanup_fn "kill $hpid 2>/dev/null"
for (( i = 0; i < 100; i++ )); do [ -s port ] && break; sleep 0.1; done
[ -s port ] || fail "the HTTP server did not start"
through_filter "$(read_head h.out)" -r -v curl \
  "http://127.0.0.1:$(cat port)/l2.img" passphrase=+pw 2>curl.log \
  || { tail curl.log; fail "read over curl"; }
expect_same "over curl" data.bin h.out
grep -q "calls to it are serialised" curl.log \
  || fail "curl (serialize_requests in nbdkit 1.32): calls not serialised"
kill "$hpid"

echo "noparallel below: every call to the plugin serialised, data intact"
random_file data2.bin $((4 << 20))
through_filter "nbdcopy --connections=4 data2.bin \"\$uri\" && $(read_head s.out)" \
  -v --filter=noparallel file l2.img passphrase=+pw serialize=requests \
  2>np.log || { tail np.log; fail "noparallel round trip"; }
expect_same "through noparallel" data2.bin s.out
grep -q "calls to it are serialised" np.log || fail "calls not serialised"
through_filter true -v file l2.img passphrase=+pw 2>p.log || fail "file"
grep -q "the layer below is parallel" p.log || fail "file is parallel"

echo "under cow: writes land in the overlay, the image is unchanged"
sum=$(sha256_of l2.img)
timeout 120 nbdkit -U - --filter=cow --filter="$filter" file l2.img \
  passphrase=+pw --run "nbdcopy data.bin \"\$uri\" && $(read_head c.out)" \
  </dev/null || fail "cow round trip"
expect_same "cow: written and read back" data.bin c.out
expect_equal "image sha256 under cow" "$sum" "$(sha256_of l2.img)"

echo "-r: the export is read-only and the image never written"
ro=$(through_filter 'nbdinfo --json "$uri"' -r file l2.img passphrase=+pw \
       | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["exports"][0]["is_read_only"])') \
  || fail "-r: nbdinfo"
expect_equal "-r export read-only" True "$ro"
through_filter 'nbdcopy data2.bin "$uri"' -r file l2.img passphrase=+pw \
  2>/dev/null && fail "-r: a write succeeded"
expect_equal "image sha256 after -r" "$sum" "$(sha256_of l2.img)"

echo "a LUKS partition inside a GPT disk, through partition"
# nbdkit's partitioning plugin makes the GPT disk around part.img and
# passes writes through to it.
truncate -s 30M part.img
luks_format luks2 part.img "$pw"
keyp=$(luks_volume_key part.img "$pw")
through_filter 'nbdcopy data.bin "$uri"' --filter=partition partitioning \
  part.img partition-type=gpt partition=1 passphrase=+pw \
  || fail "write into the partition"
oracle decrypt part.img pp.out --luks-key "$keyp" || fail "oracle decrypt"
head_of pp.out pp.head
expect_same "partition: filter wrote, oracle read" data.bin pp.head

echo "dmcrypt-KEY= for dmcrypt, the bare KEY= for the layer below"
# The offset filter below takes offset=; dmcrypt's own is its plain
# mapping's offset (sectors).  The ciphertext starts 1 MiB into the file.
truncate -s 17M off.img
through_filter 'nbdcopy data.bin "$uri"' --filter=offset file off.img \
  offset=1M dmcrypt-offset=0 cipher=aes-xts-plain64 key="$tkey" \
  || fail "write with offsets"
tail -c +$(( (1 << 20) + 1 )) off.img > off.ct
echo "0 32768 crypt aes-xts-plain64 $tkey 0 $tmp/off.ct 0" > oo.table
serve_dmcrypt "$(read_head o.out)" off.ct table=+oo.table \
  || fail "plugin read of the shifted ciphertext"
expect_same "offset=1M went to the offset filter" data.bin o.out

echo "a trace, a write-out policy and a lab device model in filter mode"
through_filter "nbdcopy data.bin \"\$uri\" && $(read_head d.out)" \
  file l2.img passphrase=+pw trace="$tmp/f.trace" scheduler=batch \
  device=ssd device-speed=10 || fail "filter with trace and device"
expect_same "through the ssd model" data.bin d.out
"$analyser" --summary-csv f.csv f.trace >/dev/null || fail "trace analysis"
for ev in Q I D C; do
  grep -q "^ *[0-9]*,[0-9]* .* $ev  *[RW]" f.trace || fail "no $ev event in the trace"
done
echo "  ok: Q, I, D and C events in the filter's trace"

echo "start-up failures: non-zero in the foreground, refused connections under --run"
wrong_pw="nbdkit: error: wrong passphrase or key file: no keyslot matched"
timeout 60 nbdkit -f -U "$tmp/f.sock" -P "$tmp/f.pid" --filter="$filter" \
  file l2.img passphrase=wrong-pw >f.log 2>&1
rc=$?
[ $rc -eq 1 ] || { cat f.log; fail "-f: a wrong passphrase: exit status $rc"; }
[ "$(cat f.log)" = "$wrong_pw" ] || { cat f.log; fail "-f: not the one line"; }
[ -e "$tmp/f.sock" ] && fail "-f: the socket stayed"
[ -e "$tmp/f.pid" ] && fail "-f: the PID file stayed"
timeout 60 nbdkit -f -U "$tmp/g.sock" --filter="$filter" memory 1M \
  passphrase=+pw >g.log 2>&1 && fail "zeros opened as LUKS"
grep -q "not a LUKS header" g.log || { cat g.log; fail "no reason given"; }
grep -q "/proc/self/fd" g.log && fail "the header copy's path was shown"
# In the background (nbdkit's default) nbdkit has exited 0 when the
# volume opens: the server ends at once, without its socket and PID
# file, and the error is in nbdkit's log (here stderr: -v keeps it open
# in the background).  The log's reader ends when the server, its last
# writer, has exited.
mkfifo b.fifo || fail "mkfifo"
timeout 60 cat b.fifo > b.log &
log_reader=$!
nbdkit -v --log=stderr -U "$tmp/b.sock" -P "$tmp/b.pid" --filter="$filter" \
  file l2.img passphrase=wrong-pw </dev/null >/dev/null 2>b.fifo
rc=$?
wait $log_reader || { cat b.log; fail "background: the server did not end"; }
[ $rc -eq 0 ] || { cat b.log; fail "background: nbdkit exited $rc, not 0"; }
grep -qx "$wrong_pw" b.log || { cat b.log; fail "background: no error logged"; }
grep -q "the volume did not open .*: the server ends" b.log \
  || { cat b.log; fail "background: the server did not end"; }
[ -e "$tmp/b.sock" ] && fail "background: the socket stayed"
[ -e "$tmp/b.pid" ] && fail "background: the PID file stayed"
echo "  ok: in the background: exit status 0, the server gone with its files"
# Under --run the command's connections are refused: it fails at once.
timeout 60 nbdkit -U - --filter="$filter" file l2.img passphrase=wrong-pw \
  --run 'nbdinfo "$uri"' >r.log 2>&1 && fail "--run: a wrong passphrase served"
grep -q "no keyslot matched" r.log || { cat r.log; fail "--run: no reason"; }
[ "$(grep -c '^nbdkit: .*error' r.log)" -eq 1 ] || { cat r.log; fail "--run: not one error"; }

echo "relative header= and keyfile= in the background"
# nbdkit leaves the working directory when it forks, and the filter
# opens its volume after: the names given must still be found.
cryptsetup luksHeaderBackup l2.img --header-backup-file l2.hdr \
  || fail "luksHeaderBackup"
nbdkit -U "$tmp/h.sock" -P "$tmp/h.pid" --filter="$filter" file l2.img \
  header=l2.hdr keyfile=pw readonly=true </dev/null || fail "nbdkit -P"
cleanup_fn "kill \$(cat '$tmp/h.pid') 2>/dev/null"
for (( i = 0; i < 100; i++ )); do [ -S "$tmp/h.sock" ] && break; sleep 0.1; done
expect_equal "the size through a relative detached header" $((48 << 20)) \
  "$(nbdinfo --size "nbd+unix:///?socket=$tmp/h.sock" 2>&1)"
kill "$(cat "$tmp/h.pid")"

echo "the control socket in filter mode"
nbdkit -U "$tmp/v.sock" -P "$tmp/v.pid" --filter="$filter" file l2.img \
  passphrase=+pw name=filtered readonly=true || fail "control volume"
cleanup_fn "kill \$(cat '$tmp/v.pid') 2>/dev/null"
for (( i = 0; i < 100; i++ )); do
  "$topdir/tools/dmcryptctl" info filtered >info 2>/dev/null && break
  sleep 0.1
done
grep -q "State:             ACTIVE (READ-ONLY)" info \
  || { cat info; fail "info in filter mode"; }
table=$("$topdir/tools/dmcryptctl" table --showkeys filtered) \
  || fail "table in filter mode"
case $table in
  "0 98304 crypt aes-xts-plain64 $key2 0 $tmp/l2.img 32768"*) ;;
  *) fail "table in filter mode: $table" ;;
esac
echo "$table" | "$topdir/tools/dmcryptctl" reload filtered \
  && "$topdir/tools/dmcryptctl" resume filtered || fail "reload + resume"
"$topdir/tools/dmcryptctl" info filtered | grep -q "State:             ACTIVE$" \
  || fail "not read-write after the reload"
nbdcopy data2.bin "nbd+unix:///?socket=$tmp/v.sock" || fail "write after flip"
pid=$(cat v.pid)
kill "$pid"
for (( i = 0; i < 100; i++ )); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
oracle decrypt l2.img l2b.out --luks-key "$key2" || fail "oracle decrypt"
head_of l2b.out l2b.head
expect_same "written after the flip" data2.bin l2b.head
echo "filter: all checks passed"
