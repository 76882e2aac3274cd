"""Each remote call is retried by exactly one layer (docs/data.md): counted at the server.

A loopback HTTP server answers every request with 503 and counts what reaches it. The
reference is the documented budget, worked out by hand: RETRIES (4) attempts per
operation, each one request on the wire. A second layer (botocore's own retries
under ours, as before) would multiply that: 4 x 4 = 16 HEADs for one `has`.
"""
from __future__ import annotations

from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from resolver.share.remote_base import RETRIES, RemoteError
from resolver.share.remote_http import HttpRemote
from resolver.share.remote_s3 import S3Remote
from resolver.share.remotes import open_remote
from tests.support.served import served

BLOB = "ab" * 32
ATTEMPTS = 4          # docs/data.md: "retried ... four attempts in all"


class AlwaysUnavailable(BaseHTTPRequestHandler):
    """503 for everything; counts requests by method."""

    protocol_version = "HTTP/1.1"
    seen: Counter

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.seen[self.command] += 1
        body = b"" if self.command == "HEAD" else b"<Error><Code>ServiceUnavailable</Code></Error>"
        self.send_response(503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def unavailable():
    handler = type("Handler", (AlwaysUnavailable,), {"seen": Counter()})
    with served(ThreadingHTTPServer(("127.0.0.1", 0), handler)) as server:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.seen


def test_the_documented_budget_is_four_attempts():
    assert RETRIES == ATTEMPTS


def test_http_remote_tries_each_operation_four_times(unavailable, tmp_path):
    url, seen = unavailable
    remote = HttpRemote(url, retries=RETRIES, backoff=0.0)
    with pytest.raises(RemoteError, match="gave up after 4 attempts"):
        remote.has(BLOB)
    with pytest.raises(RemoteError, match="gave up after 4 attempts"):
        remote.fetch(BLOB, tmp_path / "x.tar.zst")
    assert seen == {"HEAD": ATTEMPTS, "GET": ATTEMPTS}


def test_s3_remote_tries_each_operation_four_times_not_botocore_on_top(unavailable, tmp_path, monkeypatch):
    url, seen = unavailable
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": url,
                        "AWS_EC2_METADATA_DISABLED": "true", "AWS_MAX_ATTEMPTS": "10",
                        "AWS_RETRY_MODE": "standard"}.items():
        monkeypatch.setenv(name, value)          # the environment asking for more retries changes nothing
    remote = S3Remote("s3://bucket/prefix", retries=RETRIES, backoff=0.0)
    with pytest.raises(RemoteError, match="gave up after 4 attempts"):
        remote.has(BLOB)
    with pytest.raises(RemoteError, match="gave up after 4 attempts"):
        remote.fetch(BLOB, tmp_path / "x.tar.zst")
    source = tmp_path / "blob.tar.zst"
    source.write_bytes(b"small")
    with pytest.raises(RemoteError, match="gave up after 4 attempts"):
        remote.push(BLOB, source)
    assert seen == {"HEAD": ATTEMPTS, "GET": ATTEMPTS, "PUT": ATTEMPTS}


def test_each_retry_is_told_to_the_warn_handed_in_and_nothing_is_written_without(unavailable, tmp_path, capfd):
    url, seen = unavailable
    lines: list[str] = []
    remote = open_remote(url, tmp_path, retries=RETRIES, backoff=0.0, warn=lines.append)
    with pytest.raises(RemoteError, match="gave up after 4 attempts"):
        remote.has(BLOB)
    # a wait between attempts and none after the last: 3 lines for 4 attempts, numbered
    assert len(lines) == ATTEMPTS - 1
    for number, line in enumerate(lines, 1):
        assert line.startswith(f"warning: cannot query blob {BLOB} on {url}: ")
        assert line.endswith(f"; retrying in 0.0 s ({number}/{ATTEMPTS})")
    capfd.readouterr()
    with pytest.raises(RemoteError):
        open_remote(url, tmp_path, retries=RETRIES, backoff=0.0).has(BLOB)
    assert capfd.readouterr() == ("", "")
