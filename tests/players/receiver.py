"""A webhook receiver on 127.0.0.1: it keeps every delivery, and answers each path as told."""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


class Receiver:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.got: queue.Queue[Received] = queue.Queue()
        self.answers: dict[str, list[int]] = {}  # per path, the statuses to answer, in order

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, path: str) -> int:
        planned = self.answers.get(path)
        return planned.pop(0) if planned else 204

    def next(self, timeout: float = 15) -> Received:
        return self.got.get(timeout=timeout)


@contextmanager
def receiver() -> Iterator[Receiver]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            got.got.put(Received(self.path, headers, body, time.monotonic()))
            self.send_response(got.answer(self.path))
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got = Receiver(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Hostile:
    """What one connection to a hostile receiver came to: the bytes of its answer the sender
    took, and how long the sender kept the connection open (None: not closed yet)."""

    sent: int = 0
    held: float | None = None


@contextmanager
def hostile(head: bytes, body: bytes, times: int, pause: float) -> Iterator[tuple[str, Hostile]]:
    """A receiver on 127.0.0.1 that reads one request, then answers ``head`` and ``body``
    ``times`` times, ``pause`` seconds apart, until the sender closes the connection: an endless
    answer, or one dripped a byte at a time."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen = Hostile()

    def serve() -> None:
        conn, _ = listener.accept()
        started = time.monotonic()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            try:
                conn.sendall(head)
                for _ in range(times):
                    conn.sendall(body)
                    seen.sent += len(body)
                    time.sleep(pause)
            except OSError:
                pass  # the sender closed the connection
            seen.held = time.monotonic() - started

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        listener.close()
