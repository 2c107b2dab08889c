#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Load soak: many connections with many requests in flight, mixed
reads, writes, zeroes, trims and flushes for a bounded time
(tests/test-soak.sh).

  soak.py --image IMG MAPPING --sector-size BYTES --seconds S
          --conns N --depth N --max-inflight-mib M [--seed N]
          -- NBDKIT-ARGS...

The server runs as "nbdkit -f -U SOCKET NBDKIT-ARGS" (blockmodel.Server);
MAPPING is the oracle's --table LINE or --luks-key HEX.  No request may
fail.  Requests are placed so that every read has one right answer: none
overlaps a write, zero or trim in flight on a shared encryption sector.
A trimmed sector's content is undefined until it is written again, so
the model ignores it ("don't care").  Every read is checked when it
completes, the whole export at the end, through the server and through
the oracle's decryption of the image.

The server's resident memory (VmRSS) is sampled every RSS_EVERY_S and
must stay under the cap

    RSS before the load + the engine's cap on ciphertext in flight
    (max-inflight) + nbdkit's request buffers (connections x
    min(depth, 16 threads) x the largest request) + RSS_MARGIN_MIB

(docs/reliability.md).  Exit 0 when all held.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402
from blockmodel import (InFlight, Model, Pool, Server,  # noqa: E402
                        ServerError, connect, errname, masked_equal,
                        read_all)

MAX_REQUEST_BYTES = 64 << 10
NBDKIT_THREADS = 16            # request threads per connection
RSS_EVERY_S = 0.25
RSS_MARGIN_MIB = 48            # threads' stacks, malloc arenas, libraries
MIB = 1 << 20


class Failure(Exception):
    pass


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failure("no VmRSS for pid %d" % pid)


class Soak:
    def __init__(self, args, server):
        self.args = args
        self.server = server
        self.rng = random.Random(args.seed)
        self.handles = [connect(server.uri) for _ in range(args.conns)]
        h = self.handles[0]
        self.size = h.get_size()
        self.ss = args.sector_size
        self.can_trim = h.can_trim()
        if args.conns > 1 and not h.can_multi_conn():
            raise Failure("the server does not offer multi-conn")
        self.model = Model(read_all(h, self.size), self.ss, track=False)
        self.pool = Pool(self.handles)
        self.busy = set()              # sectors of writes/zeroes/trims
        self.reading = InFlight()          # reads in flight, per sector
        self.counts = dict(read=0, write=0, zero=0, trim=0, flush=0, fua=0,
                           bytes_read=0, bytes_written=0, deferred=0)
        self.rss = []                  # (seconds, KiB)

    # -- placing requests ------------------------------------------------

    def pick(self, for_write):
        length = self.rng.choice([self.rng.randint(1, 512),
                                  self.rng.randint(1, MAX_REQUEST_BYTES),
                                  self.ss * self.rng.randint(1, 8)])
        length = min(length, MAX_REQUEST_BYTES)
        start = self.rng.randint(0, self.size - length)
        if self.rng.random() < 0.5:
            start = start // self.ss * self.ss
        secs = self.model.sectors(start, start + length)
        if any(s in self.busy for s in secs) or \
           (for_write and any(s in self.reading for s in secs)):
            self.counts["deferred"] += 1
            return None
        return start, start + length, secs

    def no_error(self, err, what):
        if err:
            raise Failure("%s failed: %s" % (what, errname(err)))

    def changing(self, conn, kind):
        """A write, zero or trim."""
        r = self.pick(True)
        if r is None:
            return False
        start, end, secs = r
        fua = self.rng.random() < 0.05
        self.busy.update(secs)
        what = "%s [%d, %d)" % (kind, start, end)

        def done(err, _):
            self.busy.difference_update(secs)
            self.no_error(err, what)
        if kind == "trim":
            self.model.trim(start, end)
            self.pool.trim(conn, end - start, start, done)
        elif kind == "zero":
            self.model.begin_write(0, start, bytes(end - start))
            self.pool.zero(conn, end - start, start, done, fua=fua)
        else:
            data = self.rng.randbytes(end - start)
            self.model.begin_write(0, start, data)
            self.pool.pwrite(conn, data, start, done, fua=fua)
        self.counts[kind] += 1
        self.counts["fua"] += fua and kind != "trim"
        if kind != "trim":
            self.counts["bytes_written"] += end - start
        return True

    def read(self, conn):
        r = self.pick(False)
        if r is None:
            return False
        start, end, secs = r
        self.reading.add(secs)

        def done(err, data):
            self.reading.remove(secs)
            self.no_error(err, "read [%d, %d)" % (start, end))
            if not self.model.matches(data, start):
                raise Failure("read [%d, %d) returned wrong data"
                              % (start, end))
        self.pool.pread(conn, end - start, start, done)
        self.counts["read"] += 1
        self.counts["bytes_read"] += end - start
        return True

    def issue(self, conn):
        roll = self.rng.random()
        if roll < 0.02:
            self.pool.flush(conn, lambda err, _: self.no_error(err, "flush"))
            self.counts["flush"] += 1
            return True
        if roll < 0.10 and self.can_trim:
            return self.changing(conn, "trim")
        if roll < 0.15:
            return self.changing(conn, "zero")
        if roll < 0.55:
            return self.changing(conn, "write")
        return self.read(conn)

    # -- running -----------------------------------------------------------

    def sample_rss(self, started):
        self.rss.append((time.monotonic() - started,
                         rss_kib(self.server.pid)))

    def run(self):
        started = time.monotonic()
        stop = started + self.args.seconds
        next_sample = started
        while time.monotonic() < stop:
            for conn in range(len(self.handles)):
                # A busy region defers a request; the next pass retries.
                for _ in range(self.args.depth - self.pool.inflight[conn]):
                    if not self.issue(conn):
                        break
            self.pool.poll(1)
            if time.monotonic() >= next_sample:
                self.sample_rss(started)
                next_sample += RSS_EVERY_S
        self.pool.drain(60)
        self.sample_rss(started)
        for h in self.handles:
            h.flush()
        return time.monotonic() - started

    def verify(self, plaintext, what):
        if not masked_equal(bytes(plaintext), bytes(self.model.data),
                            self.model.care):
            raise Failure("%s differs from the model" % what)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--image", required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--table")
    g.add_argument("--luks-key")
    p.add_argument("--sector-size", type=int, required=True)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--conns", type=int, default=32)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--max-inflight-mib", type=int, required=True)
    p.add_argument("--no-rss-cap", action="store_true",
                   help="report RSS only (a sanitizer's runtime is big)")
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    argv = sys.argv[1:]
    if "--" not in argv:
        p.error("no -- before the nbdkit arguments")
    args = p.parse_args(argv[:argv.index("--")])
    nbdkit_args = argv[argv.index("--") + 1:]

    sock = os.path.join(os.path.dirname(os.path.abspath(args.image)),
                        "soak-%d.sock" % os.getpid())
    log = open(args.image + ".soak.log", "ab")
    server = Server(sock, nbdkit_args, log)
    try:
        server.start()
        soak = Soak(args, server)
        base_kib = rss_kib(server.pid)
        cap_kib = base_kib + 1024 * (
            args.max_inflight_mib + RSS_MARGIN_MIB
            + args.conns * min(args.depth, NBDKIT_THREADS)
            * MAX_REQUEST_BYTES // MIB)
        secs = soak.run()
        soak.verify(read_all(soak.handles[0], soak.size), "the export")
        for h in soak.handles:
            h.shutdown()
        server.stop()
        mapping = (oracle.parse_table(args.table) if args.table else
                   oracle.mapping_from_luks(args.image,
                                            bytes.fromhex(args.luks_key)))
        with open(args.image, "rb") as img:
            soak.verify(oracle.decrypt_range(mapping, img, 0, soak.size),
                        "the image decrypted by the oracle")
    except (Failure, ServerError) as e:
        print("FAIL (seed %d): %s" % (args.seed, e), file=sys.stderr)
        return 1
    finally:
        server.stop()
    c = soak.counts
    ops = c["read"] + c["write"] + c["zero"] + c["trim"] + c["flush"]
    peak = max(k for _, k in soak.rss)
    half = [k for t, k in soak.rss if t < secs / 2]
    print("seed %d: %d requests in %.1f s (%.0f/s) on %d connections, "
          "depth %d: %s" % (args.seed, ops, secs, ops / secs, args.conns,
                            args.depth,
                            " ".join("%s=%d" % kv for kv in c.items())))
    print("RSS KiB: before %d, peak %d (first half %d), end %d, cap %d "
          "(%d samples)" % (base_kib, peak, max(half or [0]),
                            soak.rss[-1][1], cap_kib, len(soak.rss)))
    step = max(1, len(soak.rss) // 10)
    print("RSS MiB over time: " + " ".join(
        "%.0fs:%.1f" % (t, k / 1024) for t, k in soak.rss[::step]))
    if peak > cap_kib and not args.no_rss_cap:
        print("FAIL: RSS peak %d KiB over the cap %d KiB"
              % (peak, cap_kib), file=sys.stderr)
        return 1
    print("the export and the oracle's plaintext equal the model "
          "(trimmed sectors excepted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
