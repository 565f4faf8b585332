"""The Python client follows a stream that comes without chunked framing: a proxy in front of
the service may send it close-delimited (nginx with ``chunked_transfer_encoding off``, an
HTTP/1.0 proxy), and each entry must still reach the reader as it arrives, not once some
hundreds of bytes more have come after it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import requests
from mexican_train_client import Client, Media

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@contextmanager
def unchunking_proxy(upstream: str) -> Iterator[str]:
    """A proxy that answers every request close-delimited: no Content-Length, no chunks, the
    body passed on as it comes, the connection closed at its end."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def handle(conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            request_line, *header_lines = head.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
            method, target, _ = request_line.split(" ")
            headers = dict(line.split(": ", 1) for line in header_lines)
            headers = {k: v for k, v in headers.items() if k.lower() not in _HOP}
            with requests.request(
                method, upstream + target, headers=headers, stream=True, timeout=60
            ) as answer:
                status = f"HTTP/1.1 {answer.status_code} {answer.reason}\r\n"
                lines = [
                    f"{k}: {v}\r\n" for k, v in answer.headers.items() if k.lower() not in _HOP
                ]
                conn.sendall((status + "".join(lines) + "Connection: close\r\n\r\n").encode())
                try:
                    for chunk in answer.raw.stream(65536, decode_content=False):
                        conn.sendall(chunk)
                except OSError:
                    return

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


#: An entry may take this long to reach the reader (a loaded machine); without chunks, the
#: reader waited for 512 bytes: minutes of keep-alives after a short entry. Below the server's
#: 10 s of quiet before its first keep-alive, so no keep-alive can bring a held entry out.
PROMPT_SECONDS = 8.0


@pytest.mark.parametrize("media", [Media.SSE, Media.NDJSON])
def test_entries_of_an_unchunked_stream_arrive_as_they_come(live: str, media: Media) -> None:
    with Client(live) as direct:
        game = direct.create_game(["ann", "bo"], seed=1)
    got: list[tuple[float, dict[str, Any]]] = []
    with unchunking_proxy(live) as url, Client(url) as client:

        def read() -> None:
            for entry in client.events(game["game_id"], token=game["host_token"], media=media):
                got.append((time.monotonic(), entry))
                if entry["version"] == 2:
                    return

        started = time.monotonic()
        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = started + PROMPT_SECONDS
        while not got and time.monotonic() < deadline:
            time.sleep(0.05)
        assert got, f"the creation entry did not arrive within {PROMPT_SECONDS} s"
        dealt_at = time.monotonic()
        with Client(live) as direct:
            direct.deal(game["game_id"], token=game["host_token"])
        reader.join(PROMPT_SECONDS)
        assert not reader.is_alive(), "the deal did not arrive"
    assert [entry["version"] for _, entry in got] == [1, 2]
    assert got[1][0] - dealt_at < PROMPT_SECONDS
