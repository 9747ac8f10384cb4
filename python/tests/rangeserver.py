"""A static file server on 127.0.0.1 that honours HTTP Range requests, as
object stores do: a real server for the tests' `http://` reads.

It records the bytes of each file it sends, and can hold range requests
of more than a few bytes at a gate until the test opens it, counting the
requests that wait there, so a test can act while tasks are mid-read (the
client's look at each file's first bytes is never held).
"""

from __future__ import annotations

import os
import re
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

RANGE = re.compile(r"bytes=(\d+)-(\d*)$")

#: Ranges longer than this wait at the gate while it is closed.
GATED_LENGTH = 16


class Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: with Nagle's algorithm,
    # each response of a kept-alive connection would wait for a delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, *args):  # quiet
        pass

    def parse_request(self):
        # A server that wants a token, as object stores do, answers 403 to
        # requests without it.
        if not super().parse_request():
            return False
        token = self.server.token
        if token is not None and self.headers.get("Authorization") != f"Bearer {token}":
            self.send_error(403)
            return False
        return True

    def do_GET(self):
        wanted = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        if wanted is None:
            if path.is_file():
                self.server.served.append((self.path, 0, path.stat().st_size))
            return super().do_GET()
        match = RANGE.match(wanted.strip())
        if match is None or not path.is_file():
            self.send_error(416 if match is None else 404)
            return
        size = path.stat().st_size
        first = int(match.group(1))
        last = min(int(match.group(2)) if match.group(2) else size - 1, size - 1)
        if last - first + 1 > GATED_LENGTH:
            self.server.at_gate()
        if first >= size or last < first:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            f.seek(first)
            body = f.read(last - first + 1)
        self.server.served.append((self.path, first, first + len(body)))
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self):
        if self.command == "HEAD" or self.headers.get("Range") is None:
            self.send_header("Accept-Ranges", "bytes")
        super().end_headers()


class RangeServer(ThreadingHTTPServer):
    """Serves `root` on an ephemeral port of 127.0.0.1 from a thread; only
    to requests that carry `token`, once it is set."""

    daemon_threads = True

    def __init__(self, root: Path):
        super().__init__(("127.0.0.1", 0), partial(Handler, directory=os.fspath(root)))
        self.token = None
        #: What each GET sent of a file: its URL path, the first byte and
        #: the end (appends from the handler threads need no lock).
        self.served: list[tuple[str, int, int]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Semaphore(0)
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def handle_error(self, request, client_address):
        # A client that closes a connection it no longer needs (fsspec
        # after reading a response's headers) is no error of the server.
        pass

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def at_gate(self) -> None:
        if not self.gate.is_set():
            self.waiting.release()
            # Bounded: a test that forgets to open the gate still ends.
            self.gate.wait(timeout=120)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.gate.set()
        self.shutdown()
        self.server_close()
