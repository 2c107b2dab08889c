#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reads or writes an NBD export in blocks, for the tests of volumes
whose sectors may fail to read (dm-integrity: tests/test-integrity.sh).

  nbd-blocks.py read URI OUT [--block BYTES]
      the whole export into OUT, a failed block as zeros; prints
      "size BYTES" and a line "bad OFFSET LENGTH ERRNO" per run of
      failed blocks (adjacent ones merged)
  nbd-blocks.py write URI OFFSET FILE [--fua]
      FILE's bytes at OFFSET, then a flush
  nbd-blocks.py expect-error URI OFFSET LENGTH ERRNO
      a read of that range must fail with ERRNO (EIO)
"""

import argparse
import errno
import sys

import nbd


def connect(uri):
    h = nbd.NBD()
    h.connect_uri(uri)
    return h


def read(args):
    h = connect(args.uri)
    size = h.get_size()
    bad = []
    with open(args.out, "wb") as out:
        for off in range(0, size, args.block):
            n = min(args.block, size - off)
            try:
                out.write(h.pread(n, off))
            except nbd.Error as e:
                out.write(bytes(n))
                name = errno.errorcode.get(e.errnum, str(e.errnum))
                if bad and bad[-1][0] + bad[-1][1] == off \
                   and bad[-1][2] == name:
                    bad[-1][1] += n
                else:
                    bad.append([off, n, name])
    print("size", size)
    for off, n, name in bad:
        print("bad", off, n, name)
    h.shutdown()


def write(args):
    h = connect(args.uri)
    with open(args.file, "rb") as f:
        data = f.read()
    h.pwrite(data, args.offset,
             nbd.CMD_FLAG_FUA if args.fua else 0)
    h.flush()
    h.shutdown()


def expect_error(args):
    h = connect(args.uri)
    try:
        h.pread(args.length, args.offset)
    except nbd.Error as e:
        got = errno.errorcode.get(e.errnum, str(e.errnum))
        if got != args.errno:
            sys.exit("read of %d bytes at %d failed with %s, not %s"
                     % (args.length, args.offset, got, args.errno))
        print("failed as expected:", got)
        return
    sys.exit("read of %d bytes at %d succeeded" % (args.length, args.offset))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("read")
    r.add_argument("uri")
    r.add_argument("out")
    r.add_argument("--block", type=int, default=4096)
    w = sub.add_parser("write")
    w.add_argument("uri")
    w.add_argument("offset", type=int)
    w.add_argument("file")
    w.add_argument("--fua", action="store_true")
    e = sub.add_parser("expect-error")
    e.add_argument("uri")
    e.add_argument("offset", type=int)
    e.add_argument("length", type=int)
    e.add_argument("errno")
    args = p.parse_args()
    {"read": read, "write": write, "expect-error": expect_error}[args.cmd](args)


if __name__ == "__main__":
    main()
