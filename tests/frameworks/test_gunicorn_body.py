"""``service/frameworks/gunicorn_body.py`` writes what gunicorn's own writer would: the same
bytes on the wire, chunked for HTTP/1.1 and plain for HTTP/1.0, under the streams pool's gevent
worker (``deploy/gunicorn.conf.py`` installs the capture), and no writer on a blocking socket."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator

import pytest
from gunicorn.http.wsgi import Response as GunicornResponse
from gunicorn.http2.response import HTTP2Response

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from service.frameworks.gunicorn_body import ENVIRON_KEY, body_writer, capture
from tests.frameworks.gunicorn_body_app import PARTS


@pytest.fixture(scope="module")
def server(redis_server: RedisServer) -> Iterator[Gunicorn]:
    with Gunicorn(
        redis_server.url, workers=1, pool="streams", app="tests.frameworks.gunicorn_body_app:app"
    ) as gunicorn:
        yield gunicorn


def fetch(server: Gunicorn, path: str, version: str, method: str = "GET") -> bytes:
    """The raw response, read to the end (gunicorn closes an HTTP/1.0 or Connection: close one)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        request = f"{method} {path} {version}\r\nHost: x\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode())
        out = bytearray()
        while chunk := sock.recv(1 << 20):
            out += chunk
    return re.sub(rb"\r\nDate: [^\r]*", b"", bytes(out))


@pytest.mark.parametrize("version", ["HTTP/1.1", "HTTP/1.0"])
def test_the_bytes_on_the_wire_are_gunicorns(server: Gunicorn, version: str) -> None:
    direct, plain = fetch(server, "/direct", version), fetch(server, "/plain", version)
    head, _, body = direct.partition(b"\r\n\r\n")
    assert (b"Transfer-Encoding: chunked" in head) == (version == "HTTP/1.1")
    assert direct == plain
    # The writer was there, and the large part went out in more than one write.
    expected = b"writer\n" + b"".join(PARTS) + b"last\n"
    if version == "HTTP/1.0":
        assert body == expected
    else:
        assert body.startswith(b"7\r\nwriter\n\r\n") and body.endswith(b"5\r\nlast\n\r\n0\r\n\r\n")


def test_a_head_request_gets_no_writer(server: Gunicorn) -> None:
    """gunicorn drops a HEAD answer's body; written past it, the body would reach the client."""
    direct, plain = (
        fetch(server, "/direct", "HTTP/1.1", "HEAD"),
        fetch(server, "/plain", "HTTP/1.1", "HEAD"),
    )
    assert direct == plain and direct.endswith(b"\r\n\r\n")


def test_no_writer_on_a_blocking_socket() -> None:
    left, right = socket.socketpair()
    with left, right:
        resp = GunicornResponse(None, left, None)
        assert body_writer({ENVIRON_KEY: resp}) is None
        left.setblocking(False)
        assert body_writer({ENVIRON_KEY: resp}) is not None
    assert body_writer({}) is None


def test_no_writer_for_a_response_that_frames_its_body_otherwise() -> None:
    """HTTP/2's response subclasses HTTP/1's and writes frames of its own: raw bytes on its
    socket would break the connection."""
    left, right = socket.socketpair()
    with left, right:
        left.setblocking(False)
        h2 = HTTP2Response(None, left, None, None, 1)
        assert body_writer({ENVIRON_KEY: h2}) is None
        seen: dict[str, object] = {}
        capture(lambda environ, _: seen.update(environ) or [])({}, h2.start_response)
        assert ENVIRON_KEY not in seen
