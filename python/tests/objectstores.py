"""Real object stores on 127.0.0.1 for the tests of `s3://` and `http://`
inputs: moto's S3 server (`python -m moto.server`, a subprocess), with or
without authentication, and a server that cuts its replies short.

Nothing here is a mock: brc, boto3 and s3fs talk S3 over TCP to a server
that checks signatures when asked to (moto's `INITIAL_NO_AUTH_ACTION_COUNT`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

import boto3

#: The region every client names: moto creates buckets in it.
REGION = "us-east-1"

#: Keys moto accepts while it does not check them (any would do).
OPEN_KEYS = ("testing", "testing")


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on (the system's pick, released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MotoServer:
    """moto's S3 server in a subprocess on a free port of 127.0.0.1.

    With ``auth``, moto checks every request after the first few (those
    that make an IAM user with full access): requests must be signed with
    the user's keys (``keys``), others are refused with 403.
    """

    def __init__(self, *, auth: bool = False):
        self.auth = auth
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.keys = OPEN_KEYS
        self._log = tempfile.TemporaryFile()
        self._process: Optional[subprocess.Popen] = None

    def __enter__(self) -> "MotoServer":
        env = dict(os.environ)
        # No credentials of the machine's may leak into moto's own checks.
        for name in [n for n in env if n.startswith("AWS_")]:
            del env[name]
        if self.auth:
            # The user, its keys and its policy: three requests, after
            # which moto checks every request's signature and rights.
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
        self._process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self._log, stderr=subprocess.STDOUT, env=env,
        )
        self._wait()
        if self.auth:
            self.keys = self._admin_keys()
        return self

    def __exit__(self, *exc) -> None:
        assert self._process is not None
        self._process.kill()
        self._process.wait(timeout=30)
        self._log.close()

    def _wait(self) -> None:
        """Until the server accepts connections (a connection is no request,
        so it does not count among those let through unchecked)."""
        deadline = time.monotonic() + 60
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._log.seek(0)
                raise RuntimeError(
                    f"moto's server exited with {self._process.returncode}:\n"
                    + self._log.read().decode(errors="replace"))
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"moto's server did not answer on port {self.port} within 60 s")

    def _admin_keys(self) -> tuple[str, str]:
        iam = boto3.client("iam", endpoint_url=self.endpoint, region_name=REGION,
                           aws_access_key_id=OPEN_KEYS[0], aws_secret_access_key=OPEN_KEYS[1])
        iam.create_user(UserName="brc")
        iam.put_user_policy(UserName="brc", PolicyName="all", PolicyDocument=(
            '{"Version": "2012-10-17", "Statement":'
            ' [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'))
        key = iam.create_access_key(UserName="brc")["AccessKey"]
        return key["AccessKeyId"], key["SecretAccessKey"]

    def client(self):
        """A boto3 S3 client with the server's keys."""
        return boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                            aws_access_key_id=self.keys[0],
                            aws_secret_access_key=self.keys[1])

    def env(self, **override: str) -> dict[str, str]:
        """The AWS_* variables that point brc (and s3fs) at the server, with
        the server's keys; ``override`` replaces some."""
        env = {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": REGION,
            "AWS_ACCESS_KEY_ID": self.keys[0],
            "AWS_SECRET_ACCESS_KEY": self.keys[1],
        }
        env.update(override)
        return env

    def upload(self, bucket: str, files: dict[str, Path]) -> None:
        """Makes ``bucket`` and puts each file at its key."""
        s3 = self.client()
        s3.create_bucket(Bucket=bucket)
        for key, path in files.items():
            s3.upload_file(os.fspath(path), bucket, key)


class CutShort(ThreadingHTTPServer):
    """An HTTP server of one object (``data``) that honours HEAD and small
    range requests (a client's look at an object's ends), but answers a
    request for more than ``whole_up_to`` bytes with the headers of the
    full reply (status, Content-Length) and only the first ``sent`` bytes
    of the body, then closes the connection: a connection lost mid-reply."""

    daemon_threads = True

    def __init__(self, data: bytes, *, sent: int, whole_up_to: int = 16):
        super().__init__(("127.0.0.1", 0), _CutHandler)
        self.data, self.sent, self.whole_up_to = data, sent, whole_up_to
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/{name}"

    def handle_error(self, request, client_address):
        # The client's side of a cut reply: no error of the server's.
        pass

    def __enter__(self) -> "CutShort":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()


class _CutHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: CutShort

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.server.data)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_GET(self):
        data = self.server.data
        first, last = 0, len(data) - 1
        wanted = self.headers.get("Range", "")
        if wanted.startswith("bytes="):
            a, _, b = wanted[len("bytes="):].partition("-")
            first, last = int(a), min(int(b) if b else len(data) - 1, len(data) - 1)
        body = data[first:last + 1]
        self.send_response(206 if wanted else 200)
        if wanted:
            self.send_header("Content-Range", f"bytes {first}-{last}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if len(body) <= self.server.whole_up_to:
            self.wfile.write(body)
            return
        self.wfile.write(body[: self.server.sent])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)
