"""A response cut after its headers (the instance died mid-answer; nginx has already passed the
headers on, so it cannot retry) is retried by the client with the same Idempotency-Key.

requests raises ChunkedEncodingError for such a response, not ConnectionError.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mexican_train_client import Client, RetryPolicy

pytestmark = pytest.mark.e2e


@pytest.fixture()
def cutting_server() -> Iterator[tuple[str, list[str | None]]]:
    keys: list[str | None] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            keys.append(self.headers.get("Idempotency-Key"))
            body = b'{"version": 2}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if len(keys) == 1:  # first attempt: half the body, then the process "dies"
                self.wfile.write(body[:5])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", keys
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.stand_in_server
def test_cut_response_is_retried_with_the_same_key(
    cutting_server: tuple[str, list[str | None]],
) -> None:
    url, keys = cutting_server
    with Client(url, retry=RetryPolicy(attempts=3, base=0.01, cap=0.05)) as client:
        assert client.request("POST", "/api/v1/games/g/moves", body={"action": "draw"}) == {
            "version": 2
        }
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]
