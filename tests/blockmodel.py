# SPDX-License-Identifier: GPL-2.0-or-later
"""What a block device may hold, and many requests in flight on it.

Shared by the reliability tests (faults.py, crash.py, soak.py):

Model    the content an export must have, per encryption sector: the
         latest content, the earlier contents a sector may still hold
         (after a failed write, or until a flush made a write durable),
         and bytes whose content is undefined (trimmed).
Pool     requests in flight on several libnbd connections at once, each
         with a callback on completion.
Server   nbdkit in the foreground, started, killed, stopped.
"""

import errno
import os
import select
import signal
import subprocess
import time

import nbd

CHUNK_BYTES = 1 << 20          # whole-export reads go in pieces of this


def connect(uri):
    """A libnbd handle that lets unaligned requests reach the server."""
    h = nbd.NBD()
    h.set_strict_mode(h.get_strict_mode() & ~nbd.STRICT_ALIGN)
    h.connect_uri(uri)
    return h


def errname(err):
    return errno.errorcode.get(err, str(err)) if err else "ok"


def read_all(h, size):
    data = bytearray()
    for off in range(0, size, CHUNK_BYTES):
        data += h.pread(min(CHUNK_BYTES, size - off), off)
    return data


def masked_equal(a, b, mask):
    """A == B on the bytes where MASK (0x00/0xff bytes) is 0xff."""
    if a == b:
        return True
    if mask is None or mask.count(0) == 0:
        return False
    diff = int.from_bytes(a, "little") ^ int.from_bytes(b, "little")
    return diff & int.from_bytes(mask, "little") == 0


class Model:
    """The content of an export of len(DATA) bytes, in SS-byte sectors.

    A sector may hold more than one content: after a failed write (its
    old or its new content), and, after a crash, anything written since
    the last write that a flush made durable.  A write issued while a
    sector may hold several contents (its read-modify-write merges with
    whichever is there) may produce several in turn.

    data     one possible content: every write applied
    present  sector -> the contents it may hold now, when more than
             data's
    hist     sector -> [(write id, contents it produced)], oldest first,
             the first entry being what was durable before: what the
             sector may hold after a crash
    care     None, or a mask of 0xff (defined) / 0x00 (trimmed) bytes

    With TRACK false (no write may fail, nothing crashes) only data and
    care are kept, which is faster.
    """

    def __init__(self, data, ss, track=True):
        self.data = bytearray(data)
        self.ss = ss
        self.track = track
        self.present = {}
        self.hist = {}
        self.care = None
        self.pending = {}          # write id -> {sector: (before, after)}
        self.touched = {}          # write id -> its sectors, until commit

    def sectors(self, start, end):
        """The sectors that bytes [START, END) lie in."""
        return range(start // self.ss, (end + self.ss - 1) // self.ss)

    def sector(self, s, data=None):
        return bytes((self.data if data is None else data)
                     [s * self.ss:(s + 1) * self.ss])

    def now(self, s):
        """The contents sector S may hold now."""
        return self.present.get(s) or [self.sector(s)]

    def _merge(self, content, s, start, data):
        lo, hi = s * self.ss, (s + 1) * self.ss
        a, b = max(lo, start), min(hi, start + len(data))
        c = bytearray(content)
        c[a - lo:b - lo] = data[a - start:b - start]
        return bytes(c)

    def begin_write(self, wid, start, data):
        """Write WID of bytes DATA at START is issued (no other write
        may be in flight on its sectors)."""
        end = start + len(data)
        if not self.track:
            self.data[start:end] = data
            if self.care is not None:
                self.care[start:end] = b"\xff" * len(data)
            return
        secs = self.sectors(start, end)
        change = {}
        for s in secs:
            before = self.now(s)
            after = list(dict.fromkeys(self._merge(c, s, start, data)
                                       for c in before))
            change[s] = (before, after)
            self.hist.setdefault(s, [(None, before)]).append((wid, after))
        self.data[start:end] = data
        if self.care is not None:
            self.care[start:end] = b"\xff" * len(data)
        self.pending[wid] = change
        self.touched[wid] = secs

    def end_write(self, wid, ok):
        """Write WID completed: OK, or failed (then each of its sectors
        holds its old or its new content)."""
        if not self.track:
            assert ok, "a failed write in an untracked model"
            return
        for s, (before, after) in self.pending.pop(wid).items():
            now = after if ok else list(dict.fromkeys(before + after))
            if len(now) == 1 and now[0] == self.sector(s):
                self.present.pop(s, None)
            else:
                self.present[s] = now

    def commit(self, wids):
        """Writes WIDS are durable (acknowledged and then flushed, or
        simply acknowledged when nothing can crash): their sectors can
        no longer hold anything older."""
        for wid in wids:
            for s in self.touched.pop(wid, ()):
                h = self.hist.get(s)
                ids = [w for w, _ in h] if h else []
                if wid in ids:
                    del h[:ids.index(wid)]

    def trim(self, start, end):
        """Whole sectors inside [START, END) become undefined."""
        first = (start + self.ss - 1) // self.ss
        last = end // self.ss
        if last <= first:
            return
        if self.care is None:
            self.care = bytearray(b"\xff" * len(self.data))
        self.care[first * self.ss:last * self.ss] = \
            bytes((last - first) * self.ss)

    def matches(self, got, start):
        """Could a read of len(GOT) bytes at START return GOT now?"""
        end = start + len(got)
        mask = None if self.care is None else self.care[start:end]
        if masked_equal(bytes(got), bytes(self.data[start:end]), mask):
            return True
        for s in self.sectors(start, end):
            lo, hi = max(start, s * self.ss), min(end, (s + 1) * self.ss)
            piece = bytes(got[lo - start:hi - start])
            m = None if mask is None else mask[lo - start:hi - start]
            off = lo - s * self.ss
            if not any(masked_equal(piece, c[off:off + hi - lo], m)
                       for c in self.now(s)):
                return False
        return True

    def allowed(self, s):
        """What sector S may hold after a crash (or now, if none)."""
        if s in self.hist:
            return list(dict.fromkeys(c for _, cs in self.hist[s]
                                      for c in cs))
        return self.now(s)

    def check(self, actual):
        """Sectors of ACTUAL (the whole export) that hold none of their
        allowed contents, as a sorted list."""
        bad = []
        odd = set(self.hist) | set(self.present)
        for s in odd:
            if self.sector(s, actual) not in self.allowed(s):
                bad.append(s)
        view = bytearray(actual)
        for s in odd:                  # compared above
            view[s * self.ss:(s + 1) * self.ss] = self.sector(s)
        if not masked_equal(bytes(view), bytes(self.data), self.care):
            for s in range(len(self.data) // self.ss):
                lo, hi = s * self.ss, (s + 1) * self.ss
                mask = None if self.care is None else self.care[lo:hi]
                if s not in odd and not masked_equal(
                        bytes(actual[lo:hi]), bytes(self.data[lo:hi]),
                        mask):
                    bad.append(s)
        return sorted(bad)

    def settle(self, actual):
        """ACTUAL (checked) is now the one content of every sector."""
        self.data[:] = actual
        self.present.clear()
        self.hist.clear()
        self.touched.clear()

    def describe(self, actual, s):
        """A line about sector S: which allowed content it is nearest."""
        got = self.sector(s, actual)
        cands = self.allowed(s)
        same = [sum(a == b for a, b in zip(got, c)) for c in cands]
        return ("sector %d (bytes %d-%d): %d allowed contents, the nearest "
                "shares %d of %d bytes"
                % (s, s * self.ss, (s + 1) * self.ss - 1, len(cands),
                   max(same), self.ss))


class InFlight:
    """How many requests in flight cover each sector: a write must not
    overlap a read whose expected contents it would change."""

    def __init__(self):
        self.count = {}

    def __contains__(self, sector):
        return sector in self.count

    def add(self, sectors):
        for s in sectors:
            self.count[s] = self.count.get(s, 0) + 1

    def remove(self, sectors):
        for s in sectors:
            self.count[s] -= 1
            if not self.count[s]:
                del self.count[s]


class Pool:
    """Requests in flight on HANDLES; CALLBACK(err, data) on completion
    (err an errno or 0; data the bytes of a successful read)."""

    def __init__(self, handles):
        self.handles = handles
        self.inflight = [0] * len(handles)
        self.raised = None         # the first exception of a callback

    def total(self):
        return sum(self.inflight)

    def _completion(self, conn, callback, buf=None):
        self.inflight[conn] += 1

        def done(err):
            self.inflight[conn] -= 1
            e = err.value
            try:
                callback(e, bytes(buf.to_bytearray())
                         if buf and not e else None)
            except Exception as exc:   # raised again by poll()
                self.raised = self.raised or exc
            return 1                   # retire the command
        return done

    def pread(self, conn, length, offset, callback):
        buf = nbd.Buffer(length)
        self.handles[conn].aio_pread(
            buf, offset, completion=self._completion(conn, callback, buf))

    def pwrite(self, conn, data, offset, callback, fua=False):
        buf = nbd.Buffer.from_bytearray(bytearray(data))
        self.handles[conn].aio_pwrite(
            buf, offset, completion=self._completion(conn, callback),
            flags=nbd.CMD_FLAG_FUA if fua else 0)

    def zero(self, conn, length, offset, callback, fua=False):
        self.handles[conn].aio_zero(
            length, offset, completion=self._completion(conn, callback),
            flags=nbd.CMD_FLAG_FUA if fua else 0)

    def trim(self, conn, length, offset, callback):
        self.handles[conn].aio_trim(
            length, offset, completion=self._completion(conn, callback))

    def flush(self, conn, callback):
        self.handles[conn].aio_flush(
            completion=self._completion(conn, callback))

    def poll(self, timeout):
        """Moves data for up to TIMEOUT seconds; returns False if
        nothing happened."""
        readers, writers, owner = [], [], {}
        for h in self.handles:
            fd = h.aio_get_fd()
            owner[fd] = h
            d = h.aio_get_direction()
            if d & nbd.AIO_DIRECTION_READ:
                readers.append(fd)
            if d & nbd.AIO_DIRECTION_WRITE:
                writers.append(fd)
        r, w, _ = select.select(readers, writers, [], timeout)
        for fd in w:
            owner[fd].aio_notify_write()
        for fd in r:
            owner[fd].aio_notify_read()
        if self.raised:
            exc, self.raised = self.raised, None
            raise exc
        return bool(r or w)

    def drain(self, seconds, what="requests"):
        """Waits until nothing is in flight; raises after SECONDS."""
        deadline = time.monotonic() + seconds
        while self.total():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("%d %s still in flight after %g s"
                                   % (self.total(), what, seconds))
            self.poll(min(left, 1))


class ServerError(Exception):
    pass


class Server:
    """nbdkit in the foreground on the Unix socket SOCK, with ARGS (the
    plugin and its parameters, maybe nbdkit options before), its output
    to the file LOG."""

    START_WAIT_S = 20              # for the server to accept connections

    def __init__(self, sock, args, log):
        self.sock = sock
        self.cmd = ["nbdkit", "-f", "-U", sock] + list(args)
        self.log = log
        self.proc = None
        self.uri = "nbd+unix:///?socket=" + sock

    @property
    def pid(self):
        return self.proc.pid

    def start(self):
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + self.START_WAIT_S
        while True:
            if self.proc.poll() is not None:
                raise ServerError("nbdkit exited with %d at start (see its "
                                  "log)" % self.proc.returncode)
            try:
                connect(self.uri).shutdown()
                return
            except nbd.Error:
                if time.monotonic() > deadline:
                    raise ServerError("nbdkit did not start in %d s"
                                      % self.START_WAIT_S)
                time.sleep(0.01)

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)

    def reap(self):
        return self.proc.wait(timeout=10)

    def stop(self):
        """SIGTERM, and SIGKILL if it has not ended after 10 s."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
