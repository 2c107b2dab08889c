#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tools/dmcrypt-trace on what is not a trace (binary data, random bytes,
# text, a LUKS image, a directory, a missing file, an endless line, a
# trace with a bad line): a non-zero exit and one line on stderr naming
# the file and what is wrong, nothing on stdout.  On an empty trace and
# a run that did no IO: "no events", exit 0.  On two server runs
# appended to one trace=FILE: the second start says so on stderr, each
# run begins with its marker and numbers its events from 1, and the
# analyser reports the runs apart with the event counts of the IO done.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdcopy cryptsetup cmp
plugin_built_or_fail
analyser_built_or_fail
scratch
export tmp

# refused WANT ARGS...: exit non-zero, stdout empty, one stderr line
# that names the last argument (the file) and matches the regex WANT.
refused ()
{
  local want=$1 rc; shift
  "$analyser" "$@" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -ne 0 ] || fail "dmcrypt-trace $*: exit 0"
  [ -s "$tmp/out" ] && fail "dmcrypt-trace $*: printed $(head -n 3 "$tmp/out")"
  [ "$(wc -l < "$tmp/err")" -eq 1 ] \
    || fail "dmcrypt-trace $*: not one line on stderr: $(cat "$tmp/err")"
  grep -q -F -- "dmcrypt-trace: ${!#}" "$tmp/err" \
    || fail "dmcrypt-trace $*: the message does not name ${!#}"
  grep -q -E -- "$want" "$tmp/err" \
    || fail "dmcrypt-trace $*: '$(cat "$tmp/err")' lacks '$want'"
  echo "  refused (exit $rc): $(cat "$tmp/err")"
}

# accepted ARGS...: exit 0, nothing on stderr; the output in $tmp/out.
accepted ()
{
  "$analyser" "$@" > "$tmp/out" 2> "$tmp/err" \
    || fail "dmcrypt-trace $*: exit $?: $(cat "$tmp/err")"
  [ -s "$tmp/err" ] && fail "dmcrypt-trace $*: stderr: $(cat "$tmp/err")"
  return 0
}

# has REGEX: the last output has a line matching REGEX.
has () { grep -q -E -- "$1" "$tmp/out" || fail "no line '$1' in: $(cat "$tmp/out")"; }

echo "not traces:"
{ printf 'BIN\0\1\2'; head -c 4096 /dev/urandom; } > "$tmp/binary"
refused ':1: binary data, not a trace event$' "$tmp/binary"
head -c 65536 /dev/urandom > "$tmp/random"
refused ':[0-9]+: .*not a trace' "$tmp/random"
printf 'hello world\nsecond line\n' > "$tmp/notes.txt"
refused ':1: not a trace event .*: "hello world"$' "$tmp/notes.txt"
truncate -s 16M "$tmp/luks.img"
luks_format luks2 "$tmp/luks.img" secret || fail "luksFormat"
refused ':1: a LUKS image, not a trace$' "$tmp/luks.img"
mkdir "$tmp/dir"
refused ': is a directory, not a trace file$' "$tmp/dir"
refused ': No such file or directory$' "$tmp/missing"
head -c 70000 /dev/zero | tr '\0' a > "$tmp/long"
refused ':1: a line longer than 65535 bytes' "$tmp/long"

echo "empty traces:"
: > "$tmp/empty"
accepted "$tmp/empty"
has "^$tmp/empty: no runs, no events \(an empty trace\)$"
printf '\n  \n\n' > "$tmp/blank"
accepted "$tmp/blank"
has 'no runs, no events'
refused 'no runs, no events' --quiet "$tmp/empty"

# The server, on a plain table, IO sizes fixed whatever the suite forces.
size_mib=4 chunk=128K chunks=32
key=$(random_hex 32)
table="0 $(( size_mib * 2048 )) crypt aes-cbc-essiv:sha256 $key 0 x 0"
truncate -s ${size_mib}M "$tmp/img"
head -c ${size_mib}M /dev/urandom > "$tmp/src"
# device=none: the event counts below are those of the image itself,
# also when a suite forces a device model (DMCRYPT_TEST_PARAMS).
serve ()  # serve TRACE CMD: stderr into $tmp/server.err
{
  timeout 120 nbdkit -U - "$plugin" file="$tmp/img" table="$table" \
    trace="$1" max-write-size=$chunk max-read-size=$chunk device=none \
    --run "$2" \
    </dev/null 2> "$tmp/server.err" \
    || fail "server with trace=$1 failed: $(cat "$tmp/server.err")"
}

serve "$tmp/idle" true
accepted "$tmp/idle"
cat "$tmp/out"
has "^run 1 of 1: start=[0-9T:.-]+Z pid=[0-9]+ dev=[0-9]+,[0-9]+ file=$tmp/img$"
has '^  no events: the server did no backend IO$'

echo "two runs in one trace:"
serve "$tmp/T" 'nbdcopy "$tmp/src" "$uri"'
grep -q 'appending' "$tmp/server.err" && fail "run 1: $(cat "$tmp/server.err")"
size1=$(stat -c %s "$tmp/T")
serve "$tmp/T" 'nbdcopy "$uri" "$tmp/back"'
cmp -s "$tmp/src" "$tmp/back" || fail "data read back differs"
cat "$tmp/server.err"
[ "$(wc -l < "$tmp/server.err")" -eq 1 ] || fail "run 2: not one notice"
grep -q -E "^nbdkit: dmcrypt: note: appending to trace $tmp/T, which holds $size1 bytes of earlier runs: .*\(pid [0-9]+\)$" \
  "$tmp/server.err" || fail "run 2: no notice of the append"
grep -q -i error "$tmp/server.err" && fail "the notice looks like an error"
pid2=$(grep -o -E 'pid [0-9]+' "$tmp/server.err" | cut -d' ' -f2)

# The file itself, read without the analyser: two markers, each run's
# sequence numbers from 1, dispatch counts per run.
awk '/ m +N dmcrypt-run / { run++; next }
     { if (!seen[run]++ && $3 != 1) bad = bad " run " run " starts at " $3
       if ($6 == "D") d[run, $7]++ }
     END { if (bad) { print bad; exit 1 }
           printf "%d %d %d %d %d\n", run, d[1, "W"], d[1, "R"], d[2, "W"],
             d[2, "R"] }' "$tmp/T" > "$tmp/counts" \
  || fail "sequence numbers do not restart: $(cat "$tmp/counts")"
expect_equal "runs, writes and reads per run in the file" \
  "2 $chunks 0 0 $chunks" "$(cat "$tmp/counts")"

accepted "$tmp/T"
cat "$tmp/out"
expect_equal "runs reported" "run 1 of 2:run 2 of 2:" \
  "$(grep -o -E '^run [0-9]+ of [0-9]+:' "$tmp/out" | tr -d '\n')"
has "^run 2 of 2: start=[^ ]+ pid=$pid2 dev=[0-9,]+ file=$tmp/img$"
# Each figure with its unit, and the counts of the IO done.
events="^  events: $(( 3 * chunks )) \(Q $chunks, D $chunks, C $chunks\) over [0-9.]+ s$"
stream="$chunks dispatches, $size_mib.0 MiB, [0-9.]+% sequential \([0-9]+ of $(( chunks - 1 )) started where the previous one ended\)(, [0-9.]+ MB/s)?$"
latency=': [0-9]+ IOs matched, p50 [0-9.]+ us, p90 [0-9.]+ us, p99 [0-9.]+ us, max [0-9.]+ us$'
sed -n '/^run 1 /,/^run 2 /p' "$tmp/out" > "$tmp/run1"
sed -n '/^run 2 /,$p' "$tmp/out" > "$tmp/run2"
for r in 1 2; do
  grep -q -E "$events" "$tmp/run$r" || fail "run $r: events line"
  [ "$(grep -c -E "^  (queue to dispatch \(Q2D\)|dispatch to completion \(D2C\))$latency" \
       "$tmp/run$r")" -eq 2 ] || fail "run $r: latency lines"
done
grep -q -E "^  writes: $stream" "$tmp/run1" || fail "run 1: writes line"
grep -q -E "^  reads:" "$tmp/run1" && fail "run 1 shows reads of run 2"
grep -q -E "^  reads: $stream" "$tmp/run2" || fail "run 2: reads line"
grep -q -E "^  writes:" "$tmp/run2" && fail "run 2 shows writes of run 1"
for r in 1 2; do
  grep -q -E '^  device busy: [0-9.]+ % of the run.s [0-9.]+ s \([0-9.]+ s with IO at the device\)$' \
    "$tmp/run$r" || fail "run $r: device busy line"
  grep -q -E '^  device busy [0-9.]+ %: (the host, not the device,|the device) limited this run$' \
    "$tmp/run$r" || fail "run $r: what limited it"
done
grep -E -v '^run |^  (events|writes|reads|queue|dispatch|throughput|device)' "$tmp/out" \
  && fail "lines of unknown kind"
echo "  two runs reported apart: $chunks writes, then $chunks reads"

# Choosing a run.
accepted --run 1 "$tmp/T"
diff "$tmp/out" "$tmp/run1" | grep -q '^>' && fail "--run 1 differs"
grep -q '^run 2' "$tmp/out" && fail "--run 1 shows run 2"
accepted --run last "$tmp/T"
cmp -s "$tmp/out" "$tmp/run2" || fail "--run last is not run 2"
refused '2 runs in this trace: choose one with --run' --quiet "$tmp/T"
accepted --run 1 --quiet "$tmp/T"
grep -q -x -E '(0\.[0-9]{4}|1\.0000)' "$tmp/out" \
  || fail "--run 1 --quiet: $(cat "$tmp/out")"
refused 'run 2 has no write dispatches' --run 2 --quiet "$tmp/T"
refused 'no run 3: the trace holds 2' --run 3 "$tmp/T"
"$analyser" --run 0 "$tmp/T" > "$tmp/out" 2> "$tmp/err"
expect_equal "--run 0: exit status" 2 $?
grep -q -x "dmcrypt-trace: --run: '0' is not a run number (1, 2, ...) or 'last'" \
  "$tmp/err" || fail "--run 0: $(cat "$tmp/err")"
if command -v gnuplot >/dev/null; then
  refused '2 runs in this trace' --png "$tmp/io.png" "$tmp/T"
  accepted --run 1 --png "$tmp/io.png" "$tmp/T"
  [ "$(head -c 8 "$tmp/io.png" | od -An -tx1 | tr -d ' \n')" = \
    89504e470d0a1a0a ] || fail "--png drew no PNG"
fi

# A bad line inside a real trace is named by its number.
sed '5s/.*/garbage/' "$tmp/T" > "$tmp/bad"
refused ':5: not a trace event .*: "garbage"$' "$tmp/bad"

# blkparse's own text, with a message and its closing summary, passes.
cat > "$tmp/blkparse" <<'EOT'
  8,0    1        1     0.000000000  4162  Q  WS 2048 + 8 [jbd2/sda1-8]
  8,0    1        2     0.000004000  4162  G  WS 2048 + 8 [jbd2/sda1-8]
  8,0    1        3     0.000010000  4162  D  WS 2048 + 8 [jbd2/sda1-8]
  8,0    0        0     0.000020000     0  m   N cfq4162 alloced
  8,0    0        4     0.000300000     0  C  WS 2048 + 8 [0]
CPU0 (8,0):
 Reads Queued:           0,        0KiB	 Writes Queued:           1,        4KiB
Total (8,0):
 Reads Queued:           0,        0KiB	 Writes Queued:           1,        4KiB

Throughput (R/W): 0KiB/s / 4KiB/s
Events (8,0): 4 entries
EOT
accepted "$tmp/blkparse"
has '^run 1 of 1: no dmcrypt-run marker'
has '^  events: 4 \(Q 1, D 1, C 1, other 1\) over 0\.000300 s$'
has '^  writes: 1 dispatch, 4\.0 KiB$'
# D at 10 us, C at 300 us, over the 300 us from Q: 290 / 300.
has '^  device busy: 96\.7 % of the run.s 0\.000300 s \(0\.000290 s with IO at the device\)$'
has '^  device busy 96\.7 %: the device limited this run$'
echo PASS
