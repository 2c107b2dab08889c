#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Known-answer digests for tests/unit/test-cipher.c, from the test
suite's independent model of dm-crypt, tests/oracle.py.

The oracle's SectorCipher does the work: its IV generators, IV sector
arithmetic and XTS (by hand where OpenSSL's lacks the cipher or the key)
are written out from the kernel's drivers/md/dm-crypt.c, crypto/xts.c
and crypto/essiv.c and share no code with crypto/*.c; only the block
cipher, in ECB or CBC, and AES-XTS come from a library (python3-
cryptography, or the openssl command for ARIA, which python3-cryptography
lacks, or nettle for Serpent and Twofish, which the C code takes from
libgcrypt).  LRW is by hand in both.

For every spec below, the plaintext pattern is encrypted (and, for a
second digest, "decrypted") as 16 KiB starting at 512-byte sector
0xfffffff0, under every combination of sector size 512/1024/2048/4096,
iv_offset 0/24 and iv_large_sectors off/on, in that nesting order; the
SHA-256 of the concatenated outputs is the digest.

  /usr/bin/python3 tests/cipher-vectors.py
        print the entries of digest_vectors in tests/unit/cipher-vectors.h
  /usr/bin/python3 tests/cipher-vectors.py --compare tests/unit/test-cipher
        compare with what the C implementation prints (--print-digests)

Before either, the oracle checks itself (oracle.selftest): IEEE 1619-2007
vectors, its XTS by hand against OpenSSL's, IV layouts, round trips.
"""

import hashlib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

PLAIN_BYTES = 16384
START_SECTOR = 0xFFFFFFF0           # crosses 2^32 half way: plain wraps
SECTOR_SIZES = (512, 1024, 2048, 4096)
IV_OFFSETS = (0, 24)                # 512-byte sectors

# (spec, key bytes, key style); "dup" repeats the first half of the key.
SPECS = [
    ("aes-xts-plain64", 64, "pattern"),
    ("aes-xts-plain64", 32, "pattern"),
    ("aes-xts-plain64", 48, "pattern"),
    ("aes-xts-plain64", 64, "dup"),
    ("aes-xts-plain", 64, "pattern"),
    ("aes-xts-plain64be", 32, "pattern"),
    ("aes-xts-essiv:sha256", 64, "pattern"),
    ("aes-xts-essiv:wp256", 32, "pattern"),
    ("aes-xts-benbi", 32, "pattern"),
    ("aes-xts-eboiv", 32, "pattern"),
    ("aes-cbc-essiv:sha256", 32, "pattern"),
    ("aes-cbc-plain64", 16, "pattern"),
    ("aes-cbc-plain", 24, "pattern"),
    ("aes-cbc-null", 32, "pattern"),
    ("aes-cbc-benbi", 16, "pattern"),
    ("aes-cbc-eboiv", 32, "pattern"),
    ("aes-cbc-elephant", 32, "pattern"),
    ("aes-cbc-elephant", 64, "pattern"),
    ("capi:cbc(aes)-elephant", 48, "pattern"),
    ("aes-ecb", 32, "pattern"),
    ("camellia-xts-plain64", 64, "pattern"),
    ("camellia-cbc-essiv:sha256", 32, "pattern"),
    ("aria-xts-plain64", 64, "pattern"),
    ("sm4-xts-plain64", 32, "pattern"),
    ("des3_ede-cbc-plain64", 24, "pattern"),
    ("des3_ede-cbc-benbi", 24, "pattern"),
    ("blowfish-cbc-plain64be", 56, "pattern"),
    ("cast5-cbc-essiv:md5", 16, "pattern"),
    ("seed-cbc-plain64", 16, "pattern"),
    ("serpent-xts-plain64", 64, "pattern"),
    ("serpent-xts-plain64", 32, "pattern"),
    ("serpent-cbc-essiv:sha256", 32, "pattern"),
    ("serpent-cbc-plain", 20, "pattern"),
    ("twofish-xts-plain64", 64, "pattern"),
    ("twofish-xts-essiv:wp256", 32, "pattern"),
    ("twofish-cbc-essiv:sha256", 32, "pattern"),
    ("twofish-cbc-plain64", 16, "pattern"),
    ("aes-lrw-plain64", 32, "pattern"),
    ("aes-lrw-benbi", 48, "pattern"),
    ("serpent-lrw-plain64", 48, "pattern"),
    ("twofish-lrw-benbi", 32, "pattern"),
    # Cascades, as cryptsetup names TrueCrypt's and VeraCrypt's chains.
    ("twofish-aes-xts-plain64", 128, "pattern"),
    ("serpent-twofish-aes-xts-plain64", 192, "pattern"),
    ("serpent-camellia-xts-plain64", 128, "pattern"),
    ("aes-twofish-serpent-lrw-benbi", 144, "pattern"),
]


def plain_pattern():
    return bytes((i * 7 + (i >> 9)) & 0xFF for i in range(PLAIN_BYTES))


def key_bytes(size, style):
    if style == "dup":
        half = [(0x11 + i * 0x3B) & 0xFF for i in range(size // 2)]
        return bytes(half + half)
    return bytes((0x11 + i * 0x3B) & 0xFF for i in range(size))


def convert(spec, key, unit, iv_offset, large, data, encrypt):
    c = oracle.SectorCipher(spec, key, unit, iv_offset, large)
    return c.crypt(data, START_SECTOR, encrypt)


def digests(spec, size, style):
    key = key_bytes(size, style)
    plain = plain_pattern()
    enc, dec = hashlib.sha256(), hashlib.sha256()
    for unit in SECTOR_SIZES:
        for iv_offset in IV_OFFSETS:
            for large in (False, True):
                enc.update(convert(spec, key, unit, iv_offset, large,
                                   plain, True))
                dec.update(convert(spec, key, unit, iv_offset, large,
                                   plain, False))
    return enc.hexdigest(), dec.hexdigest()


def table_lines():
    for spec, size, style in SPECS:
        enc, dec = digests(spec, size, style)
        yield '%s %d %s %s %s' % (spec, size, style, enc, dec)


def print_c_table():
    for line in table_lines():
        spec, size, style, enc, dec = line.split()
        print('  { "%s", %s, KEY_%s,' % (spec, size, style.upper()))
        print('    "%s",' % enc)
        print('    "%s" },' % dec)


def compare(binary):
    ours = subprocess.run([binary, "--print-digests"], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.split("\n")
    theirs = set(line for line in ours if line)
    bad = 0
    for line in table_lines():
        ok = line in theirs
        bad += not ok
        print("%s: %s" % ("ok" if ok else "MISMATCH", line.split()[0:3]))
    return 1 if bad else 0


if __name__ == "__main__":
    oracle.selftest()
    if len(sys.argv) == 3 and sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2]))
    print_c_table()
