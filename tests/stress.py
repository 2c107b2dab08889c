#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Random unaligned IO with many requests in flight, against a shadow.

  stress.py run URI SHADOW [--conns N] [--depth N] [--ops N]
                           [--seconds S] [--seed N] [--sector-size BYTES]

(--sector-size is the encryption sector size: requests crowd around its
boundaries.)
  stress.py verify URI SHADOW

"run" opens N connections to the export (multi-conn), reads it all into
an in-memory shadow, then keeps up to DEPTH requests in flight on each
connection: reads, writes (some with FUA), zeroes and flushes at random
offsets and lengths, none of them aligned on purpose.  The outcome is
kept deterministic: a request never overlaps, byte for byte, a write or
zero still in flight, so every read has one right answer.  Requests
that share an encryption sector without sharing a byte are sought out
(half the writes are placed right against a write in flight, usually on
another connection): both must survive, which is what the server's
read-modify-write serialisation is for.  At the end the whole export is
compared with the shadow, and the shadow is saved to SHADOW.

"verify" reads the whole export (e.g. after a server restart) and
compares it with SHADOW.  Exit 0 on success, 1 on any mismatch or error.
"""

import argparse
import os
import random
import select
import sys
import time

import nbd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blockmodel import connect, read_all  # noqa: E402

HOT_ZONE_BYTES = 256 << 10     # where a third of the requests crowd
MAX_REQUEST_BYTES = 256 << 10  # longest random request


def compare(actual, expected, what):
    if actual == expected:
        return True
    first = next(i for i in range(min(len(actual), len(expected)))
                 if actual[i] != expected[i]) \
        if len(actual) == len(expected) else min(len(actual), len(expected))
    print("FAIL: %s differs from the shadow, first at byte %d "
          "(lengths %d, %d)" % (what, first, len(actual), len(expected)),
          file=sys.stderr)
    return False


class Request:
    """One request in flight: where it is, what it expects."""

    def __init__(self, kind, conn, start, end, expect=None, buf=None):
        self.kind = kind          # "read", "write", "zero", "flush"
        self.conn = conn          # index of the connection
        self.start = start        # byte offset
        self.end = end            # byte offset past the last byte
        self.expect = expect      # bytes a read must return
        self.buf = buf            # nbd.Buffer kept alive until completion


class Stress:
    def __init__(self, args, handles, size):
        self.args = args
        self.handles = handles
        self.size = size
        self.ss = args.sector_size
        self.rng = random.Random(args.seed)
        self.shadow = bytearray()
        self.inflight = [dict() for _ in handles]   # cookie -> Request
        self.issued = 0
        self.can_fua = handles[0].can_fua()
        self.counts = dict(read=0, write=0, zero=0, flush=0, fua=0,
                           shared_sector=0, other_conn=0,
                           max_in_flight=0)

    # -- choosing ranges ---------------------------------------------------

    def all_inflight(self):
        for per_conn in self.inflight:
            yield from per_conn.values()

    def conflicts(self, start, end, is_write):
        """True if [start, end) overlaps, byte-wise, a request in flight
        whose outcome it would change or depend on."""
        for r in self.all_inflight():
            if r.kind == "flush":
                continue
            if not is_write and r.kind == "read":
                continue
            if start < r.end and r.start < end:
                return True
        return False

    def random_length(self):
        roll = self.rng.random()
        if roll < 0.45:
            return self.rng.randint(1, 64)
        if roll < 0.8:
            return self.rng.randint(1, 3 * self.ss)
        return self.rng.randint(1, MAX_REQUEST_BYTES)

    def random_start(self, length):
        roll = self.rng.random()
        limit = self.size - length
        if roll < 0.33:
            return self.rng.randint(0, min(limit, HOT_ZONE_BYTES))
        if roll < 0.66:
            # Just around a sector boundary.
            sector = self.rng.randrange(self.size // self.ss + 1)
            start = sector * self.ss + self.rng.randint(-3, 3)
            return max(0, min(limit, start))
        if roll < 0.7:
            return limit            # up to the very last byte
        return self.rng.randint(0, limit)

    def beside_a_write(self, conn, length):
        """A range touching a write in flight without overlapping it,
        preferably one on another connection."""
        writes = [r for r in self.all_inflight()
                  if r.kind in ("write", "zero")]
        if not writes:
            return None
        others = [r for r in writes if r.conn != conn]
        w = self.rng.choice(others or writes)
        if self.rng.random() < 0.5:
            start = w.end
        else:
            start = w.start - length
        if start < 0 or start + length > self.size:
            return None
        return start

    def pick_range(self, conn, is_write):
        for _ in range(20):
            length = min(self.random_length(), self.size)
            start = None
            if is_write and self.rng.random() < 0.5:
                start = self.beside_a_write(conn, length)
            if start is None:
                start = self.random_start(length)
            if not self.conflicts(start, start + length, is_write):
                return start, start + length
        return None

    def shares_sector(self, conn, start, end):
        """Counts writes that share an encryption sector (not a byte)
        with a write in flight: the read-modify-write races we want."""
        first, last = start // self.ss, (end - 1) // self.ss
        for r in self.all_inflight():
            if r.kind not in ("write", "zero"):
                continue
            if r.start // self.ss <= last and first <= (r.end - 1) // self.ss:
                self.counts["shared_sector"] += 1
                if r.conn != conn:
                    self.counts["other_conn"] += 1
                return

    # -- issuing and retiring ----------------------------------------------

    def issue(self, conn):
        h = self.handles[conn]
        roll = self.rng.random()
        if roll < 0.01:
            cookie = h.aio_flush()
            self.inflight[conn][cookie] = Request("flush", conn, 0, 0)
            self.counts["flush"] += 1
            return True
        kind = "read" if roll < 0.45 else "zero" if roll < 0.5 else "write"
        picked = self.pick_range(conn, kind != "read")
        if picked is None:
            return False
        start, end = picked
        if kind == "read":
            buf = nbd.Buffer(end - start)
            cookie = h.aio_pread(buf, start)
            req = Request(kind, conn, start, end,
                          expect=bytes(self.shadow[start:end]), buf=buf)
        else:
            self.shares_sector(conn, start, end)
            flags = 0
            if self.can_fua and self.rng.random() < 0.1:
                flags = nbd.CMD_FLAG_FUA
                self.counts["fua"] += 1
            if kind == "zero":
                cookie = h.aio_zero(end - start, start, flags=flags)
                self.shadow[start:end] = bytes(end - start)
                buf = None
            else:
                data = self.rng.randbytes(end - start)
                buf = nbd.Buffer.from_bytearray(data)
                cookie = h.aio_pwrite(buf, start, flags=flags)
                self.shadow[start:end] = data
            req = Request(kind, conn, start, end, buf=buf)
        self.inflight[conn][cookie] = req
        self.counts[kind] += 1
        depth = sum(len(d) for d in self.inflight)
        self.counts["max_in_flight"] = max(self.counts["max_in_flight"],
                                           depth)
        return True

    def retire(self, conn):
        h = self.handles[conn]
        while self.inflight[conn]:
            cookie = h.aio_peek_command_completed()
            if cookie <= 0:
                return
            req = self.inflight[conn].pop(cookie)
            try:
                h.aio_command_completed(cookie)
            except nbd.Error as e:
                raise SystemExit("FAIL: %s of [%d, %d) on connection %d: %s"
                                 % (req.kind, req.start, req.end, conn, e))
            if req.kind == "read":
                got = bytes(req.buf.to_buffer())
                if got != req.expect:
                    compare(got, req.expect, "read of [%d, %d)"
                            % (req.start, req.end))
                    raise SystemExit(1)

    def wait_for_io(self):
        readers, writers = [], []
        fds = {}
        for conn, h in enumerate(self.handles):
            fd = h.aio_get_fd()
            fds[fd] = conn
            direction = h.aio_get_direction()
            if direction & nbd.AIO_DIRECTION_READ:
                readers.append(fd)
            if direction & nbd.AIO_DIRECTION_WRITE:
                writers.append(fd)
        r, w, _ = select.select(readers, writers, [], 10)
        if not r and not w:
            raise SystemExit("FAIL: no reply from the server for 10 s")
        for fd in w:
            self.handles[fds[fd]].aio_notify_write()
        for fd in r:
            self.handles[fds[fd]].aio_notify_read()

    def run(self):
        deadline = time.monotonic() + self.args.seconds
        while True:
            more = (self.issued < self.args.ops
                    and time.monotonic() < deadline)
            for conn in range(len(self.handles)):
                # Bounded: a connection stops trying when a range is
                # hard to place, and waits for completions instead.
                while more and len(self.inflight[conn]) < self.args.depth:
                    if not self.issue(conn):
                        break
                    self.issued += 1
                    more = self.issued < self.args.ops
            if not any(self.inflight):
                if not more:
                    return
                continue
            self.wait_for_io()
            for conn in range(len(self.handles)):
                self.retire(conn)


def cmd_run(args):
    handles = [connect(args.uri) for _ in range(args.conns)]
    h0 = handles[0]
    size = h0.get_size()
    if args.conns > 1 and not h0.can_multi_conn():
        print("FAIL: server does not offer multi-conn", file=sys.stderr)
        return 1

    s = Stress(args, handles, size)
    s.shadow = read_all(h0, size)
    started = time.monotonic()
    s.run()
    secs = time.monotonic() - started
    for h in handles:
        h.flush()
    print("%d requests in %.1f s on %d connections: %s"
          % (s.issued, secs, args.conns,
             " ".join("%s=%d" % kv for kv in sorted(s.counts.items()))))
    if s.issued < min(args.ops, 1000) or s.counts["other_conn"] < 50:
        print("FAIL: too few requests, or too few sector-sharing writes "
              "across connections, to mean anything", file=sys.stderr)
        return 1

    # Every connection must see the same, complete content.
    ok = all(compare(read_all(h, size), s.shadow,
                     "export read on connection %d" % i)
             for i, h in enumerate(handles))
    for h in handles:
        h.shutdown()
    with open(args.shadow, "wb") as f:
        f.write(s.shadow)
    return 0 if ok else 1


def cmd_verify(args):
    h = connect(args.uri)
    with open(args.shadow, "rb") as f:
        expected = f.read()
    if h.get_size() != len(expected):
        print("FAIL: export size %d, shadow %d"
              % (h.get_size(), len(expected)), file=sys.stderr)
        return 1
    ok = compare(read_all(h, len(expected)), expected, "export")
    h.shutdown()
    if ok:
        print("export equals the shadow (%d bytes)" % len(expected))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["run", "verify"])
    p.add_argument("uri")
    p.add_argument("shadow")
    p.add_argument("--conns", type=int, default=4)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--ops", type=int, default=20000)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--sector-size", type=int, default=512)
    args = p.parse_args()
    return cmd_run(args) if args.mode == "run" else cmd_verify(args)


if __name__ == "__main__":
    sys.exit(main())
