#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# NBD semantics: export size, block size advertisement (minimum 1,
# preferred the encryption sector size or a page), flush, FUA, zero (reads back zeros, the
# ciphertext is not zeros), multi-conn, and trim: offered only with
# allow-discards, where it punches a hole in the backing file.
source "$(dirname "$0")/functions.sh"
requires_cmd nbdkit nbdinfo cryptsetup timeout
requires "$PY" -c 'import nbd'
plugin_built_or_fail
scratch

# Checks through two connections, reading the backing file alongside.
#   semantics.py URI IMAGE DATA_OFFSET_BYTES SECTOR_BYTES SIZE trim|notrim
cat > "$tmp/semantics.py" <<'EOF'
import os, sys
import nbd

uri, image = sys.argv[1], sys.argv[2]
data_off, ss, size = (int(a) for a in sys.argv[3:6])
mode = sys.argv[6]

def connect():
    h = nbd.NBD()
    h.set_strict_mode(0)        # unaligned, and trims the server refused
    h.connect_uri(uri)
    return h

def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)

def file_bytes(off, n):
    with open(image, "rb") as f:
        f.seek(data_off + off)
        return f.read(n)

def whole_sectors(start, end):
    """The bytes of [start, end) that fill whole encryption sectors."""
    a = -(-start // ss) * ss
    return a, max(a, end // ss * ss)

h, h2 = connect(), connect()
check(h.get_size() == size, "size %d, expected %d" % (h.get_size(), size))
check(h.get_block_size(nbd.SIZE_MINIMUM) == 1,
      "minimum block size %d, expected 1"
      % h.get_block_size(nbd.SIZE_MINIMUM))
check(h.get_block_size(nbd.SIZE_PREFERRED) == max(ss, 4096),
      "preferred block size %d, expected %d"
      % (h.get_block_size(nbd.SIZE_PREFERRED), max(ss, 4096)))
check(h.can_flush() and h.can_fua() and h.can_zero(),
      "flush, FUA or zero not offered")
check(h.can_multi_conn(), "multi-conn not offered")
check(not h.is_read_only(), "export is read-only")

# Write on one connection, flush on the other, read there.
data = os.urandom(65536)
h.pwrite(data, 12345)
h2.flush()
check(h2.pread(len(data), 12345) == data, "multi-conn: write not seen")
a, b = whole_sectors(12345, 12345 + len(data))
cipher = file_bytes(a, b - a)
check(cipher != data[a - 12345:b - 12345] and cipher != bytes(b - a),
      "ciphertext is plaintext or zeros")

# FUA: the write is in the backing file when the reply comes.
before = file_bytes(3 * ss, 4 * ss)
fua = os.urandom(4 * ss + 77)
h.pwrite(fua, 3 * ss - 11, nbd.CMD_FLAG_FUA)
check(file_bytes(3 * ss, 4 * ss) != before, "FUA write not in the file")
check(h2.pread(len(fua), 3 * ss - 11) == fua, "FUA write reads back wrong")

# Zero, unaligned and large: zeros read back, around it nothing changes,
# and the sectors hold encrypted zeros, not zeros.
for start, length in ((200000 + 100, 40000), (1 << 20, 1 << 20)):
    around = os.urandom(length + 2 * ss)
    h.pwrite(around, start - ss)
    h.zero(length, start)
    got = h2.pread(len(around), start - ss)
    check(got[ss:ss + length] == bytes(length), "zeroed range not zero")
    tail = ss + length
    check(got[:ss] == around[:ss] and got[tail:] == around[tail:],
          "zero changed bytes around its range")
    a, b = whole_sectors(start, start + length)
    check(b > a and bytes(b - a) != file_bytes(a, b - a),
          "zeroed sectors are zeros in the file, not encrypted zeros")
h.flush()

if mode == "notrim":
    check(not h.can_trim(), "trim offered without allow-discards")
    start = 4 << 20
    plain = os.urandom(1 << 20)
    h.pwrite(plain, start)
    h.flush()
    cipher = file_bytes(start, len(plain))
    try:
        h.trim(len(plain), start)
        sys.exit("FAIL: a trim without allow-discards succeeded")
    except nbd.Error:
        pass
    h.flush()
    check(file_bytes(start, len(plain)) == cipher, "refused trim wrote")
    check(h2.pread(len(plain), start) == plain, "refused trim lost data")
else:
    check(h.can_trim(), "trim not offered with allow-discards")
    start = 4 << 20
    plain = os.urandom(1 << 20)
    h.pwrite(plain, start)
    h.flush()
    fd = os.open(image, os.O_RDONLY)
    try:
        blocks_before = os.fstat(fd).st_blocks
        h.trim(len(plain), start)
        h.flush()
        blocks_after = os.fstat(fd).st_blocks
        hole = os.lseek(fd, data_off + start, os.SEEK_HOLE)
    finally:
        os.close(fd)
    print("trim: %d -> %d blocks of 512 bytes; hole at %d, trimmed %d"
          % (blocks_before, blocks_after, hole, data_off + start))
    check(blocks_before - blocks_after >= len(plain) // 512,
          "trim did not free the trimmed blocks")
    check(hole == data_off + start, "no hole where the trim was")
    check(file_bytes(start, len(plain)) == bytes(len(plain)),
          "trimmed ciphertext is not zeros")
    got = h2.pread(len(plain), start)
    check(got != plain and got != bytes(len(plain)),
          "trimmed plaintext is the old data or zeros, not garbage")

    # An unaligned trim leaves every byte outside its range alone.
    start = 6 << 20
    plain = os.urandom(8 * ss)
    h.pwrite(plain, start)
    h.trim(5 * ss + 123, start + ss // 2 + 1)
    got = h2.pread(len(plain), start)
    head, end = ss // 2 + 1, ss // 2 + 1 + 5 * ss + 123
    check(got[:head] == plain[:head] and got[end:] == plain[end:],
          "unaligned trim changed bytes outside its range")
h.shutdown()
h2.shutdown()
print("ok: size, block sizes, flush, FUA, zero, multi-conn, " + mode)
EOF

# semantics NAME IMAGE DATA_OFFSET SECTOR_BYTES SIZE MODE plugin-args...
semantics ()
{
  local name=$1 image=$2 data_off=$3 ss=$4 size=$5 mode=$6; shift 6
  local j=$tmp/$name.json

  echo "== $name"
  timeout 60 nbdkit -U - "$plugin" file="$image" "$@" --run \
    "nbdinfo --json \"\$uri\" > '$j' &&
     '$PY' '$tmp/semantics.py' \"\$uri\" '$image' $data_off $ss $size $mode" \
    || fail "$name: semantics check failed"
  # nbdinfo's view, as another client sees it.
  "$PY" - "$j" "$ss" "$size" "$mode" <<'EOF' || fail "$name: nbdinfo"
import json, sys
e = json.load(open(sys.argv[1]))["exports"][0]
want = {"block_size_minimum": 1,
        "block_size_preferred": max(int(sys.argv[2]), 4096),
        "export-size": int(sys.argv[3]),
        "can_trim": sys.argv[4] == "trim",
        "can_flush": True, "can_fua": True, "can_zero": True,
        "can_multi_conn": True, "is_read_only": False}
for k, v in want.items():
    if e.get(k) != v:
        sys.exit("FAIL: nbdinfo says %s=%r, expected %r" % (k, e.get(k), v))
print("ok: nbdinfo agrees")
EOF
}

key=$(random_hex 64)
mib=$((1024 * 1024))

truncate -s 16M "$tmp/plain.img"
semantics plain-512 "$tmp/plain.img" 0 512 $((16 * mib)) notrim \
  cipher=aes-xts-plain64 key="$key"
semantics plain-512-discards "$tmp/plain.img" 0 512 $((16 * mib)) trim \
  cipher=aes-xts-plain64 key="$key" allow-discards=true
semantics plain-offset-4096 "$tmp/plain.img" $mib 4096 $((15 * mib)) notrim \
  cipher=aes-xts-plain64 key="$key" offset=2048 sector-size=4096
semantics table-4096-discards "$tmp/plain.img" $mib 4096 $((12 * mib)) trim \
  table="0 $((12 * 2048)) crypt aes-xts-plain64 $key 0 x 2048 2 \
allow_discards sector_size:4096"
semantics table-discards-off "$tmp/plain.img" 0 512 $((16 * mib)) notrim \
  table="0 $((16 * 2048)) crypt aes-xts-plain64 $key 0 x 0 1 allow_discards" \
  allow-discards=off

# nbdinfo --can trim exits 2 for "no".
timeout 30 nbdkit -U - "$plugin" file="$tmp/plain.img" \
  cipher=aes-xts-plain64 key="$key" --run 'nbdinfo --can trim "$uri"'
[ $? -eq 2 ] || fail "nbdinfo --can trim: trim offered without discards"

# LUKS2 with 4096-byte sectors: the export is the data segment.
printf %s "sem-pw" > "$tmp/pw"
truncate -s 32M "$tmp/luks2.img"
luks_format luks2 "$tmp/luks2.img" sem-pw --sector-size 4096
data_off=$(cryptsetup luksDump "$tmp/luks2.img" \
           | awk '/^Data segments:/ {d=1} d && /offset:/ {print $2; exit}')
[ -n "$data_off" ] || fail "no data offset in luksDump"
semantics luks2-4096 "$tmp/luks2.img" "$data_off" 4096 \
  $((32 * mib - data_off)) notrim passphrase=+"$tmp/pw"
semantics luks2-4096-discards "$tmp/luks2.img" "$data_off" 4096 \
  $((32 * mib - data_off)) trim passphrase=+"$tmp/pw" allow-discards=1

# LUKS1, 512-byte sectors.
truncate -s 16M "$tmp/luks1.img"
luks_format luks1 "$tmp/luks1.img" sem-pw
data_off=$(cryptsetup luksDump "$tmp/luks1.img" \
           | awk '/^Payload offset:/ {print $3 * 512; exit}')
semantics luks1-512 "$tmp/luks1.img" "$data_off" 512 \
  $((16 * mib - data_off)) notrim passphrase=+"$tmp/pw"
# min-block-size= overrides the advertised minimum, nothing else;
# "sector" is the encryption sector size.
min_pref ()  # min_pref IMAGE plugin-args...: "MINIMUM PREFERRED"
{
  local image=$1; shift
  timeout 30 nbdkit -U - "$plugin" file="$image" passphrase=+"$tmp/pw" \
    "$@" --run 'nbdinfo --json "$uri"' \
    | "$PY" -c 'import json,sys; e=json.load(sys.stdin)["exports"][0]
print(e["block_size_minimum"], e["block_size_preferred"])'
}
for args in "luks2 512:512 4096" "luks2 sector:4096 4096" \
            "luks1 sector:512 4096"; do
  read -r img want <<<"$args"
  got=$(min_pref "$tmp/$img.img" min-block-size="${want%%:*}")
  [ "$got" = "${want#*:}" ] \
    || fail "$img, min-block-size=${want%%:*}: minimum/preferred are '$got'"
  echo "ok: $img, min-block-size=${want%%:*} advertises" \
    "minimum/preferred ${want#*:}"
done
echo PASS
