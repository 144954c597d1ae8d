#!/usr/bin/env python3
"""An HTTP server with range requests, and the ways real servers misbehave, for the tools' URL tests.

    python3 tests/net/range_server.py ROOT        (prints "PORT\\n" when it listens on 127.0.0.1)

Serves the files under ROOT at /MODE/PATH, where MODE says how it answers:

- ok        single byte ranges (206, Content-Range, a stable ETag), as the model hubs' CDNs do
- norange   ignores Range: 200 and the whole file
- drop      sends half of the range asked for, then resets the connection
- liar      a Content-Length and Content-Range for the range asked for, then 1000 bytes and the end
- slow      says nothing for 60 s
- changing  another ETag on every request (a file replaced between two requests)
- redirect  302 to /ok/PATH
- auth      401 without "Authorization: Bearer sekrit", else as ok
- flaky     every other request to a path fails: 503, or the range cut short by a reset (a server that
            has bad moments, which retries get past)
- drip      the headers at once, then the body 3 bytes a second (a read that never ends by silence)
- status-N  HTTP status N (404, 429, 503, ...) with an empty body, to every request
- empty     as ok, but a missing file is a 404 with an empty body
- busy      every other request to a path is a 429 with "Retry-After: 1" and an empty body, else as ok
- busy-long a 429 with "Retry-After: 3600" and an empty body, to every request
- bigheader a response header line of 200 KB (more than libcurl takes), then as ok
- floodhead 2 MB of response header lines, each short (more than the client takes), then as ok
- padded    as ok, but every file goes on with zeros to 1 TiB (a server that claims a huge file: a header
            can then describe tensors of any size)

GET /_stats returns {"/MODE/PATH": [requests, body bytes sent], ...}; GET /_reset clears them. Each
connection's send buffer is 64 KiB, so the bytes counted are close to what the client took: a client that
stops reading a response stops the count soon after. Standard library only.
"""
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = "."
STATS = {}
LOCK = threading.Lock()
MODES = {"ok", "norange", "drop", "liar", "slow", "changing", "redirect", "auth", "flaky", "drip", "empty", "busy",
         "busy-long", "bigheader", "floodhead", "padded"}
PADDED_SIZE = 1 << 40
CHANGES = [0]


def count(key, requests=0, sent=0):
    with LOCK:
        r = STATS.setdefault(key, [0, 0])
        r[0] += requests
        r[1] += sent


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)

    def send_body(self, key, f, start, length, limit=None, padded=False):
        f.seek(start)
        left = length if limit is None else min(length, limit)
        while left > 0:
            chunk = f.read(min(65536, left))
            if not chunk and padded:
                chunk = bytes(min(65536, left))
            if not chunk:
                break
            try:
                self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                return False
            count(key, sent=len(chunk))
            left -= len(chunk)
        return True

    def do_GET(self):
        if self.path == "/_stats":
            with LOCK:
                body = json.dumps(STATS).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if self.path == "/_reset":
            with LOCK:
                STATS.clear()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        parts = self.path.split("?", 1)[0].lstrip("/").split("/", 1)
        if len(parts) != 2 or (parts[0] not in MODES and not parts[0].startswith("status-")):
            self.send_error(404)
            return
        mode, rel = parts
        key = "/" + mode + "/" + rel
        count(key, requests=1)
        path = os.path.realpath(os.path.join(ROOT, rel))
        if mode.startswith("status-"):
            self.send_empty(int(mode[len("status-"):]))
            return
        if not path.startswith(os.path.realpath(ROOT) + os.sep) or not os.path.isfile(path):
            if mode == "empty":
                self.send_empty(404)
            else:
                self.send_error(404)
            return
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "/ok/" + rel)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "auth" and self.headers.get("Authorization") != "Bearer sekrit":
            self.send_error(401)
            return
        flaky_turn = 0
        if mode == "flaky":
            with LOCK:
                flaky_turn = STATS[key][0] % 4  # 1: a 503, 3: a cut, else fine
            if flaky_turn == 1:
                self.send_error(503)
                return
        if mode == "busy":
            with LOCK:
                turn = STATS[key][0] % 2  # 1: a 429
            if turn == 1:
                self.send_empty(429, [("Retry-After", "1")])
                return
        if mode == "busy-long":
            self.send_empty(429, [("Retry-After", "3600")])
            return
        if mode == "slow":
            time.sleep(60)
            return
        size = os.path.getsize(path) if mode != "padded" else PADDED_SIZE
        etag = '"%d-%d"' % (size, int(os.path.getmtime(path)))
        if mode == "changing":
            with LOCK:
                CHANGES[0] += 1
                etag = '"v%d"' % CHANGES[0]
        rng = self.headers.get("Range")
        with open(path, "rb") as f:
            if mode == "norange" or not rng:
                self.send_response(200)
                self.send_header("Content-Length", str(size))
                self.send_header("ETag", etag)
                self.end_headers()
                self.send_body(key, f, 0, size)
                return
            first, _, last = rng.split("=", 1)[1].partition("-")
            first = int(first)
            last = min(int(last), size - 1) if last else size - 1
            if first >= size:
                self.send_response(416)
                self.send_header("Content-Range", "bytes */%d" % size)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            length = last - first + 1
            self.send_response(206)
            if mode == "bigheader":
                self.send_header("X-Padding", "x" * (200 * 1024))
            if mode == "floodhead":
                for i in range(20000):
                    self.send_header("X-Flood-%05d" % i, "y" * 80)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
            self.send_header("Content-Length", str(length))
            self.send_header("ETag", etag)
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            if mode == "drip":
                f.seek(first)
                for _ in range(0, length, 3):
                    try:
                        self.wfile.write(f.read(3))
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                    count(key, sent=3)
                    time.sleep(1)
                return
            if mode == "drop" or flaky_turn == 3:
                self.send_body(key, f, first, length, limit=max(1, length // 2))
                self.wfile.flush()
                # A reset, not a clean close: what a dropped connection looks like.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                return
            if mode == "liar":
                self.send_body(key, f, first, length, limit=1000)
                self.close_connection = True
                return
            self.send_body(key, f, first, length, padded=mode == "padded")

    def send_empty(self, status, headers=()):
        """A status with an empty body, as CDNs and API gateways send 404s, 429s and 503s."""
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that hangs up on a response (as the reader does once it has the header) is no error.
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    global ROOT
    ROOT = sys.argv[1]
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
