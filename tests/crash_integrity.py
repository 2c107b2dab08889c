# SPDX-License-Identifier: GPL-2.0-or-later
"""The integrity side of tests/crash.py: an image under dm-integrity (a
LUKS2 volume with integrity, or integritysetup's alone), read by the
independent model of tests/oracle_integrity.py.

After a crash every block must hold a content the model allows *with a
valid tag*: the oracle replays the journal as the kernel's
replay_journal does, checks each block's tag (dm-crypt's AEAD or the
internal hash) and must find no bad one; the server must read every
sector without EIO.

dm-integrity's journal keeps acknowledged writes in memory until a
flush, a FUA write or its watermark commits them (the kernel's until
commit_time too), so a process kill may lose an acknowledged write that
no flush covered: only the flushed guarantee holds here.
"""

import errno
import os
import shutil

import nbd

import oracle_integrity


class Mapping:
    """The oracle's reading of IMAGE: with LUKS_KEY (bytes) a LUKS2 image
    with integrity, else dm-integrity alone with INTERNAL_HASH (and
    HASH_KEY for an hmac)."""

    def __init__(self, image, luks_key=None, internal_hash=None,
                 hash_key=None):
        self.image = image
        self.luks_key, self.internal_hash = luks_key, internal_hash
        self.hash_key = hash_key
        self.snapshot_path = image + ".before"

    def volume(self, path=None):
        return oracle_integrity.Volume(path or self.image,
                                       self.internal_hash, self.hash_key,
                                       self.luks_key)

    @staticmethod
    def is_luks2_integrity(image):
        with open(image, "rb") as f:
            head = f.read(1 << 20)
        try:
            return oracle_integrity.luks2_segment(head) is not None
        except oracle_integrity.IntegrityError:
            return False

    def plaintext(self, path=None):
        """(what a reader of the top mapping gets, blocks whose tag does
        not verify), failed blocks read as zeros."""
        vol = self.volume(path)
        out, bad = bytearray(), []
        zero = bytes(vol.dev.block_bytes)
        for b in range(vol.dev.blocks):
            data = vol.read_block(b)
            if data is None:
                bad.append(b)
            out += zero if data is None else data
        return bytes(out), bad

    def journal_only(self):
        """Blocks whose newest content is in the on-disk journal alone
        (committed, not yet written back): what the restart's replay
        must bring back."""
        return len(self.volume().journal_not_in_data_area())

    # -- the self-check's surgery, with the server down ----------------

    def snapshot(self):
        """Keeps the image as it is: the old contents of the self-check."""
        shutil.copyfile(self.image, self.snapshot_path)

    def drop_snapshot(self):
        if os.path.exists(self.snapshot_path):
            os.unlink(self.snapshot_path)

    def in_journal(self):
        """Blocks the on-disk journal holds: a read-write open replays
        them over whatever their area holds."""
        return set(self.volume().dev.overlay)

    @staticmethod
    def _place(vol, block):
        d = vol.dev
        sector = block << d.sb.log2_spb
        return ((d.data_sector(sector) * oracle_integrity.SECTOR,
                 d.block_bytes), (d.tag_offset(sector), d.tag_size))

    def _io(self, places, new=None):
        """The image's bytes at PLACES [(offset, length)]; with NEW (as
        many byte strings), first replaced by them."""
        old = []
        with open(self.image, "r+b") as img:
            for i, (pos, n) in enumerate(places):
                old.append(os.pread(img.fileno(), n, pos))
                if new is not None:
                    os.pwrite(img.fileno(), new[i], pos)
        return old

    def put_old(self, block):
        """Replays the snapshot's block (data and tag, valid as they
        were) into its area: a durable write lost.  Returns what to give
        restore()."""
        before = self.volume(self.snapshot_path)
        data, tag = before.dev.block(block)
        places = self._place(before, block)
        return places, self._io(places, [data, tag])

    def put_garbage(self, block):
        """Random bytes into the block's data: its tag no longer
        verifies."""
        places = self._place(self.volume(), block)[:1]
        return places, self._io(places, [os.urandom(places[0][1])])

    def restore(self, saved):
        places, old = saved
        self._io(places, old)


def read_all(h, size, ss, chunk=1 << 20):
    """The whole export, and the SS-byte sectors whose read failed with
    EIO (read as zeros); any other error raises."""
    data, eio = bytearray(), []
    for off in range(0, size, chunk):
        n = min(chunk, size - off)
        try:
            data += h.pread(n, off)
            continue
        except nbd.Error as e:
            if e.errnum != errno.EIO:
                raise
        for s in range(off, off + n, ss):
            try:
                data += h.pread(ss, s)
            except nbd.Error as e:
                if e.errnum != errno.EIO:
                    raise
                data += bytes(ss)
                eio.append(s // ss)
    return data, eio
