#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Makes the dm-integrity test images in tests/data/integrity/ with the
# real kernel (Debian 12's 6.1 in QEMU, tests/kernel/kernel.sh), and
# their MANIFEST.  Run by hand, never by make check:
#
#   tests/kernel/make-integrity-images.sh [OUTDIR]
#
# (OUTDIR defaults to tests/data/integrity; KEEP=DIR keeps the boots'
# files.)  One boot formats every image with the guest's cryptsetup and
# integritysetup, writes three ranges of a fixed pattern through the
# kernel's mapping (the first bytes, the middle, the last bytes), closes,
# opens again and reads the whole mapping back (integrity-guest.sh); the
# table and status lines, the size and the sha256 go to the MANIFEST.
# The last image of that boot has a journal left dirty: its pattern is
# written with O_DIRECT and fsync (committed to the journal, not yet
# written back, the journal being far below its watermark) and the guest
# is stopped with sysrq "b" without closing it.  A second boot opens a
# copy of it, which replays the journal, and records what the kernel then
# reads; the stored image stays dirty.
#
# The pattern: 256 KiB, its 512-byte sector i (i = 0, 1 ...) is
# sha256("dmcrypt integrity pattern " + decimal i) then 480 bytes of
# value i mod 256 (unique sectors that compress); range A is its first
# bytes, B the next, C the next (each range's sha256 is in the MANIFEST):
# 64, 128 and 64 KiB on standalone images, 16, 32 and 16 KiB on the
# small LUKS2 ones, 8 KiB each on the dirty journal.
source "$(dirname "$0")/../functions.sh"
source "$srcdir/kernel/kernel.sh"
requires_cmd xz sha256sum cryptsetup
outdir=$(realpath -m "${1:-$srcdir/data/integrity}")
if [ -n "${KEEP:-}" ]; then
  tmp=$(realpath -m "$KEEP"); mkdir -p "$tmp"
else
  scratch
fi
cd "$tmp" || fail "cd $tmp"
kernel_setup

pw=integrity-test-passphrase
mkdir -p boot1/guest boot2/guest
"$PY" - boot1/guest/pattern.bin boot1/guest/int-hmac-sha256.key <<'EOF'
import hashlib, sys
with open(sys.argv[1], "wb") as f:
    for i in range(512):
        f.write(hashlib.sha256(b"dmcrypt integrity pattern %d" % i).digest()
                + bytes([i & 0xff]) * 480)
with open(sys.argv[2], "wb") as f:
    f.write(hashlib.sha256(b"dmcrypt integrity hmac key").digest())
EOF
cp "$srcdir/kernel/integrity-guest.sh" boot1/guest/
cp "$srcdir/kernel/integrity-guest.sh" boot2/guest/

# LUKS2 headers are kept small (16 KiB of metadata, 512 KiB of key
# slots, data at 544 KiB; the kernel refuses integrity devices much
# smaller, as the tags take a whole interleave area's worth whatever
# the size: 1 MiB for 32-byte tags on 512-byte sectors) as the wipe that luksFormat does through
# dm-crypt fills the whole data area with ciphertext, which never
# compresses.
luks_common="--pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
--luks2-metadata-size 16k --luks2-keyslots-size 512k --offset 1088"
luks_kib=1792

hmac_args="--integrity hmac-sha256 --integrity-key-file \
/guest/int-hmac-sha256.key --integrity-key-size 32"

# NAME KIND IMAGE_KIB ARGS: KIND luks2 takes luksFormat's arguments;
# integrity takes "FORMAT-ARGS :: OPEN-ARGS" of integritysetup, dirty
# the format's.  The
# dirty-journal image comes last (the boot ends there).
cases=(
  "luks2-hmac-sha256 luks2 $luks_kib --cipher aes-xts-plain64 --integrity hmac-sha256"
  "luks2-hmac-sha256-4k luks2 1152 --cipher aes-xts-plain64 --integrity hmac-sha256 --sector-size 4096"
  "luks2-hmac-sha512 luks2 2816 --cipher aes-xts-plain64 --integrity hmac-sha512"
  "luks2-cbc-essiv-hmac-sha256 luks2 $luks_kib --cipher aes-cbc-essiv:sha256 --key-size 256 --integrity hmac-sha256"
  "luks2-aes-gcm luks2 $luks_kib --cipher aes-gcm-random --key-size 256 --integrity aead"
  "luks2-chacha20-poly1305 luks2 $luks_kib --cipher chacha20-random --key-size 256 --integrity poly1305"
  "luks2-no-wipe luks2 2048 --cipher aes-xts-plain64 --integrity hmac-sha256 --integrity-no-wipe"
  "int-crc32c integrity 16384 ::"
  "int-sha256 integrity 4096 --integrity sha256 :: --integrity sha256"
  "int-hmac-sha256 integrity 4096 $hmac_args :: $hmac_args"
  "int-4k integrity 16384 --sector-size 4096 ::"
  "int-bitmap integrity 16384 :: --integrity-bitmap-mode"
  "int-interleave integrity 16384 --interleave-sectors 2048 ::"
  "int-tag8 integrity 16384 --tag-size 8 ::"
  "int-dirty dirty 16384 --journal-size 2097152"
)

# The guest's script: helpers, then one call per case.
{
  cat <<EOF
. /guest/integrity-guest.sh
pw='$pw'
luks_common='$luks_common'
EOF
  cat <<'EOF'
P=/guest/pattern.bin
modprobe dm-integrity

# Pages where it can: busybox dd aligns its buffer for O_DIRECT only
# from a page up and otherwise falls back to a buffered write, which
# reads the rest of the page first -- on --integrity-no-wipe, sectors
# never written, which fail (EIO).
wr ()  # wr NAME DEV SS PATTERN_OFFSET DEVICE_OFFSET LENGTH
{
  local bs=$3
  [ $((($4 | $5 | $6) % 4096)) -eq 0 ] && bs=4096
  dd if=$P of="$2" bs=$bs skip=$(($4 / bs)) seek=$(($5 / bs)) \
     count=$(($6 / bs)) oflag=direct conv=fsync 2>/tmp/dd.err \
    || echo "F $1 fail write at $5: $(head -n 1 /tmp/dd.err)"
}

# A at 0, B at the middle (64 KiB aligned), C at the end, their lengths
# given; prints "F NAME ranges OFF+LEN ...".
write_ranges ()  # write_ranges NAME DEV LEN_A LEN_B LEN_C
{
  local size ss b c
  size=$(blockdev --getsize64 "$2"); ss=$(blockdev --getss "$2")
  b=$(( size / 2 / 65536 * 65536 )); c=$(( size - $5 ))
  if [ "$b" -lt "$3" ] || [ "$c" -lt $((b + $4)) ]; then
    echo "F $1 fail device of $size bytes too small"; return 1
  fi
  wr "$1" "$2" "$ss" 0 0 "$3"
  wr "$1" "$2" "$ss" "$3" "$b" "$4"
  wr "$1" "$2" "$ss" $(($3 + $4)) "$c" "$5"
  echo "F $1 ranges 0+$3 $b+$4 $c+$5"
}

read_and_facts ()  # read_and_facts NAME MAPPED-NAMES...
{
  local name=$1
  shift
  integrity_read "/dev/mapper/$1" | sed "s/^/F $name read /"
  integrity_facts "F $name" "$@"
}

luks_case ()  # luks_case NAME DEV luksFormat-ARGS...
{
  local name=$1 dev=$2 key dumped
  shift 2
  echo "F $name made cryptsetup luksFormat --type luks2 $luks_common $*"
  if ! printf %s "$pw" | cryptsetup luksFormat --batch-mode --type luks2 \
         $luks_common "$@" --key-file - "$dev" > /tmp/fmt.log 2>&1; then
    echo "F $name fail luksFormat: $(grep -v WARNING /tmp/fmt.log \
                                         | tail -n 1)"; return
  fi
  printf %s "$pw" | cryptsetup open --disable-keyring --key-file - \
    "$dev" "$name" || { echo "F $name fail open"; return; }
  write_ranges "$name" "/dev/mapper/$name" 16384 32768 16384
  key=$(dmsetup table --showkeys "$name" | awk '{ print $5 }')
  dumped=$(printf %s "$pw" | cryptsetup luksDump --dump-volume-key \
             --batch-mode --key-file - "$dev" 2>/dev/null \
           | awk '/^MK dump:/ { on = 1; sub(/^MK dump:/, "") }
                  on && /^[ \t]*([0-9a-f][0-9a-f] ?)+[ \t]*$/ { gsub(/[ \t]/, ""); k = k $0; next }
                  on { on = 0 }
                  END { print k }')
  echo "F $name volume_key $dumped"
  [ "$key" = "$dumped" ] \
    || echo "F $name fail table key $key is not luksDump's $dumped"
  cryptsetup close "$name"
  printf %s "$pw" | cryptsetup open --disable-keyring --key-file - \
    "$dev" "$name" || { echo "F $name fail reopen"; return; }
  read_and_facts "$name" "$name" "${name}_dif"
  cryptsetup close "$name" || echo "F $name fail close"
}

int_case ()  # int_case NAME DEV FORMAT-ARGS :: OPEN-ARGS
{
  local name=$1 dev=$2 fmt="" open=""
  shift 2
  while [ $# -gt 0 ] && [ "$1" != "::" ]; do fmt="$fmt $1"; shift; done
  [ $# -gt 0 ] && shift
  open="$*"
  echo "F $name made integritysetup format$fmt; integritysetup open $open"
  integritysetup format --batch-mode $fmt "$dev" > /tmp/fmt.log 2>&1 \
    || { echo "F $name fail format: $(tail -n 1 /tmp/fmt.log)"; return; }
  integritysetup open $open "$dev" "$name" \
    || { echo "F $name fail open"; return; }
  write_ranges "$name" "/dev/mapper/$name" 65536 131072 65536
  integritysetup close "$name"
  integritysetup open $open "$dev" "$name" \
    || { echo "F $name fail reopen"; return; }
  read_and_facts "$name" "$name"
  integritysetup close "$name" || echo "F $name fail close"
}

# Written, committed, never closed: the boot ends here.
dirty_case ()  # dirty_case NAME DEV FORMAT-ARGS...
{
  local name=$1 dev=$2
  shift 2
  echo "F $name made integritysetup format $*; integritysetup open;" \
       "8 KiB written at A, B, C with O_DIRECT and fsync; sysrq b"
  integritysetup format --batch-mode "$@" "$dev" > /tmp/fmt.log 2>&1 \
    || { echo "F $name fail format: $(tail -n 1 /tmp/fmt.log)"; return; }
  integritysetup open "$dev" "$name" || { echo "F $name fail open"; return; }
  write_ranges "$name" "/dev/mapper/$name" 8192 8192 8192
  integrity_read "/dev/mapper/$name" | sed "s/^/F $name before /"
  integrity_facts "F $name before" "$name"
  echo "F $name ready"
  sleep 2
  echo b > /proc/sysrq-trigger
  sleep 10
}
EOF
  i=0
  for c in "${cases[@]}"; do
    set -- $c
    name=$1 kind=$2; shift 3
    dev=/dev/vd$(printf "\\x$(printf %x $((97 + i)))")
    case $kind in
      luks2) echo "luks_case $name $dev $*" ;;
      integrity) echo "int_case $name $dev $*" ;;
      dirty) echo "dirty_case $name $dev $*" ;;
    esac
    i=$((i + 1))
  done
} > boot1/script

images=()
for c in "${cases[@]}"; do
  set -- $c
  rm -f "$1.img"; truncate -s "$3K" "$1.img"
  images+=("$tmp/$1.img")
done
echo "boot 1: ${#cases[@]} images"
kernel_boot boot1 boot1/script "${images[@]}"
rc=$?
grep '^F ' boot1/out > facts || true
grep -q '^F int-dirty ready$' facts \
  || { cat boot1/out; fail "boot 1 did not reach the dirty journal (exit $rc)"; }
if grep ' fail ' facts; then fail "boot 1: a case failed (above)"; fi

cp int-dirty.img int-dirty-replayed.img
cat > boot2/script <<'EOF'
. /guest/integrity-guest.sh
modprobe dm-integrity
integritysetup open /dev/vda int-dirty || echo "F int-dirty fail open"
integrity_read /dev/mapper/int-dirty | sed "s/^/F int-dirty read /"
integrity_facts "F int-dirty" int-dirty
integritysetup close int-dirty || echo "F int-dirty fail close"
EOF
echo "boot 2: the dirty journal replayed"
kernel_boot boot2 boot2/script "$tmp/int-dirty-replayed.img" \
  || { cat boot2/out; fail "boot 2 failed"; }
grep '^F ' boot2/out >> facts
if grep ' fail ' facts; then fail "boot 2 failed (above)"; fi

"$PY" - "$outdir" "$kver ($kpkg $kpkgver)" "$pw" facts boot1/guest \
  "${cases[@]}" <<'EOF' || fail "MANIFEST"
import hashlib, os, shutil, subprocess, sys
outdir, kernel, pw, facts_path, guest = sys.argv[1:6]
cases = [c.split()[:2] for c in sys.argv[6:]]
facts = {}
for line in open(facts_path):
    _, name, rest = line.rstrip("\n").split(" ", 2)
    facts.setdefault(name, []).append(rest)
pattern = open(os.path.join(guest, "pattern.bin"), "rb").read()
os.makedirs(outdir, exist_ok=True)
shutil.copy(os.path.join(guest, "int-hmac-sha256.key"), outdir)
HEAD = """\
# SPDX-License-Identifier: GPL-2.0-or-later
# dm-integrity images made by the kernel @KERNEL@
# with tests/kernel/make-integrity-images.sh (run by hand; it rewrites
# this file).  One line per image, TAB-separated KEY=VALUE fields:
#   name, kind        luks2 (cryptsetup --integrity) or integrity
#                     (integritysetup, standalone)
#   file              the image, xz-compressed (xz -d -k FILE)
#   image_bytes, image_sha256   the image as the kernel left it
#   made              the commands (the device argument left out)
#   passphrase        LUKS2 keyslot 0's; key_file: the HMAC key, beside
#   volume_key        hex, as luksDump --dump-volume-key and the table
#                     (--showkeys) say: cipher key, then the MAC key
#   table.crypt, table.integrity, status.crypt, status.integrity
#                     dmsetup table (without --showkeys: keys masked) and
#                     status of each mapping, device fields as the guest's
#   mapped_bytes, sector_bytes  of the top mapping (blockdev)
#   sha256            of the whole top mapping as the kernel read it
#                     (closed and opened again after writing)
#   sha256_note       "failed runs read as zeros" where some failed
#   errors            OFF+LEN,... byte runs of the mapping that failed to
#                     read (with --integrity-no-wipe, what was never
#                     written)
#   ranges            OFF+LEN:SHA256,... the pattern's three ranges as
#                     written through the kernel's mapping (A, B, C)
#   dmesg_lines       kernel lines of integrity/crypt errors while reading
#   before_crash.*    (the dirty journal) what the live mapping showed and
#                     read before the guest was stopped with sysrq b
#   note              anything else
# The pattern: 256 KiB; its 512-byte sector i is sha256("dmcrypt
# integrity pattern i") then 480 bytes of value i mod 256; A takes its
# first bytes, B the next, C the next.
"""
rows = []
for name, kind in cases:
    f = {"name": name, "kind": "luks2" if kind == "luks2" else "integrity",
         "file": name + ".img.xz"}
    tables, statuses, bad, dmesg = [], [], [], []
    read = "before " if kind == "dirty" else "read "
    for rest in facts[name]:
        key, _, value = rest.partition(" ")
        words = rest.split(" ", 3)
        if words[0] == "before" and words[1] in ("table", "status"):
            f["before_crash." + words[1]] = words[3]
            continue
        if key == "made":
            f["made"] = value
        elif key == "ranges":
            pos, out = 0, []
            for r in value.split():
                off, n = (int(x) for x in r.split("+"))
                out.append("%d+%d:%s" % (off, n, hashlib.sha256(
                    pattern[pos:pos + n]).hexdigest()))
                pos += n
            f["ranges"] = ",".join(out)
        elif key == "volume_key":
            f["volume_key"] = value
        elif key in ("table", "status") and not rest.startswith("before"):
            dev, _, line = value.partition(" ")
            (tables if key == "table" else statuses).append(line)
        elif rest.startswith("read ") or rest.startswith("before "):
            which, _, item = rest.partition(" ")
            k, _, v = item.partition(" ")
            pre = "" if which == "read" else "before_crash."
            if k == "size":
                f[pre + "mapped_bytes"] = v
            elif k == "sector_size":
                f[pre + "sector_bytes"] = v
            elif k == "sha256":
                f[pre + "sha256"] = v
            elif k == "bad":
                bad.append("%s+%s" % tuple(v.split()))
            elif k == "dmesg" and which == "read":
                dmesg.append(v)
    for line in tables:
        f["table." + line.split()[2]] = line
    for line in statuses:
        f["status." + line.split()[2]] = line
    if f["kind"] == "luks2":
        f["passphrase"] = pw
    if name == "int-hmac-sha256":
        f["key_file"] = "int-hmac-sha256.key"
    if bad:
        f["errors"] = ",".join(bad)
        f["sha256_note"] = "failed runs read as zeros"
    if kind == "dirty":
        f["note"] = ("journal left dirty: sha256 is what the kernel read "
                     "after replaying it on a copy; before_crash.* what it "
                     "read from the live mapping")
    if dmesg:
        f["dmesg_lines"] = str(len(dmesg))
    img = name + ".img"
    f["image_bytes"] = str(os.path.getsize(img))
    f["image_sha256"] = hashlib.sha256(open(img, "rb").read()).hexdigest()
    subprocess.run(["xz", "-9", "-k", "-f", "-T1", img], check=True)
    shutil.move(img + ".xz", os.path.join(outdir, img + ".xz"))
    rows.append(f)
order = ["name", "kind", "file", "image_bytes", "image_sha256", "made",
         "passphrase", "key_file", "volume_key", "table.crypt",
         "table.integrity", "status.crypt", "status.integrity",
         "mapped_bytes", "sector_bytes", "sha256", "sha256_note", "ranges",
         "errors", "dmesg_lines", "before_crash.table",
         "before_crash.status", "before_crash.mapped_bytes",
         "before_crash.sector_bytes", "before_crash.sha256", "note"]
with open(os.path.join(outdir, "MANIFEST"), "w") as out:
    out.write(HEAD.replace("@KERNEL@", kernel))
    for f in rows:
        missing = set(f) - set(order)
        assert not missing, missing
        out.write("\t".join("%s=%s" % (k, f[k]) for k in order if k in f)
                  + "\n")
EOF
echo "made $(ls "$outdir"/*.img.xz | wc -l) images in $outdir:"
du -ch "$outdir"/*.img.xz | tail -n 1
