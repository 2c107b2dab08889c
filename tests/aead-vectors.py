#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Known answers for dm-crypt's authenticated sectors, cut from the LUKS2
images with integrity that the kernel made (tests/data/integrity/,
tests/kernel/make-integrity-images.sh), for tests/unit/test-aead.

Usage: aead-vectors.py INTEGRITY_DIR > tests/data/aead-vectors.txt

For each luks2 image of the MANIFEST: the volume key, the kernel's
cipher string and integrity:N option (table.crypt), the segment's
--cipher and --integrity (made), and a few sectors of the top mapping
with their stored tags, read from the image through dm-integrity's
layout (Linux 6.1's calculate_device_limits, get_data_sector,
get_metadata_sector_and_offset): superblock (8 sectors), journal, then
areas of [tags, rounded up][interleave_sectors of data].  Each
sector's plaintext is the pattern the image was written with (its
ranges) or zeros (luksFormat's wipe), named rather than written out.
"""

import hashlib
import lzma
import os
import struct
import sys

SB_SECTORS = 8
JOURNAL_BLOCK_SECTORS = 8
SB_FLAG_HAVE_JOURNAL_MAC = 0x1
SB_FLAG_FIXED_PADDING = 0x8


def pattern(nbytes):
    """512-byte sector i: sha256("dmcrypt integrity pattern i"), then
    480 bytes of i mod 256 (the MANIFEST's header)."""
    out = bytearray()
    for i in range((nbytes + 511) // 512):
        out += hashlib.sha256(b"dmcrypt integrity pattern %d" % i).digest()
        out += bytes([i % 256]) * 480
    return bytes(out[:nbytes])


def check_ranges(row, pat):
    """The ranges' sha256 must be the pattern's, or the pattern is not
    the one the image was written with."""
    pos = 0
    for r in row["ranges"].split(","):
        where, digest = r.split(":")
        n = int(where.split("+")[1])
        if hashlib.sha256(pat[pos:pos + n]).hexdigest() != digest:
            raise ValueError("%s: range %s is not the pattern"
                             % (row["name"], where))
        pos += n


def manifest(path):
    rows = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        row = {}
        for field in line.rstrip("\n").split("\t"):
            key, _, value = field.partition("=")
            row[key] = value
        rows.append(row)
    return rows


class Geometry:
    """dm-integrity's layout from its superblock at START_SECTOR."""

    def __init__(self, image, start_sector):
        sb = image[start_sector * 512:start_sector * 512 + 512]
        if sb[:8] != b"integrt\0":
            raise ValueError("no dm-integrity superblock")
        (self.log2_interleave, self.tag_size, self.journal_sections,
         self.provided, self.flags, self.log2_spb) = struct.unpack_from(
             "<xBHIQIB", sb, 8)
        self.start = start_sector
        spb = 1 << self.log2_spb
        # calculate_journal_section_size
        entry = (8 + 8 * spb + self.tag_size + 7) & ~7
        space = 512 - 8 - (8 if self.flags & SB_FLAG_HAVE_JOURNAL_MAC else 0)
        section_entries = space // entry * JOURNAL_BLOCK_SECTORS
        section_sectors = (section_entries << self.log2_spb) \
            + JOURNAL_BLOCK_SECTORS
        self.initial = SB_SECTORS + section_sectors * self.journal_sections
        # calculate_device_limits: metadata_run
        pad = 8 * 512 if self.flags & SB_FLAG_FIXED_PADDING else 512 << 8
        tag_bytes = self.tag_size << (self.log2_interleave - self.log2_spb)
        self.metadata_run = (tag_bytes + pad - 1) // pad * pad // 512

    def data_byte(self, sector):
        area = sector >> self.log2_interleave
        offset = sector & ((1 << self.log2_interleave) - 1)
        return 512 * (self.start + self.initial
                      + (area + 1) * self.metadata_run
                      + (area << self.log2_interleave) + offset)

    def tag_byte(self, sector):
        area = sector >> self.log2_interleave
        offset = sector & ((1 << self.log2_interleave) - 1)
        return 512 * (self.start + self.initial
                      + area * self.metadata_run
                      + (area << self.log2_interleave)) \
            + (offset >> self.log2_spb) * self.tag_size


def crypt_table(line):
    """0 LEN crypt CIPHER KEY IV_OFFSET DEV OFFSET [N OPT...]"""
    words = line.split()
    opts = words[9:]
    table = {"cipher": words[3], "iv_offset": int(words[5]),
             "sector_bytes": 512, "iv_large_sectors": 0}
    for opt in opts:
        if opt.startswith("integrity:"):
            table["tag_bytes"] = int(opt.split(":")[1])
        elif opt.startswith("sector_size:"):
            table["sector_bytes"] = int(opt.split(":")[1])
        elif opt == "iv_large_sectors":
            table["iv_large_sectors"] = 1
    return table


def made_option(made, name):
    words = made.split()
    return words[words.index(name) + 1] if name in words else None


def plaintext_of(row, offset, nbytes):
    """What the mapping holds at OFFSET: "pattern P" (the pattern from
    byte P on, where a range put it), or "zeros" (luksFormat's wipe)."""
    pos = 0
    for r in row["ranges"].split(","):
        where, _ = r.split(":")
        off, n = (int(x) for x in where.split("+"))
        if off <= offset and offset + nbytes <= off + n:
            return "pattern %d" % (pos + offset - off)
        pos += n
    return "zeros"


def sectors_of(row, sector_bytes):
    """The first sector of A and of B, the last of C, and one that only
    the wipe wrote."""
    ranges = [tuple(int(x) for x in r.split(":")[0].split("+"))
              for r in row["ranges"].split(",")]
    picks = [ranges[0][0], ranges[1][0], sum(ranges[2]) - sector_bytes]
    if "errors" not in row:
        picks.append(int(row["mapped_bytes"]) // 2 - 65536)
    return [p // 512 for p in picks]


def vectors(directory, row):
    check_ranges(row, pattern(256 * 1024))
    image = lzma.open(os.path.join(directory, row["file"])).read()
    table = crypt_table(row["table.crypt"])
    start = int(row["table.integrity"].split()[4])
    geo = Geometry(image, start)
    ss = table["sector_bytes"]
    made = row["made"]
    yield "name %s" % row["name"]
    yield "luks2_cipher %s" % made_option(made, "--cipher")
    yield "luks2_integrity %s" % made_option(made, "--integrity")
    for key in ("cipher", "tag_bytes", "sector_bytes", "iv_large_sectors",
                "iv_offset"):
        yield "%s %s" % (key, table[key])
    yield "key %s" % row["volume_key"]
    for sector in sectors_of(row, ss):
        data = geo.data_byte(sector)
        tag = geo.tag_byte(sector)
        yield "sector %d" % sector
        yield "plaintext %s" % plaintext_of(row, sector * 512, ss)
        yield "ciphertext %s" % image[data:data + ss].hex()
        yield "tag %s" % image[tag:tag + geo.tag_size].hex()
    yield "end"


def main():
    directory = sys.argv[1]
    print("# SPDX-License-Identifier: GPL-2.0-or-later")
    print("# Sectors and their dm-integrity tags from LUKS2 images with")
    print("# integrity made by the kernel (tests/data/integrity/MANIFEST),")
    print("# cut by tests/aead-vectors.py.  One block per image, ended by")
    print("# \"end\"; each sector: its plaintext (\"pattern P\": the")
    print("# pattern from byte P, whose 512-byte sector i is sha256(\"dmcrypt")
    print("# integrity pattern i\") then 480 bytes of i mod 256; or")
    print("# \"zeros\"), ciphertext and tag in hex.")
    for row in manifest(os.path.join(directory, "MANIFEST")):
        if row["kind"] != "luks2":
            continue
        print("# %s" % row["made"])
        for line in vectors(directory, row):
            print(line)


if __name__ == "__main__":
    main()
