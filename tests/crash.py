#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Crash consistency: SIGKILL the server at random moments of a random
write + flush workload, restart it, check what the image holds
(tests/test-crash-consistency.sh).

  crash.py rw --rounds N --sector-size BYTES --image IMG MAPPING
              [--seed N] -- NBDKIT-ARGS...
  crash.py ro --rounds N --sector-size BYTES --image IMG MAPPING
              [--seed N] -- NBDKIT-ARGS...

NBDKIT-ARGS is the plugin and its parameters: the server runs as
"nbdkit -f -U SOCKET NBDKIT-ARGS" (with -r for "ro").  MAPPING is the
oracle's --table LINE or --luks-key HEX (tests/oracle.py), or, for an
image under dm-integrity (tests/crash_integrity.py), --luks-key HEX of a
LUKS2 image with integrity (found in its header) or --internal-hash NAME
[--hash-key-file FILE] of integritysetup's image.

rw: each round runs writes (random offsets and lengths, many unaligned,
a few with FUA), reads and flushes on two connections with up to DEPTH
requests in flight on each, no two writes in flight sharing an
encryption sector, and SIGKILLs the server after a random delay.  The
server is restarted and the whole export read through it; then every
encryption sector must hold a content it may hold (blockmodel.Model):
the content made durable by the last write acknowledged before a
completed flush (or acknowledged with FUA), or the content of a write
issued after that one -- never older, never anything else.  The
independent oracle's decryption of the image must equal what the
restarted server returns.  Under dm-integrity, every block must also
carry a valid tag: the oracle (which replays the journal) finds no bad
one and the server reads every sector without EIO; an acknowledged
write that no flush covered may be lost (the journal holds it in memory
until a commit), so only the flushed guarantee is checked.

ro: each round runs reads, writes that must be refused (EPERM/EROFS),
and flushes against "nbdkit -r", SIGKILLs it, and the image's SHA-256
must not have changed.
"""

import argparse
import errno
import hashlib
import os
import random
import sys
import threading
import time

import nbd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402
import crash_integrity  # noqa: E402
from blockmodel import (InFlight, Model, Pool, Server,  # noqa: E402
                        ServerError, connect, errname, read_all)

DEPTH = 16                     # requests in flight per connection
CONNS = 2
KILL_AFTER_S = (0.0, 0.5)      # the kill comes uniformly in this span
DRAIN_AFTER_KILL_S = 5         # for libnbd to notice the dead server
HOT_ZONE_BYTES = 2 << 20       # half the writes land here: rewrites
MAX_REQUEST_BYTES = 256 << 10


class Failure(Exception):
    pass


class Round:
    """One workload until the server is killed."""

    def __init__(self, run, handles):
        self.run = run
        self.model = run.model         # durable once flushed
        self.acked_model = run.acked_model   # durable once acknowledged
        self.rng = run.rng
        self.ss = run.ss
        self.size = run.size
        self.pool = Pool(handles)
        self.killed = threading.Event()
        self.busy = set()              # sectors of writes in flight
        self.reading = InFlight()          # reads in flight, per sector
        self.acked = set()             # acknowledged, not yet durable
        self.dead = False

    # -- requests --------------------------------------------------------

    def free_range(self, for_write):
        for _ in range(20):
            length = self.rng.choice(
                [self.rng.randint(1, 64), self.rng.randint(1, 3 * self.ss),
                 self.ss * self.rng.randint(1, 16),
                 self.rng.randint(1, MAX_REQUEST_BYTES)])
            length = min(length, self.size)    # small images
            zone = HOT_ZONE_BYTES if self.rng.random() < 0.5 else self.size
            start = self.rng.randint(0, max(0, min(zone, self.size) - length))
            if self.rng.random() < 0.4:
                start = start // self.ss * self.ss
            secs = self.model.sectors(start, start + length)
            if any(s in self.busy for s in secs):
                continue
            if for_write and any(s in self.reading for s in secs):
                continue
            return start, start + length
        return None

    def must_succeed(self, err, what):
        """Errors are expected only once the server is being killed."""
        if err and not self.killed.is_set():
            raise Failure("%s failed before the kill: %s"
                          % (what, errname(err)))
        return err == 0

    def write(self, conn):
        r = self.free_range(True)
        if r is None:
            return False
        start, end = r
        data = self.rng.randbytes(end - start)
        fua = self.rng.random() < 0.05
        self.run.wid += 1
        wid = self.run.wid
        secs = self.model.sectors(start, end)
        self.busy.update(secs)
        self.model.begin_write(wid, start, data)
        self.acked_model.begin_write(wid, start, data)
        self.run.stats["writes"] += 1

        def done(err, _):
            self.busy.difference_update(secs)
            if not self.must_succeed(err, "write [%d, %d)" % (start, end)):
                return
            self.model.end_write(wid, True)
            self.acked_model.end_write(wid, True)
            self.acked_model.commit([wid])
            self.run.stats["acked"] += 1
            if fua:
                self.model.commit([wid])
            else:
                self.acked.add(wid)
        self.pool.pwrite(conn, data, start, done, fua=fua)
        return True

    def read(self, conn):
        r = self.free_range(False)
        if r is None:
            return False
        start, end = r
        secs = self.model.sectors(start, end)
        self.reading.add(secs)

        def done(err, data):
            self.reading.remove(secs)
            if self.must_succeed(err, "read [%d, %d)" % (start, end)) \
               and not self.model.matches(data, start):
                raise Failure("read [%d, %d) returned wrong data"
                              % (start, end))
        self.pool.pread(conn, end - start, start, done)
        return True

    def flush(self, conn):
        covered = set(self.acked)

        def done(err, _):
            if self.must_succeed(err, "flush"):
                self.model.commit(covered)
                self.acked -= covered
                self.run.stats["flushes"] += 1
        self.pool.flush(conn, done)
        return True

    def issue(self, conn):
        roll = self.rng.random()
        if roll < 0.08:
            return self.flush(conn)
        if roll < 0.25:
            return self.read(conn)
        return self.write(conn)

    # -- the round ---------------------------------------------------------

    def go(self, server, min_delay=0.0):
        delay = self.rng.uniform(max(min_delay, KILL_AFTER_S[0]),
                                 KILL_AFTER_S[1])

        def kill():
            self.killed.set()
            server.kill()
            self.run.stats["inflight_at_kill"] += self.pool.total()
        timer = threading.Timer(delay, kill)
        timer.start()
        try:
            self.loop()
        finally:
            timer.cancel()
        if not self.killed.is_set():
            raise Failure("the workload ended before the kill")

    def loop(self):
        stop_by = None
        while True:
            if self.killed.is_set() and stop_by is None:
                stop_by = time.monotonic() + DRAIN_AFTER_KILL_S
            if not self.killed.is_set():
                for conn in range(CONNS):
                    try:
                        while self.pool.inflight[conn] < DEPTH:
                            if not self.issue(conn):
                                break
                    except nbd.Error:
                        if not self.killed.is_set():
                            raise
            if stop_by and (not self.pool.total()
                            or time.monotonic() > stop_by):
                return
            try:
                self.pool.poll(0.05)
            except nbd.Error:
                if not self.killed.is_set():
                    raise
                return


class Run:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.ss = args.sector_size
        self.wid = 0
        self.stats = dict(rounds=0, writes=0, acked=0, flushes=0,
                          inflight_at_kill=0, sectors_newest=0,
                          sectors_older=0)
        logpath = args.image + ".crash.log"
        self.log = open(logpath, "ab")
        self.integ = None
        if args.internal_hash or (
                args.luks_key and
                crash_integrity.Mapping.is_luks2_integrity(args.image)):
            key = (open(args.hash_key_file, "rb").read()
                   if args.hash_key_file else None)
            self.integ = crash_integrity.Mapping(
                args.image, args.luks_key and bytes.fromhex(args.luks_key),
                args.internal_hash, key)
            return
        self.mapping = (oracle.parse_table(args.table) if args.table else
                        oracle.mapping_from_luks(
                            args.image, bytes.fromhex(args.luks_key)))

    def sock(self):
        return os.path.join(os.path.dirname(self.args.image),
                            "crash-%d.sock" % os.getpid())

    def oracle_plaintext(self):
        if self.integ:
            data, bad = self.integ.plaintext()
            if bad:
                raise Failure("the oracle finds %d blocks whose tag does "
                              "not verify: %s" % (len(bad), bad[:10]))
            return data
        with open(self.args.image, "rb") as img:
            return oracle.decrypt_range(self.mapping, img, 0,
                                        self.mapping.size_bytes)

    def count_outcomes(self, actual):
        """How many written sectors came back at their newest content,
        or older (a write in flight that did not land)."""
        for s in self.model.hist:
            newest = self.model.hist[s][-1][1]
            key = ("sectors_newest" if self.model.sector(s, actual) in newest
                   else "sectors_older")
            self.stats[key] += 1

    def read_export(self, server):
        """The whole export through SERVER, and the sectors that fail
        with EIO (under dm-integrity; elsewhere any error raises)."""
        h = connect(server.uri)
        if self.integ:
            actual, eio = crash_integrity.read_all(h, self.size, self.ss)
        else:
            actual, eio = read_all(h, self.size), []
        h.shutdown()
        return actual, eio

    def verify(self, server, what):
        actual, eio = self.read_export(server)
        if eio:
            raise Failure("%s: %d sectors fail with EIO: %s"
                          % (what, len(eio), eio[:10]))
        # The guarantee (as dm-crypt's: what a flush made durable), then
        # what a process kill keeps on top of it (every acknowledged
        # write is in the backing file already) -- not under
        # dm-integrity's journal.
        models = [(self.model, "flushed")]
        if not self.integ:
            models.append((self.acked_model, "acknowledged"))
        for model, why in models:
            bad = model.check(actual)
            for s in bad[:5]:
                print("  " + model.describe(actual, s), file=sys.stderr)
            if bad:
                raise Failure("%s: %d sectors hold none of the contents "
                              "allowed by what was %s"
                              % (what, len(bad), why))
        if self.oracle_plaintext() != actual:
            raise Failure("%s: the oracle decrypts the image to something "
                          "else than the server returns" % what)
        self.count_outcomes(actual)
        self.model.settle(actual)
        self.acked_model.settle(actual)

    def sector_io(self, s, plain=None):
        """The ciphertext of encryption sector S; with PLAIN, first
        replaces it by PLAIN encrypted (through the oracle)."""
        pos = self.mapping.offset * 512 + s * self.ss
        with open(self.args.image, "r+b") as img:
            old = os.pread(img.fileno(), self.ss, pos)
            if plain is not None:
                os.pwrite(img.fileno(), self.mapping.cipher.crypt(
                    plain, s * self.ss // 512, encrypt=True), pos)
        return old

    def self_check(self, server, before):
        """The check must catch a lost durable write and garbage: with
        the server down, put back a sector's content from before the
        round although a flushed write replaced it, then random bytes
        into another, and expect exactly those sectors flagged.  False
        when the round made too few sectors durable to try."""
        lost = [s for s, h in self.model.hist.items() if h[0][0] is not None
                and self.model.sector(s, before) not in self.model.allowed(s)]
        if len(lost) < 2:
            return False               # too few flushes: next round
        if self.integ:
            return self.self_check_integrity(server, lost)
        a, b = self.rng.sample(lost, 2)
        saved = {a: self.sector_io(a, self.model.sector(a, before)),
                 b: self.sector_io(b)}
        with open(self.args.image, "r+b") as img:
            os.pwrite(img.fileno(), os.urandom(self.ss),
                      self.mapping.offset * 512 + b * self.ss)
        server.start()
        h = connect(server.uri)
        actual = read_all(h, self.size)
        h.shutdown()
        bad = self.model.check(actual)
        if bad != sorted([a, b]):
            raise Failure("self-check: flagged %s, expected %s"
                          % (bad[:10], sorted([a, b])))
        self.stats["self_check_flagged"] = len(bad)
        server.stop()
        for s, ciphertext in saved.items():
            with open(self.args.image, "r+b") as img:
                os.pwrite(img.fileno(), ciphertext,
                          self.mapping.offset * 512 + s * self.ss)
        return True

    def self_check_integrity(self, server, lost):
        """self_check under dm-integrity: the snapshot's block, data and
        valid tag, put back in place of a flushed write (a replay), and
        random bytes into another block's data; the journal's blocks are
        left alone (a read-write open replays them over their areas).
        Expects the first flagged as lost and the second failing with
        EIO, through the server and in the oracle."""
        journal = self.integ.in_journal()
        lost = [s for s in lost if s not in journal]
        if len(lost) < 2:
            return False
        a, b = self.rng.sample(lost, 2)
        saved = [self.integ.put_old(a), self.integ.put_garbage(b)]
        server.start()
        actual, eio = self.read_export(server)
        server.stop()
        bad = [s for s in self.model.check(actual) if s not in eio]
        if eio != [b] or bad != [a]:
            raise Failure("self-check: EIO at %s and lost %s, expected EIO "
                          "at [%d] and lost [%d]" % (eio[:10], bad[:10],
                                                      b, a))
        data, oracle_bad = self.integ.plaintext()
        if oracle_bad != [b] or self.model.sector(a, data) \
                != self.model.sector(a, actual):
            raise Failure("self-check: the oracle finds bad blocks %s "
                          "(expected [%d]) or another block %d"
                          % (oracle_bad[:10], b, a))
        self.stats["self_check_flagged"] = 2
        for s in reversed(saved):
            self.integ.restore(s)
        self.integ.drop_snapshot()
        return True

    def rw(self):
        server = Server(self.sock(), self.args.nbdkit, self.log)
        server.start()
        h = connect(server.uri)
        self.size = h.get_size()
        if self.integ:
            self.stats["journal_replays"] = 0
        self.model = Model(read_all(h, self.size), self.ss)
        self.acked_model = Model(self.model.data, self.ss)
        h.shutdown()
        checked = False
        try:
            for n in range(self.args.rounds):
                before = None if checked else bytes(self.model.data)
                if self.integ and not checked:
                    self.integ.snapshot()
                handles = [connect(server.uri) for _ in range(CONNS)]
                # The self-check wants flushed writes: a longer round.
                Round(self, handles).go(server, 0 if checked else 0.25)
                server.reap()
                del handles            # libnbd closes on release
                if self.integ:
                    # Rounds killed between a journal commit and its
                    # write-back: the replay is exercised.
                    self.stats["journal_replays"] += \
                        self.integ.journal_only() > 0
                if not checked:
                    checked = self.self_check(server, before)
                server.start()
                self.verify(server, "round %d" % (n + 1))
                self.stats["rounds"] += 1
        finally:
            server.stop()
        if not checked:
            raise Failure("self-check: no round had two flushed sectors")
        return self.stats

    def ro(self):
        server = Server(self.sock(), ["-r"] + self.args.nbdkit, self.log)
        digest = sha256(self.args.image)
        refused = 0
        server.start()
        try:
            for n in range(self.args.rounds):
                h = connect(server.uri)
                h.set_strict_mode(0)   # let the server refuse writes
                refused += ro_round(self, h, server)
                server.reap()
                del h
                if sha256(self.args.image) != digest:
                    raise Failure("round %d: the image changed under -r"
                                  % (n + 1))
                self.stats["rounds"] += 1
                server.start()
        finally:
            server.stop()
        return dict(rounds=self.stats["rounds"], refused_writes=refused)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def ro_round(run, h, server):
    """Reads, refused writes and flushes until the kill; returns the
    number of writes refused."""
    rng = run.rng
    size = h.get_size()
    refused = 0
    deadline = time.monotonic() + rng.uniform(*KILL_AFTER_S)
    killed = False
    while not killed:
        if time.monotonic() >= deadline:
            server.kill()
            killed = True
        start = rng.randrange(size - 1)
        length = rng.randint(1, min(size - start, MAX_REQUEST_BYTES))
        try:
            roll = rng.random()
            if roll < 0.4:
                h.pwrite(rng.randbytes(length), start)
                raise Failure("a write succeeded under -r")
            if roll < 0.5:
                h.zero(length, start)
                raise Failure("a zero succeeded under -r")
            if roll < 0.6:
                h.flush()
            else:
                h.pread(length, start)
        except nbd.Error as e:
            if killed:
                break
            if e.errnum not in (errno.EPERM, errno.EROFS) or roll >= 0.5:
                raise Failure("-r: %s" % e.string)
            refused += 1
    return refused


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["rw", "ro"])
    p.add_argument("--rounds", type=int, default=50)
    p.add_argument("--sector-size", type=int, required=True)
    p.add_argument("--image", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--table")
    g.add_argument("--luks-key")
    g.add_argument("--internal-hash")
    p.add_argument("--hash-key-file")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    argv = sys.argv[1:]
    if "--" not in argv:
        p.error("no -- before the nbdkit arguments")
    cut = argv.index("--")
    args = p.parse_args(argv[:cut])
    args.nbdkit = argv[cut + 1:]
    run = Run(args)
    t = time.monotonic()
    try:
        stats = run.rw() if args.mode == "rw" else run.ro()
    except (Failure, ServerError) as e:
        print("FAIL (seed %d): %s" % (args.seed, e), file=sys.stderr)
        return 1
    print("%s seed %d, %.1f s: %s" % (
        args.mode, args.seed, time.monotonic() - t,
        " ".join("%s=%d" % kv for kv in stats.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
