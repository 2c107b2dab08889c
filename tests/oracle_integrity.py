# SPDX-License-Identifier: GPL-2.0-or-later
"""Independent dm-integrity, and dm-crypt's authenticated sectors over it,
for tests/oracle.py (its integrity-read and integrity-check commands).

Written from the kernel's rules (drivers/md/dm-integrity.c and
drivers/md/dm-crypt.c of Linux 6.1, and
Documentation/admin-guide/device-mapper/dm-integrity.rst), read-only:

  * The superblock (512 bytes at the device's start): "integrt\\0",
    version, log2(interleave sectors), tag size (le16), journal sections
    (le32), provided data sectors (le64), flags (le32), log2(sectors per
    block), log2(blocks per bitmap bit), 2 pad, recalc sector (le64),
    8 pad, a 16-byte salt.
  * Geometry (calculate_journal_section_size, calculate_device_limits):
    a journal entry is an le64 sector, 8 "last bytes" per 512-byte sector
    of the block and the tag, rounded up to 8 bytes; a journal sector has
    504 bytes of entries (496 with a journal MAC) and an le64 commit id
    at its end; a section is 8 sectors of entries, entry n in sector
    n % 8 at slot n / 8, then one block of data per entry, each of its
    512-byte sectors' last 8 bytes replaced by the commit id (the bytes
    kept in the entry).  The journal follows the 8 superblock sectors;
    the areas follow it, each a run of tags ("metadata_run": the tags of
    one area, rounded up to 4 KiB with fix_padding, to 128 KiB without)
    and then 2^log2_interleave data sectors.
  * A committed journal sector's commit id is commit_ids[seq] ^
    le64((section << 32) ^ sector) with commit_ids 0x1111..., 0x2222...,
    0x3333..., 0x4444... (create_journal, without journal encryption);
    replay_journal picks the first unused seq, the one before it as the
    last used, and replays the sections from after the last one of that
    seq for as long as each sector carries the seq before it (the next
    one after a wrap); entries whose sector_hi is 0xffffffff are unused,
    later entries win (do_journal_write).
  * An internal hash tags a block with H([salt if fix_hmac] || le64
    logical sector || block), cut or zero-padded to the tag size
    (integrity_sector_checksum); crc32c's digest is the le32 of the
    inverted register.
  * dm-crypt's AEAD (crypt_convert_block_aead): the AAD is le64(512-byte
    sector of the mapping, iv_offset left out) || the IV; the on-disk tag
    is the authentication tag, then the IV for -random modes (stored,
    not derived), then zeros.  authenc(hmac(H),MODE(aes)) takes the
    table's key as cipher key then MAC key (crypt_copy_authenckey),
    MACs AAD || ciphertext, and the IV in the AAD is the one the cipher
    takes: with essiv the encrypted one (crypto/essiv.c rewrites the AAD),
    and the ESSIV key is the hash of the whole table key (cipher and MAC
    keys), as the images the 6.1 kernel wrote show.
"""

import hashlib
import hmac
import json
import os
import struct

from cryptography.hazmat.primitives.ciphers.aead import (AESGCM,
                                                         ChaCha20Poly1305)

import oracle

SECTOR = 512
SB_SECTORS = 8
JOURNAL_BLOCK_SECTORS = 8
JOURNAL_SECTOR_DATA = 504
JOURNAL_MAC_PER_SECTOR = 8
N_COMMIT_IDS = 4
FLAG_HAVE_JOURNAL_MAC = 0x1
FLAG_RECALCULATING = 0x2
FLAG_DIRTY_BITMAP = 0x4
FLAG_FIXED_PADDING = 0x8
FLAG_FIXED_HMAC = 0x10
FLAG_NAMES = {FLAG_HAVE_JOURNAL_MAC: "journal_mac",
              FLAG_RECALCULATING: "recalculating",
              FLAG_DIRTY_BITMAP: "dirty_bitmap",
              FLAG_FIXED_PADDING: "fix_padding", FLAG_FIXED_HMAC: "fix_hmac"}
UNUSED_HI, INPROGRESS_HI = 0xffffffff, 0xfffffffe
MASK64 = (1 << 64) - 1


class IntegrityError(oracle.OracleError):
    pass


# -------------------------------------------------------------------- crc32c

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c_update(reg, data):
    """The reflected CRC-32C register after DATA (no pre/post inversion)."""
    t = CRC32C_TABLE
    for b in data:
        reg = (reg >> 8) ^ t[(reg ^ b) & 0xff]
    return reg


class Crc32cZeros:
    """The register after N zero bytes is linear in the register before:
    kept as its 32 columns, so that zero blocks cost 32 XORs."""

    def __init__(self, n):
        zeros = bytes(n)
        self.cols = [crc32c_update(1 << i, zeros) for i in range(32)]

    def apply(self, reg):
        out, i = 0, 0
        while reg:
            if reg & 1:
                out ^= self.cols[i]
            reg >>= 1
            i += 1
        return out


# -------------------------------------------------------------- internal hash

class InternalHash:
    """integrity_sector_checksum for one hash: "crc32c", "sha1", "sha256",
    "sha512" or "hmac(sha256)" ... (with KEY)."""

    def __init__(self, name, key, tag_size, block_bytes, salt):
        self.name, self.tag_size, self.salt = name, tag_size, salt
        self.zero_block = bytes(block_bytes)
        self.key = key
        if name == "crc32c":
            self.zeros = Crc32cZeros(block_bytes)
            return
        inner = name[5:-1] if name.startswith("hmac(") else name
        if inner not in hashlib.algorithms_available:
            raise IntegrityError("unsupported internal hash " + name)
        self.inner = inner
        if name.startswith("hmac(") and not key:
            raise IntegrityError("%s needs a key" % name)
        if key and not name.startswith("hmac("):
            raise IntegrityError("%s takes no key" % name)

    def tag(self, sector, data):
        prefix = (self.salt or b"") + struct.pack("<Q", sector)
        if self.name == "crc32c":
            reg = crc32c_update(0xffffffff, prefix)
            if data == self.zero_block:
                reg = self.zeros.apply(reg)
            else:
                reg = crc32c_update(reg, data)
            digest = struct.pack("<I", reg ^ 0xffffffff)
        elif self.key:
            digest = hmac.new(self.key, prefix + data, self.inner).digest()
        else:
            digest = hashlib.new(self.inner, prefix + data).digest()
        return digest[:self.tag_size].ljust(self.tag_size, b"\0")


# ------------------------------------------------------------ the superblock

class Superblock:
    def __init__(self, raw):
        if raw[:8] != b"integrt\0":
            raise IntegrityError("no dm-integrity superblock (magic)")
        (self.version, self.log2_interleave, self.tag_size,
         self.journal_sections, self.provided_data_sectors, self.flags,
         self.log2_spb, self.log2_blocks_per_bit, self.recalc_sector) = \
            struct.unpack_from("<BBHIQIBB2xQ", raw, 8)
        self.salt = raw[48:64]
        if not 1 <= self.version <= 5:
            raise IntegrityError("superblock version %d" % self.version)
        if self.log2_spb > 3 or not self.tag_size or \
                not 3 <= self.log2_interleave <= 31:
            raise IntegrityError("superblock geometry out of range")

    def flag_names(self):
        return ",".join(n for f, n in sorted(FLAG_NAMES.items())
                        if self.flags & f) or "-"


# ---------------------------------------------------------------- the device

class Integrity:
    """A dm-integrity device (no separate metadata device) at START_BYTES
    of the image BUF (bytes or a memoryview)."""

    def __init__(self, buf, start_bytes=0):
        self.buf, self.start = buf, start_bytes
        self.sb = sb = Superblock(bytes(buf[start_bytes:start_bytes + 512]))
        self.spb = 1 << sb.log2_spb
        self.block_bytes = SECTOR * self.spb
        self.tag_size = sb.tag_size
        # calculate_journal_section_size
        self.entry_size = -(-(8 + 8 * self.spb + sb.tag_size) // 8) * 8
        space = JOURNAL_SECTOR_DATA
        if sb.flags & FLAG_HAVE_JOURNAL_MAC:
            space -= JOURNAL_MAC_PER_SECTOR
        self.entries_per_sector = space // self.entry_size
        self.section_entries = self.entries_per_sector * JOURNAL_BLOCK_SECTORS
        self.section_sectors = (self.section_entries << sb.log2_spb) + \
            JOURNAL_BLOCK_SECTORS
        self.initial_sectors = SB_SECTORS + \
            self.section_sectors * sb.journal_sections
        # calculate_device_limits, without a metadata device
        pad = 4096 if sb.flags & FLAG_FIXED_PADDING else SECTOR << 8
        run_bytes = sb.tag_size << (sb.log2_interleave - sb.log2_spb)
        self.metadata_run = -(-run_bytes // pad) * pad // SECTOR
        self.interleave = 1 << sb.log2_interleave
        last = self.data_sector(sb.provided_data_sectors - 1)
        if (last + 1) * SECTOR > len(buf):
            raise IntegrityError("image of %d bytes ends before the last "
                                 "data sector %d" % (len(buf), last))
        self.overlay = {}
        self.journal = None

    @property
    def blocks(self):
        return self.sb.provided_data_sectors >> self.sb.log2_spb

    @property
    def areas(self):
        return -(-self.sb.provided_data_sectors // self.interleave)

    def data_sector(self, sector):
        """get_data_sector: the image's 512-byte sector holding logical
        SECTOR."""
        area, offset = divmod(sector, self.interleave)
        return (self.start // SECTOR + self.initial_sectors +
                area * self.interleave + (area + 1) * self.metadata_run +
                offset)

    def tag_offset(self, sector):
        """get_metadata_sector_and_offset, in bytes of the image."""
        area, offset = divmod(sector, self.interleave)
        base = (self.start // SECTOR + self.initial_sectors +
                area * (self.interleave + self.metadata_run)) * SECTOR
        return base + (offset >> self.sb.log2_spb) * self.tag_size

    def stored(self, block):
        """(data, tag) of BLOCK as the data area and tags hold them."""
        s = block << self.sb.log2_spb
        pos = self.data_sector(s) * SECTOR
        t = self.tag_offset(s)
        return (bytes(self.buf[pos:pos + self.block_bytes]),
                bytes(self.buf[t:t + self.tag_size]))

    def block(self, block):
        """(data, tag) as the kernel would serve BLOCK: the replayed
        journal's, else the stored ones."""
        if block in self.overlay:
            return self.overlay[block]
        return self.stored(block)

    # ------------------------------------------------------------ journal

    def journal_sector(self, section, j):
        pos = self.start + (SB_SECTORS + section * self.section_sectors +
                            j) * SECTOR
        return bytes(self.buf[pos:pos + SECTOR])

    def commit_id(self, section, j, seq):
        base = 0x1111111111111111 * (seq + 1)
        return base ^ (((section << 32) ^ j) & MASK64)

    def find_seq(self, section, j):
        cid = struct.unpack_from("<Q", self.journal_sector(section, j),
                                 504)[0]
        for k in range(N_COMMIT_IDS):
            if self.commit_id(section, j, k) == cid:
                return k
        return None

    def entry(self, section, n):
        js = self.journal_sector(section, n % JOURNAL_BLOCK_SECTORS)
        off = (n // JOURNAL_BLOCK_SECTORS) * self.entry_size
        return js[off:off + self.entry_size]

    def entry_data(self, section, n, raw_entry):
        """The entry's block with its sectors' last bytes restored."""
        out = bytearray()
        for s in range(self.spb):
            js = self.journal_sector(section, JOURNAL_BLOCK_SECTORS +
                                     (n << self.sb.log2_spb) + s)
            out += js[:504] + raw_entry[8 + 8 * s:16 + 8 * s]
        return bytes(out)

    def replay(self):
        """replay_journal, in memory: fills self.overlay and returns a
        summary dict."""
        sb = self.sb
        info = {"sections": sb.journal_sections, "replayed_sections": 0,
                "entries": [], "state": "empty"}
        self.journal = info
        if sb.flags & FLAG_DIRTY_BITMAP:
            info["state"] = "dirty bitmap (not replayed)"
            return info
        used = [False] * N_COMMIT_IDS
        last_section = [0] * N_COMMIT_IDS
        empty = True
        for i in range(sb.journal_sections):
            for j in range(self.section_sectors):
                k = self.find_seq(i, j)
                if k is None:
                    info["state"] = "bad commit id at %d/%d: cleared" % (i, j)
                    return info
                used[k] = True
                last_section[k] = i
            if empty:
                for n in range(self.section_entries):
                    hi = struct.unpack_from("<I", self.entry(i, n), 4)[0]
                    if hi != UNUSED_HI:
                        empty = False
                        break
        if not used[N_COMMIT_IDS - 1]:
            unused = N_COMMIT_IDS - 1
            while unused and not used[unused - 1]:
                unused -= 1
        else:
            unused = next((k for k in range(N_COMMIT_IDS) if not used[k]),
                          None)
            if unused is None:
                info["state"] = "all commit ids in use: cleared"
                return info
        last_used = (unused - 1) % N_COMMIT_IDS
        want = (last_used - 1) % N_COMMIT_IDS
        if not used[want] and used[(want - 1) % N_COMMIT_IDS]:
            empty = True
        start = last_section[last_used] + 1
        if start >= sb.journal_sections:
            want = (want + 1) % N_COMMIT_IDS
            start -= sb.journal_sections
        i, count = start, 0
        while count < sb.journal_sections:
            if any(self.commit_id(i, j, want) != struct.unpack_from(
                    "<Q", self.journal_sector(i, j), 504)[0]
                   for j in range(self.section_sectors)):
                break
            count += 1
            i += 1
            if i >= sb.journal_sections:
                want = (want + 1) % N_COMMIT_IDS
                i = 0
        info.update(used_seqs=[k for k in range(N_COMMIT_IDS) if used[k]],
                    start=start, replayed_sections=count)
        if empty:
            return info
        info["state"] = "replayed"
        for m in range(count):
            sec_no = (start + m) % sb.journal_sections
            for n in range(self.section_entries):
                e = self.entry(sec_no, n)
                sector, = struct.unpack_from("<Q", e, 0)
                hi = sector >> 32
                if hi == UNUSED_HI or hi == INPROGRESS_HI:
                    continue
                sector &= ~(self.spb - 1)
                if sector >= sb.provided_data_sectors:
                    continue
                tag_at = 8 + 8 * self.spb
                block = sector >> sb.log2_spb
                self.overlay[block] = (self.entry_data(sec_no, n, e),
                                       e[tag_at:tag_at + self.tag_size])
                info["entries"].append((sec_no, n, sector))
        return info


# ----------------------------------------------------- dm-crypt AEAD sectors

HASH_BYTES = {"sha1": 20, "sha256": 32, "sha512": 64}


class AeadSectors:
    """dm-crypt's authenticated sector over dm-integrity blocks, from a
    LUKS2 segment's "encryption" and integrity "type"."""

    def __init__(self, encryption, integrity, key, sector_bytes, tag_size):
        self.sector_bytes, self.tag_size = sector_bytes, tag_size
        self.kind = None
        if integrity.startswith("hmac(") and integrity.endswith(")"):
            h = integrity[5:-1]
            if h not in HASH_BYTES:
                raise IntegrityError("unsupported integrity " + integrity)
            self.kind, self.hash = "authenc", h
            self.auth_bytes = HASH_BYTES[h]
            self.mac_key = key[len(key) - self.auth_bytes:]
            self.cipher = oracle.SectorCipher(
                encryption, key[:len(key) - self.auth_bytes], sector_bytes,
                0, False)
            if self.cipher.ivmode == "essiv":
                # The kernel's ESSIV salt under authenc is the hash of
                # the whole table key, MAC key included (measured on
                # 6.1: cipher key alone gives other IVs).
                essiv_hash = encryption.rsplit(":", 1)[1]
                self.cipher.essiv_key = oracle.essiv_salt(essiv_hash, key)
            self.iv_bytes = 0
        elif encryption == "aes-gcm-random" and integrity == "aead":
            self.kind, self.aead = "aead", AESGCM(key)
            self.auth_bytes, self.iv_bytes = 16, 12
        elif encryption == "chacha20-random" and integrity == "poly1305":
            self.kind, self.aead = "aead", ChaCha20Poly1305(key)
            self.auth_bytes, self.iv_bytes = 16, 12
        else:
            raise IntegrityError("unsupported encryption %s with integrity "
                                 "%s" % (encryption, integrity))
        if self.auth_bytes + self.iv_bytes > tag_size:
            raise IntegrityError("tags of %d bytes hold no %d-byte tag and "
                                 "%d-byte IV" % (tag_size, self.auth_bytes,
                                                 self.iv_bytes))

    def decrypt(self, sector, data, tag):
        """Plaintext of the sector at 512-byte SECTOR, or None when its tag
        does not verify."""
        sector_le = struct.pack("<Q", sector)
        if self.kind == "authenc":
            iv = self.cipher.ivs(sector, 1)[0]
            mac = hmac.new(self.mac_key, sector_le + iv + data,
                           self.hash).digest()[:self.auth_bytes]
            if not hmac.compare_digest(mac, tag[:self.auth_bytes]):
                return None
            return self.cipher.crypt(data, sector, encrypt=False)
        iv = tag[self.auth_bytes:self.auth_bytes + self.iv_bytes]
        try:
            return self.aead.decrypt(iv, data + tag[:self.auth_bytes],
                                     sector_le + iv)
        except Exception:   # cryptography's InvalidTag
            return None


def luks2_segment(buf):
    """The LUKS2 header's one crypt segment, with integrity."""
    if buf[:6] != oracle.LUKS_MAGIC or \
            struct.unpack(">H", bytes(buf[6:8]))[0] != 2:
        return None
    hdr_size = struct.unpack(">Q", bytes(buf[8:16]))[0]
    meta = json.loads(bytes(buf[4096:hdr_size]).rstrip(b"\0"))
    segs = [s for s in meta["segments"].values() if s["type"] == "crypt"]
    if len(segs) != 1:
        raise IntegrityError("need exactly one crypt segment")
    seg = segs[0]
    if not seg.get("integrity"):
        raise IntegrityError("the LUKS2 segment has no integrity")
    if seg["size"] != "dynamic":
        raise IntegrityError("only dynamic segments are modelled")
    return seg


# ----------------------------------------------------------------- reading

class Volume:
    """What a reader of the top mapping sees: dm-integrity alone (with an
    internal hash) or dm-crypt's AEAD over it (a LUKS2 image)."""

    def __init__(self, path, internal_hash=None, hash_key=None,
                 luks_key=None, offset=0, replay=True):
        with open(path, "rb") as f:
            self.buf = f.read()
        seg = luks2_segment(self.buf)
        self.crypt = None
        if seg is not None:
            if luks_key is None:
                raise IntegrityError("a LUKS2 image: give --luks-key")
            offset = int(seg["offset"])
        self.dev = Integrity(self.buf, offset)
        self.hash = None
        if seg is not None:
            self.crypt = AeadSectors(seg["encryption"],
                                     seg["integrity"]["type"], luks_key,
                                     int(seg["sector_size"]),
                                     self.dev.tag_size)
            if self.crypt.sector_bytes != self.dev.block_bytes:
                raise IntegrityError("crypt sectors of %d bytes over blocks "
                                     "of %d" % (self.crypt.sector_bytes,
                                                self.dev.block_bytes))
        elif internal_hash:
            salt = self.dev.sb.salt if self.dev.sb.flags & FLAG_FIXED_HMAC \
                else None
            self.hash = InternalHash(internal_hash, hash_key,
                                     self.dev.tag_size, self.dev.block_bytes,
                                     salt)
        if replay:
            self.dev.replay()

    @property
    def size_bytes(self):
        return self.dev.sb.provided_data_sectors * SECTOR

    def read_block(self, block):
        """The block's bytes, or None when the kernel would fail it."""
        data, tag = self.dev.block(block)
        sector = block << self.dev.sb.log2_spb
        if self.crypt:
            return self.crypt.decrypt(sector, data, tag)
        if self.hash and self.hash.tag(sector, data) != tag:
            return None
        return data

    def read_all(self, out=None):
        """Reads every block; returns (sha256 hex, bad runs in bytes)
        with failed blocks as zeros, as tests/kernel/integrity-guest.sh
        reports the kernel's."""
        h = hashlib.sha256()
        bad, bb = [], self.dev.block_bytes
        zero = bytes(bb)
        for b in range(self.dev.blocks):
            data = self.read_block(b)
            if data is None:
                data = zero
                if bad and bad[-1][0] + bad[-1][1] == b * bb:
                    bad[-1][1] += bb
                else:
                    bad.append([b * bb, bb])
            h.update(data)
            if out:
                out.write(data)
        return h.hexdigest(), bad

    def journal_not_in_data_area(self):
        """Replayed blocks whose data or tag differ from the stored ones:
        what a crash left in the journal alone."""
        return sorted(b for b, v in self.dev.overlay.items()
                      if v != self.dev.stored(b))


def describe(vol):
    d, sb = vol.dev, vol.dev.sb
    lines = [
        "superblock version %d tag_size %d journal_sections %d "
        "provided_data_sectors %d flags %s log2_interleave %d "
        "sectors_per_block %d" % (sb.version, sb.tag_size,
                                  sb.journal_sections,
                                  sb.provided_data_sectors, sb.flag_names(),
                                  sb.log2_interleave, d.spb),
        "geometry start_bytes %d initial_sectors %d metadata_run %d "
        "areas %d journal_entry_bytes %d section_entries %d "
        "section_sectors %d" % (d.start, d.initial_sectors, d.metadata_run,
                                d.areas, d.entry_size, d.section_entries,
                                d.section_sectors)]
    j = d.journal
    if j is not None:
        lines.append("journal %s seqs %s start %s replayed_sections %d "
                     "entries %d not_in_data_area %d"
                     % (j["state"].replace(" ", "_"),
                        ",".join(map(str, j.get("used_seqs", []))) or "-",
                        j.get("start", "-"), j["replayed_sections"],
                        len(j["entries"]),
                        len(vol.journal_not_in_data_area())))
        for sec_no, n, sector in j["entries"]:
            lines.append("entry section %d slot %d sector %d"
                         % (sec_no, n, sector))
    return lines


def add_args(sub):
    for name in ("integrity-read", "integrity-check"):
        p = sub.add_parser(name)
        p.add_argument("image")
        if name == "integrity-read":
            p.add_argument("--out", required=True)
        p.add_argument("--offset", type=oracle.nonneg_int, default=0,
                       help="bytes where dm-integrity starts")
        p.add_argument("--internal-hash", help="crc32c, sha256, "
                       "hmac(sha256) ...")
        g = p.add_mutually_exclusive_group()
        g.add_argument("--key-file", help="the internal hash's key")
        g.add_argument("--key", metavar="HEX")
        p.add_argument("--luks-key", metavar="HEX", help="LUKS2 volume key")
        p.add_argument("--no-replay", action="store_true",
                       help="read the data area as it is")


def run(args):
    key = None
    if args.key_file:
        key = open(args.key_file, "rb").read()
    elif args.key:
        key = bytes.fromhex(args.key)
    luks_key = bytes.fromhex(args.luks_key) if args.luks_key else None
    vol = Volume(args.image, args.internal_hash, key, luks_key,
                 args.offset, not args.no_replay)
    if args.cmd == "integrity-check":
        for line in describe(vol):
            print(line)
    out = None
    if args.cmd == "integrity-read":
        out = open(args.out, "wb")
    sha, bad = vol.read_all(out)
    if out:
        out.close()
    print("size %d" % vol.size_bytes)
    print("sector_size %d" % vol.dev.block_bytes)
    for off, n in bad:
        print("bad %d %d" % (off, n))
    print("sha256 %s" % sha)
    return 1 if bad and args.cmd == "integrity-check" else 0


def selftest():
    assert crc32c_update(0xffffffff, b"123456789") ^ 0xffffffff == \
        0xE3069283, "crc32c check value"
    z = Crc32cZeros(512)
    for reg in (0, 1, 0xffffffff, 0x12345678):
        assert z.apply(reg) == crc32c_update(reg, bytes(512))
    # A tag that is not the MAC fails, as the kernel's -EBADMSG.
    a = AeadSectors("aes-xts-plain64", "hmac(sha256)", os.urandom(96), 512,
                    32)
    assert a.decrypt(8, bytes(512), bytes(32)) is None
