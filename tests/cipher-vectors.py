#!/usr/bin/python3
"""Known-answer digests for tests/unit/test-cipher.c, from a second,
independent model of dm-crypt written here in Python.

Only the raw block cipher (ECB) comes from a library: python3-cryptography,
or the openssl command for ARIA, which python3-cryptography 38 lacks.  The
chain modes (CBC, and XTS as IEEE 1619 defines it), the IV generators and
the IV sector arithmetic are written out below from the kernel's
drivers/md/dm-crypt.c, crypto/xts.c and crypto/essiv.c, and share no code
with crypto/*.c.

For every spec below, the plaintext pattern is encrypted (and, for a
second digest, "decrypted") as 16 KiB starting at 512-byte sector
0xfffffff0, under every combination of sector size 512/1024/2048/4096,
iv_offset 0/24 and iv_large_sectors off/on, in that nesting order; the
SHA-256 of the concatenated outputs is the digest.

  /usr/bin/python3 tests/cipher-vectors.py
        print the entries of digest_vectors in tests/unit/cipher-vectors.h
  /usr/bin/python3 tests/cipher-vectors.py --compare tests/unit/test-cipher
        compare with what the C implementation prints (--print-digests)

Before either, the hand-written modes are checked against IEEE 1619-2007
vector 2 and against the library's own CBC and AES-XTS (self_test).
"""

import hashlib
import subprocess
import sys
import warnings

warnings.simplefilter("ignore")     # Blowfish, CAST5, SEED are "legacy"
from cryptography.hazmat.primitives.ciphers import (  # noqa: E402
    Cipher, algorithms, modes)

PLAIN_BYTES = 16384
START_SECTOR = 0xFFFFFFF0           # crosses 2^32 half way: plain wraps
SECTOR_SIZES = (512, 1024, 2048, 4096)
IV_OFFSETS = (0, 24)                # 512-byte sectors
MASK64 = (1 << 64) - 1

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
]

BLOCK_BYTES = {"aes": 16, "camellia": 16, "aria": 16, "sm4": 16,
               "des3_ede": 8, "blowfish": 8, "cast5": 8, "seed": 16}
PY_ALGORITHMS = {"aes": algorithms.AES, "camellia": algorithms.Camellia,
                 "sm4": algorithms.SM4, "des3_ede": algorithms.TripleDES,
                 "blowfish": algorithms.Blowfish, "cast5": algorithms.CAST5,
                 "seed": algorithms.SEED}


def plain_pattern():
    return bytes((i * 7 + (i >> 9)) & 0xFF for i in range(PLAIN_BYTES))


def key_bytes(size, style):
    if style == "dup":
        half = [(0x11 + i * 0x3B) & 0xFF for i in range(size // 2)]
        return bytes(half + half)
    return bytes((0x11 + i * 0x3B) & 0xFF for i in range(size))


def ecb(cipher, key, data, encrypt):
    """The raw block cipher over whole blocks: the only library part."""
    if cipher == "aria":
        flag = "-e" if encrypt else "-d"
        return subprocess.run(
            ["openssl", "enc", flag, "-aria-%d-ecb" % (len(key) * 8),
             "-K", key.hex(), "-nopad"],
            input=data, stdout=subprocess.PIPE, check=True).stdout
    c = Cipher(PY_ALGORITHMS[cipher](key), modes.ECB())
    op = c.encryptor() if encrypt else c.decryptor()
    return op.update(data) + op.finalize()


def xor(a, b):
    n = len(a)
    return (int.from_bytes(a, "little") ^
            int.from_bytes(b, "little")).to_bytes(n, "little")


def xts_tweaks(t0, blocks):
    """T * alpha^j, j = 0..blocks-1, IEEE 1619-2007 section 5.2."""
    t = int.from_bytes(t0, "little")
    out = []
    for _ in range(blocks):
        out.append(t.to_bytes(16, "little"))
        t <<= 1
        if t >> 128:
            t = (t & ((1 << 128) - 1)) ^ 0x87
    return b"".join(out)


def xts(cipher, key, ivs, data, unit, encrypt):
    """XTS over UNIT-byte data units, each with its own IV (tweak)."""
    k1, k2 = key[:len(key) // 2], key[len(key) // 2:]
    t0s = ecb(cipher, k2, b"".join(ivs), True)
    tweaks = b"".join(xts_tweaks(t0s[i * 16:i * 16 + 16], unit // 16)
                      for i in range(len(ivs)))
    return xor(ecb(cipher, k1, xor(data, tweaks), encrypt), tweaks)


def cbc(cipher, key, ivs, data, unit, encrypt):
    bs = BLOCK_BYTES[cipher]
    out = []
    for i, iv in enumerate(ivs):
        chunk = data[i * unit:(i + 1) * unit]
        if encrypt:
            prev = iv
            for j in range(0, unit, bs):
                prev = ecb(cipher, key, xor(chunk[j:j + bs], prev), True)
                out.append(prev)
        else:
            chained = iv + chunk[:-bs]
            out.append(xor(ecb(cipher, key, chunk, False), chained))
    return b"".join(out)


def bulk(cipher, chain, key, ivs, data, unit, encrypt):
    if chain == "ecb":
        return ecb(cipher, key, data, encrypt)
    fn = xts if chain == "xts" else cbc
    return fn(cipher, key, ivs, data, unit, encrypt)


def iv_seeds(mode, cipher, iv_sectors, unit):
    """The generator outputs (crypt_iv_*_gen) before any encryption."""
    bs = BLOCK_BYTES[cipher]
    size = max(bs, 8)
    shift = 9 - (bs.bit_length() - 1)
    out = []
    for s in iv_sectors:
        if mode == "null":
            iv = bytes(size)
        elif mode == "plain":
            iv = (s & 0xFFFFFFFF).to_bytes(4, "little") + bytes(size - 4)
        elif mode in ("plain64", "essiv"):
            iv = (s & MASK64).to_bytes(8, "little") + bytes(size - 8)
        elif mode == "plain64be":
            iv = bytes(size - 8) + (s & MASK64).to_bytes(8, "big")
        elif mode == "benbi":
            val = ((s << shift) + 1) & MASK64
            iv = bytes(size - 8) + val.to_bytes(8, "big")
        elif mode == "eboiv":
            iv = ((s * unit) & MASK64).to_bytes(8, "little") + bytes(size - 8)
        else:
            raise ValueError(mode)
        out.append(iv)
    return out


def essiv_salt(hash_name, key):
    """The kernel's hash of the key; wp256 is Whirlpool cut to 32 bytes
    (crypto/wp512.c), which hashlib lacks: the openssl command has it."""
    if hash_name.startswith("wp"):
        digest = subprocess.run(
            ["openssl", "dgst", "-whirlpool", "-binary", "-provider",
             "legacy", "-provider", "default"],
            input=key, stdout=subprocess.PIPE, check=True).stdout
        return digest[:int(hash_name[2:]) // 8]
    return hashlib.new(hash_name, key).digest()


def make_ivs(cipher, chain, mode, hash_name, key, iv_sectors, unit):
    if chain == "ecb":
        return []
    seeds = iv_seeds(mode, cipher, iv_sectors, unit)
    if mode == "essiv":             # crypto/essiv.c: E_{H(key)}(plain64)
        salt = essiv_salt(hash_name, key)
        return split(ecb(cipher, salt, b"".join(seeds), True), len(seeds))
    if mode == "eboiv":             # bulk-encrypt a zero block, IV = seed
        size = len(seeds[0])
        return [bulk(cipher, chain, key, [seed], bytes(size), size, True)
                for seed in seeds]
    return seeds


def split(data, n):
    step = len(data) // n
    return [data[i * step:(i + 1) * step] for i in range(n)]


def parse(spec):
    cipher, chain, rest = (spec.split("-", 2) + [None])[:3]
    mode, _, hash_name = (rest or "").partition(":")
    return cipher, chain, mode or None, hash_name or None


def convert(spec, key, unit, iv_offset, large, data, encrypt):
    cipher, chain, mode, hash_name = parse(spec)
    step = unit // 512
    iv_sectors = []
    for i in range(len(data) // unit):
        s = START_SECTOR + i * step + iv_offset
        iv_sectors.append(s >> (step.bit_length() - 1) if large else s)
    ivs = make_ivs(cipher, chain, mode, hash_name, key, iv_sectors, unit)
    return bulk(cipher, chain, key, ivs, data, unit, encrypt)


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


def self_test():
    """The hand-written modes against published and library answers."""
    # IEEE 1619-2007 vector 2: sequence number 0x3333333333.
    key = bytes([0x11] * 16 + [0x22] * 16)
    iv = (0x3333333333).to_bytes(16, "little")
    want = ("c454185e6a16936e39334038acef838b"
            "fb186fff7480adc4289382ecd6d394f0")
    assert xts("aes", key, [iv], bytes([0x44] * 32), 32, True).hex() == want
    key, iv, data = key_bytes(32, "pattern"), bytes(range(16)), plain_pattern()
    lib = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    assert cbc("aes", key, [iv], data, len(data), True) == lib.update(data)
    lib = Cipher(algorithms.AES(key + key[::-1]), modes.XTS(iv)).encryptor()
    assert xts("aes", key + key[::-1], [iv], data, len(data),
               True) == lib.update(data)


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
    self_test()
    if len(sys.argv) == 3 and sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2]))
    print_c_table()
