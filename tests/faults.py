#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Backend faults as an NBD client sees them (tests/test-faults.sh).

The server runs with fault-rules=RULES (backend/fault.h); this script
rewrites RULES and waits until the new rules are in force: every rules
file it writes ends with a probe rule that fails writes to the export's
last encryption sector, before any byte lands, with an error that
alternates between ENOSPC and ENOMEM, so a probe write (of the sector's
own content) tells which file the server has read.  The scenarios keep
their rules off that sector.

  faults.py data URI RULES --data-offset BYTES --sector-size BYTES
                           [--save FILE] [--seed N]
      every data scenario below, against a model of the export; the
      final content goes to FILE (for the oracle)
  faults.py rules URI RULES --data-offset BYTES --sector-size BYTES
                            [RULE...]
      puts RULE lines (none: no fault) in force and returns
  faults.py request URI KIND OFFSET LENGTH [--fua]
      one request (write, read, flush); prints "ok", the errno name or
      "disconnected", then the seconds it took

RULE offsets are bytes on the backing file; in "data" the scenarios add
the data offset themselves.  Exit 0 when every expectation held.
"""

import argparse
import errno
import os
import random
import sys
import time

import nbd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blockmodel import (InFlight, Model, Pool, connect,  # noqa: E402
                        errname, read_all)

PROBE_ERRORS = ("ENOSPC", "ENOMEM")
PROBE_MARK = "# probe"
RULES_WAIT_S = 10              # for the server to read a new rules file
REQUEST_WAIT_S = 60            # for any batch of requests to finish
STALL_HOLD_S = 0.5             # how long a stalled request is watched
READ_BESIDE_S = 5              # reads beside a stalled write finish in


class Failure(Exception):
    pass


def expect(cond, fmt, *args):
    if not cond:
        raise Failure(fmt % args)


class Rules:
    """The rules file of a server whose export PROBE_H reads."""

    def __init__(self, path, probe_h, data_offset, size, ss):
        self.path = path
        self.h = probe_h
        self.base = data_offset
        self.probe_offset = size - ss
        self.ss = ss
        # Should a probe ever land, it changes nothing.
        self.probe_data = probe_h.pread(ss, self.probe_offset)

    def _current_probe(self):
        try:
            with open(self.path) as f:
                for line in f:
                    if line.rstrip().endswith(PROBE_MARK):
                        return line.split("error=")[1].split()[0]
        except FileNotFoundError:
            pass
        return None

    def set(self, *lines):
        """Puts LINES in force (replacing the file as a whole, as a
        test must) and waits until the server has read them."""
        err = PROBE_ERRORS[self._current_probe() == PROBE_ERRORS[0]]
        probe = ("write start=%d length=%d error=%s %s"
                 % (self.base + self.probe_offset, self.ss, err, PROBE_MARK))
        tmp = self.path + ".new"
        with open(tmp, "w") as f:
            f.write("".join(line + "\n" for line in lines) + probe + "\n")
        os.rename(tmp, self.path)
        want = getattr(errno, err)
        deadline = time.monotonic() + RULES_WAIT_S
        while True:
            try:
                self.h.pwrite(self.probe_data, self.probe_offset)
                got = 0
            except nbd.Error as e:
                got = e.errnum
            if got == want:
                return
            expect(time.monotonic() < deadline,
                   "rules not in force after %d s (probe: %s)",
                   RULES_WAIT_S, errname(got))
            time.sleep(0.002)

    def clear(self):
        self.set()


class Tester:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.handles = [connect(args.uri) for _ in range(3)]
        h = self.handles[0]
        self.size = h.get_size()
        self.ss = args.sector_size
        self.D = args.data_offset
        self.rules = Rules(args.rules, self.handles[2], self.D, self.size,
                           self.ss)
        self.pool = Pool(self.handles[:2])
        self.rules.clear()
        self.model = Model(read_all(h, self.size), self.ss)
        self.wid = 0
        self.busy = set()          # sectors of writes in flight
        self.reading = InFlight()          # reads in flight, per sector
        self.figures = []

    # -- helpers -------------------------------------------------------

    def aligned(self, start, end):
        ss = self.ss
        return start // ss * ss, (end + ss - 1) // ss * ss

    def hits(self, start, end, lo, hi):
        """Does a request on [START, END) reach backend bytes [LO, HI)
        (plaintext offsets)?  The backend sees whole sectors."""
        a, b = self.aligned(start, end)
        return a < hi and lo < b

    def random_range(self, lo, hi, max_len=None):
        """A random byte range inside [LO, HI), often unaligned."""
        max_len = max_len or 8 * self.ss
        length = self.rng.choice([self.rng.randint(1, 64),
                                  self.rng.randint(1, max_len),
                                  self.ss * self.rng.randint(1, 8)])
        length = min(length, hi - lo)
        start = self.rng.randint(lo, hi - length)
        if self.rng.random() < 0.3:
            start = start // self.ss * self.ss
        return start, start + length

    def free_range(self, lo, hi, for_write=True):
        """A random range inside [LO, HI) sharing no sector with a write
        in flight (nor, FOR_WRITE, with a read in flight), or None."""
        for _ in range(50):
            start, end = self.random_range(lo, hi)
            secs = set(self.model.sectors(start, end))
            if secs & self.busy:
                continue
            if for_write and any(s in self.reading for s in secs):
                continue
            return start, end
        return None

    def read(self, conn, start, end, on_done):
        """A read in flight; ON_DONE(err, data)."""
        secs = self.model.sectors(start, end)
        self.reading.add(secs)

        def done(err, data):
            self.reading.remove(secs)
            on_done(err, data)
        self.pool.pread(conn, end - start, start, done)

    def keep_busy(self, count, depth, issue_one):
        """Calls ISSUE_ONE(i) COUNT times, DEPTH requests in flight."""
        issued = 0
        deadline = time.monotonic() + REQUEST_WAIT_S
        while issued < count or self.pool.total():
            while issued < count and self.pool.total() < depth:
                if not issue_one(issued):
                    break
                issued += 1
            if self.pool.total():
                self.pool.poll(1)
            expect(time.monotonic() < deadline,
                   "requests still in flight after %d s", REQUEST_WAIT_S)

    def write(self, conn, start, data, on_done, fua=False):
        """A write in the model and in flight; ON_DONE(err, wid)."""
        self.wid += 1
        wid = self.wid
        secs = set(self.model.sectors(start, start + len(data)))
        self.busy |= secs
        self.model.begin_write(wid, start, data)

        def done(err, _):
            self.busy -= secs
            self.model.end_write(wid, err == 0)
            if err == 0:
                self.model.commit([wid])
            on_done(err, wid)
        self.pool.pwrite(conn, data, start, done, fua=fua)

    def write_now(self, h, start, data, flags=0):
        """A synchronous write on H, in the model; returns its errno."""
        self.wid += 1
        self.model.begin_write(self.wid, start, data)
        try:
            h.pwrite(data, start, flags=flags)
            err = 0
        except nbd.Error as e:
            err = e.errnum
        self.model.end_write(self.wid, err == 0)
        if err == 0:
            self.model.commit([self.wid])
        return err

    def verify(self, what, must_be_old=()):
        """Reads the whole export: every sector must hold an allowed
        content, and sectors MUST_BE_OLD what they held before."""
        actual = read_all(self.handles[0], self.size)
        bad = self.model.check(actual)
        for s in bad[:5]:
            print("  " + self.model.describe(actual, s), file=sys.stderr)
        expect(not bad, "%s: %d sectors hold none of their allowed "
               "contents", what, len(bad))
        for s, old in must_be_old:
            expect(self.model.sector(s, actual) == old,
                   "%s: sector %d changed although no write reached it",
                   what, s)
        self.model.settle(actual)
        return actual

    def snapshot(self, lo, hi):
        """(sector, content) of the sectors holding bytes [LO, HI)."""
        return [(s, self.model.sector(s)) for s in self.model.sectors(lo, hi)]

    # -- scenarios -------------------------------------------------------

    def read_errors(self):
        """EIO on reads of a small range: exactly the reads whose
        sectors reach it fail; the others return the right bytes."""
        ss = self.ss
        lo = 40 * ss + 123
        hi = lo + 2 * ss
        self.rules.set("read start=%d length=%d error=EIO"
                       % (self.D + lo, hi - lo))
        n = dict(hit=0, miss=0)

        def issue(i):
            start, end = self.random_range(lo - 10 * ss, hi + 10 * ss)
            hit = self.hits(start, end, lo, hi)

            def done(err, data):
                if hit:
                    expect(err == errno.EIO, "read [%d, %d) reaching the "
                           "bad range: %s", start, end, errname(err))
                else:
                    expect(err == 0, "read [%d, %d) beside the bad range: "
                           "%s", start, end, errname(err))
                    expect(self.model.matches(data, start),
                           "read [%d, %d): wrong data", start, end)
                n["hit" if hit else "miss"] += 1
            self.pool.pread(i % 2, end - start, start, done)
            return True
        self.keep_busy(400, 32, issue)
        expect(n["hit"] >= 20 and n["miss"] >= 20, "too few of each: %s", n)
        self.rules.clear()
        self.figures.append("read EIO: %(hit)d failed, %(miss)d served" % n)

    def write_errors(self):
        """EIO on writes to a small range: exactly the writes that
        reach it fail; nothing lands in the range; every sector of a
        failed write holds its old or its new content; the others
        land."""
        ss = self.ss
        lo = 100 * ss + 7
        hi = lo + 3 * ss
        self.rules.set("write start=%d length=%d error=EIO"
                       % (self.D + lo, hi - lo))
        before = self.snapshot(lo, hi)
        n = dict(hit=0, miss=0)

        def issue(i):
            r = self.free_range(lo - 12 * ss, hi + 12 * ss)
            if r is None:
                return False
            start, end = r
            hit = self.hits(start, end, lo, hi)

            def done(err, wid):
                want = errno.EIO if hit else 0
                expect(err == want, "write [%d, %d): %s, expected %s",
                       start, end, errname(err), errname(want))
                n["hit" if hit else "miss"] += 1
            self.write(i % 2, start, self.rng.randbytes(end - start), done)
            return True
        self.keep_busy(300, 16, issue)
        expect(n["hit"] >= 20 and n["miss"] >= 20, "too few of each: %s", n)
        self.rules.clear()
        self.verify("after write errors", before)
        self.figures.append("write EIO: %(hit)d failed, %(miss)d landed" % n)

    def device_full(self):
        """ENOSPC from byte X on, short writes across it: writes below X
        land, writes reaching X fail with ENOSPC, nothing from X on
        changes, reads everywhere work."""
        ss = self.ss
        x = 300 * ss
        self.rules.set("write start=%d end=%d short error=ENOSPC"
                       % (self.D + x, self.D + self.size - ss))
        before = self.snapshot(x, x + 40 * ss)
        n = dict(full=0, landed=0, reads=0)

        def issue(i):
            if i % 4 == 3:
                r = self.free_range(x - 40 * ss, x + 40 * ss, False)
                if r is None:
                    return False
                start, end = r

                def read_done(err, data):
                    expect(err == 0, "read [%d, %d) on a full device: %s",
                           start, end, errname(err))
                    expect(self.model.matches(data, start),
                           "read [%d, %d): wrong data", start, end)
                    n["reads"] += 1
                self.read(i % 2, start, end, read_done)
                return True
            r = self.free_range(x - 40 * ss, x + 40 * ss)
            if r is None:
                return False
            start, end = r
            full = self.aligned(start, end)[1] > x

            def done(err, wid):
                want = errno.ENOSPC if full else 0
                expect(err == want, "write [%d, %d): %s, expected %s",
                       start, end, errname(err), errname(want))
                n["full" if full else "landed"] += 1
            self.write(i % 2, start, self.rng.randbytes(end - start), done)
            return True
        self.keep_busy(300, 16, issue)
        expect(n["full"] >= 20 and n["landed"] >= 20, "too few: %s", n)
        self.rules.clear()
        self.verify("after ENOSPC", before)
        self.figures.append("ENOSPC: %(full)d failed, %(landed)d landed, "
                            "%(reads)d reads" % n)

    def torn_sector(self):
        """A device that tears a sector (half of it written) leaves a
        sector that is neither old nor new -- no encryption can help,
        and the model must notice (this is what would catch garbage)."""
        ss = self.ss
        t = 500 * ss
        self.rules.set("write start=%d length=%d short=%d"
                       % (self.D + t, ss, ss // 2))
        res = []
        self.write(0, t, self.rng.randbytes(ss),
                   lambda err, wid: res.append(err))
        self.pool.drain(REQUEST_WAIT_S)
        expect(res == [errno.EIO], "torn write: %s", res)
        self.rules.clear()
        actual = read_all(self.handles[0], self.size)
        bad = self.model.check(actual)
        expect(bad == [t // ss], "a torn sector went unnoticed: bad %s", bad)
        self.model.settle(actual)
        self.figures.append("torn sector: detected as neither old nor new")

    def nth_op(self):
        """The Nth backend write and the Nth read fail, no other."""
        ss, h = self.ss, self.handles[0]
        self.rules.set("write length=%d nth=5 error=EIO"
                       % (self.D + self.size - ss),
                       "read nth=3 error=EIO")
        for i in range(1, 9):
            err = self.write_now(h, (600 + 2 * i) * ss,
                                 self.rng.randbytes(2 * ss))
            expect(err == (errno.EIO if i == 5 else 0),
                   "write %d: %s", i, errname(err))
        for i in range(1, 6):
            try:
                got = h.pread(ss, 0)
                expect(i != 3 and self.model.matches(got, 0),
                       "read %d: succeeded or wrong", i)
            except nbd.Error as e:
                expect(i == 3 and e.errnum == errno.EIO, "read %d: %s", i,
                       e.string)
        self.rules.clear()
        self.verify("after the nth write")
        self.figures.append("nth: only the 5th write and 3rd read failed")

    def sync_errors(self):
        """fdatasync failing: flushes and FUA writes fail, nothing
        else; a FUA write's data may still be there (old or new)."""
        ss, h = self.ss, self.handles[0]
        self.rules.set("sync error=EIO")
        for what, call in (("flush", h.flush),):
            try:
                call()
                raise Failure("%s succeeded on a failing device" % what)
            except nbd.Error as e:
                expect(e.errnum == errno.EIO, "flush: %s", e.string)
        err = self.write_now(h, 700 * ss, self.rng.randbytes(ss),
                             nbd.CMD_FLAG_FUA)
        expect(err == errno.EIO, "FUA write with a failing sync: %s",
               errname(err))
        err = self.write_now(h, 702 * ss, self.rng.randbytes(ss))
        expect(err == 0, "write without FUA: %s", errname(err))
        expect(self.model.matches(h.pread(ss, 702 * ss), 702 * ss),
               "read after a failed flush")
        self.rules.set("sync nth=2 error=EIO")
        outcome = []
        for _ in range(3):
            try:
                h.flush()
                outcome.append("ok")
            except nbd.Error as e:
                outcome.append(errname(e.errnum))
        expect(outcome == ["ok", "EIO", "ok"], "flushes: %s", outcome)
        self.rules.clear()
        h.flush()
        self.verify("after sync errors")
        self.figures.append("sync EIO: flush and FUA write failed; "
                            "nth=2: ok EIO ok")

    def discard_errors(self):
        """A failing discard fails the trim; the rest stays."""
        h = self.handles[0]
        if not h.can_trim():
            self.figures.append("discard: trim not offered, skipped")
            return
        ss = self.ss
        self.rules.set("discard error=EIO")
        try:
            h.trim(4 * ss, 800 * ss)
            raise Failure("trim succeeded on a failing device")
        except nbd.Error as e:
            expect(e.errnum == errno.EIO, "trim: %s", e.string)
        self.rules.clear()
        h.trim(4 * ss, 800 * ss)
        self.model.trim(800 * ss, 804 * ss)
        self.verify("after discard errors")
        self.figures.append("discard EIO: the trim failed")

    def slow_device(self):
        """Every backend call 20 ms late: everything still right."""
        ss, h = self.ss, self.handles[0]
        delay_s = 0.02
        self.rules.set("all delay=%dms" % (delay_s * 1000))
        t = time.monotonic()
        expect(self.model.matches(h.pread(ss, 0), 0), "slow read")
        one = time.monotonic() - t
        expect(one >= delay_s, "a read took %.3f s, under the delay", one)
        t = time.monotonic()

        def issue(i):
            r = self.free_range(0, 200 * ss, i % 2 == 0)
            if r is None:
                return False
            start, end = r
            if i % 2:
                def done(err, data):
                    expect(err == 0 and self.model.matches(data, start),
                           "slow read [%d, %d): %s", start, end,
                           errname(err))
                self.read(i % 2, start, end, done)
            else:
                self.write(i % 2, start, self.rng.randbytes(end - start),
                           lambda err, wid: expect(err == 0, "slow write: "
                                                   "%s", errname(err)))
            return True
        self.keep_busy(200, 32, issue)
        secs = time.monotonic() - t
        self.rules.clear()
        self.verify("after a slow device")
        self.figures.append("slow device (20 ms per call): 200 requests "
                            "in %.1f s, all right" % secs)

    def stalled_write(self):
        """A write stalled in the backend stays unacknowledged; reads go
        on meanwhile, also of its own sector (old content); released, it
        completes."""
        ss = self.ss
        s = 900 * ss
        self.rules.set("write start=%d length=%d stall" % (self.D + s, ss))
        old = self.model.now(s // ss)
        res = []
        self.write(0, s, self.rng.randbytes(ss),
                   lambda err, wid: res.append(err))
        deadline = time.monotonic() + STALL_HOLD_S
        while time.monotonic() < deadline:
            self.pool.poll(0.05)
        expect(res == [], "a stalled write completed: %s", res)
        t = time.monotonic()
        reads = {}
        for off in (0, 950 * ss, s):
            self.read(1, off, off + ss,
                      lambda err, data, off=off: reads.update({off: data}))
        while len(reads) < 3 and time.monotonic() < t + READ_BESIDE_S:
            self.pool.poll(0.05)
        reads_s = time.monotonic() - t
        expect(len(reads) == 3, "%d of 3 reads beside a stalled write "
               "still waiting after %d s", 3 - len(reads), READ_BESIDE_S)
        for off, got in reads.items():
            if off == s:
                expect(got in old,
                       "the stalled sector reads other than before")
            else:
                expect(self.model.matches(got, off), "read beside a stall")
        # A write elsewhere, watched for a while (see docs/reliability.md).
        other = []
        self.write(1, 960 * ss, self.rng.randbytes(ss),
                   lambda err, wid: other.append(err))
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline and not other:
            self.pool.poll(0.05)
        other_done = bool(other)
        self.rules.clear()
        self.pool.drain(REQUEST_WAIT_S, "writes after the release")
        expect(res == [0] and other == [0], "after the release: %s %s",
               res, other)
        self.verify("after a stall")
        self.figures.append(
            "stalled write: unacknowledged for %.1f s, reads beside it "
            "in %.3f s, a write elsewhere %s while it stalled"
            % (STALL_HOLD_S, reads_s,
               "completed" if other_done else "waited"))


def cmd_data(args):
    t = Tester(args)
    print("seed %d, export %d bytes, %d-byte sectors, data offset %d"
          % (args.seed, t.size, t.ss, t.D))
    for name in ("read_errors", "write_errors", "device_full",
                 "torn_sector", "nth_op", "sync_errors", "discard_errors",
                 "slow_device", "stalled_write"):
        try:
            getattr(t, name)()
        except Exception:
            # A server with a stalled write ends only once it is gone.
            if os.path.exists(args.rules):
                os.unlink(args.rules)
            print("in scenario %s (seed %d)" % (name, args.seed),
                  file=sys.stderr)
            raise
        print("ok: " + t.figures[-1])
        sys.stdout.flush()
    # The server kept serving: all of it reads back, a flush works.
    t.handles[0].flush()
    t.verify("at the end")
    if args.save:
        with open(args.save, "wb") as f:
            f.write(t.model.data)
    for h in t.handles:
        h.shutdown()
    return 0


def cmd_rules(args):
    h = connect(args.uri)
    size = h.get_size()
    Rules(args.rules, h, args.data_offset, size,
          args.sector_size).set(*args.rule)
    h.shutdown()
    return 0


def cmd_request(args):
    t = time.monotonic()
    try:
        h = connect(args.uri)
        if args.kind == "write":
            h.pwrite(os.urandom(args.length), args.offset,
                     flags=nbd.CMD_FLAG_FUA if args.fua else 0)
        elif args.kind == "read":
            h.pread(args.length, args.offset)
        else:
            h.flush()
        result = "ok"
    except nbd.Error as e:
        # A server gone mid-request leaves no errno, or ENOTCONN.
        result = errname(e.errnum) if e.errnum not in (None, 0,
                                                       errno.ENOTCONN) \
            else "disconnected"
    print("%s %.2f" % (result, time.monotonic() - t))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("data", "rules"):
        q = sub.add_parser(name)
        q.add_argument("uri")
        q.add_argument("rules")
        q.add_argument("--data-offset", type=int, required=True)
        q.add_argument("--sector-size", type=int, required=True)
        if name == "data":
            q.add_argument("--save")
            q.add_argument("--seed", type=int,
                           default=random.randrange(1 << 30))
        else:
            q.add_argument("rule", nargs="*")
    q = sub.add_parser("request")
    q.add_argument("uri")
    q.add_argument("kind", choices=["write", "read", "flush"])
    q.add_argument("offset", type=int)
    q.add_argument("length", type=int)
    q.add_argument("--fua", action="store_true")
    args = p.parse_args()
    try:
        return {"data": cmd_data, "rules": cmd_rules,
                "request": cmd_request}[args.cmd](args)
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
