#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A read-only HTTP server of one directory that answers Range requests
(python's http.server does not), for nbdkit's curl plugin in the tests.

usage: range-http-server.py DIR PORTFILE
Listens on 127.0.0.1, on a free port that it writes into PORTFILE once
it is ready; serves until killed."""
import http.server
import os
import re
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        size = os.path.getsize(path)
        f = open(path, "rb")
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if m is None:
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            return f
        first = int(m.group(1))
        last = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
        if first > last:
            f.close()
            self.send_error(416)
            return None
        f.seek(first)
        self.send_response(206)
        self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
        self.send_header("Content-Length", str(last - first + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self.remaining = last - first + 1
        return f

    def copyfile(self, source, outputfile):
        left = getattr(self, "remaining", None)
        while left is None or left > 0:
            chunk = source.read(1 << 16 if left is None else min(left, 1 << 16))
            if not chunk:
                break
            outputfile.write(chunk)
            if left is not None:
                left -= len(chunk)


def main():
    port_file = os.path.abspath(sys.argv[2])
    os.chdir(sys.argv[1])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


main()
