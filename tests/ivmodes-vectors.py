#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Known answers for the lmk and tcw IV functions (crypto/lmk.c,
crypto/tcw.c), made apart from the C code: MD5's compression function
from RFC 1321 (hashlib has no way to give MD5's state without its
padding) and CRC-32 from zlib, following the kernel's rules in
drivers/md/dm-crypt.c (crypt_iv_lmk_one, crypt_iv_tcw_gen,
crypt_iv_tcw_whitening) and crypto/crc32_generic.c (seed 0, no final
inversion, little-endian).  Prints the C table tests/unit/test-ivmodes.c
holds; the inputs are the patterns that test makes.
"""

import hashlib
import math
import struct
import zlib

# RFC 1321: the sine table and the shifts.
K = [int(abs(math.sin(i + 1)) * 2**32) & 0xffffffff for i in range(64)]
S = [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + \
    [6, 10, 15, 21] * 4


def md5_state(data):
    """MD5's chaining state after DATA (whole 64-byte blocks), unpadded."""
    assert len(data) % 64 == 0
    a0, b0, c0, d0 = 0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476
    for off in range(0, len(data), 64):
        m = struct.unpack("<16I", data[off:off + 64])
        a, b, c, d = a0, b0, c0, d0
        for i in range(64):
            if i < 16:
                f, g = (b & c) | (~b & d), i
            elif i < 32:
                f, g = (d & b) | (~d & c), (5 * i + 1) % 16
            elif i < 48:
                f, g = b ^ c ^ d, (3 * i + 5) % 16
            else:
                f, g = c ^ (b | ~d), (7 * i) % 16
            f = (f + a + K[i] + m[g]) & 0xffffffff
            a, d, c = d, c, b
            b = (b + ((f << S[i]) | (f >> (32 - S[i])))) & 0xffffffff
        a0, b0 = (a0 + a) & 0xffffffff, (b0 + b) & 0xffffffff
        c0, d0 = (c0 + c) & 0xffffffff, (d0 + d) & 0xffffffff
    return struct.pack("<4I", a0, b0, c0, d0)


def selftest_md5():
    # The unpadded state over a message padded by hand is MD5 itself.
    msg = b"abc"
    padded = msg + b"\x80" + b"\0" * (55 - len(msg)) + \
        struct.pack("<Q", 8 * len(msg))
    assert md5_state(padded) == hashlib.md5(msg).digest()


def lmk_iv(seed, plain, sector):
    tail = struct.pack("<4I", sector & 0xffffffff,
                       ((sector >> 32) & 0x00ffffff) | 0x80000000, 4024, 0)
    data = (seed + b"\0" * (64 - len(seed)) if seed is not None else b"")
    return md5_state(data + plain[16:512] + tail)


def crc32_kernel(data):
    """The kernel's "crc32": crc32_le seeded with 0, not inverted."""
    return ~zlib.crc32(data, 0xffffffff) & 0xffffffff


def tcw_iv(seed, sector):
    s = struct.pack("<Q", sector)
    return bytes(seed[i] ^ s[i % 8] for i in range(len(seed)))


def tcw_whitening(whitening, sector):
    s = struct.pack("<Q", sector)
    buf = bytearray(whitening[i] ^ s[i % 8] for i in range(16))
    for i in range(0, 16, 4):
        buf[i:i + 4] = struct.pack("<I", crc32_kernel(bytes(buf[i:i + 4])))
    return bytes([buf[i] ^ buf[12 + i] for i in range(4)] +
                 [buf[4 + i] ^ buf[8 + i] for i in range(4)])


def pattern(sector):
    """The plaintext sector test-ivmodes makes: (7 i + 13 s + 1) mod 256."""
    return bytes((7 * i + 13 * sector + 1) % 256 for i in range(512))


def hexs(b):
    return "".join("%02x" % x for x in b)


def main():
    selftest_md5()
    # The seed key's 16 bytes, the whitening key, the IV seed.
    seed = hashlib.sha256(b"lmk seed").digest()[:16]
    whitening = hashlib.sha256(b"tcw whitening").digest()[:16]
    iv_seed = hashlib.sha256(b"tcw iv seed").digest()[:16]
    print("/* tests/ivmodes-vectors.py: lmk seed %s, tcw whitening %s, "
          "IV seed %s */" % (hexs(seed), hexs(whitening), hexs(iv_seed)))
    for s in (0, 70, 0x123456789abcdef):
        for sd in (None, seed):
            print('  { "lmk", %d, %#xull, "%s" },' % (
                sd is not None, s, hexs(lmk_iv(sd, pattern(s & 0xff), s))))
    for s in (0, 70, 0x123456789abcdef):
        print('  { "tcw-iv", 0, %#xull, "%s" },' % (s, hexs(tcw_iv(iv_seed,
                                                                   s))))
        print('  { "tcw-whitening", 0, %#xull, "%s" },' % (
            s, hexs(tcw_whitening(whitening, s))))


if __name__ == "__main__":
    main()
