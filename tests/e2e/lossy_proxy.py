"""An HTTP proxy on loopback that loses answers: it forwards every request to the real stack
and, for the requests ``lose`` picks, hangs up instead of answering (the change is applied, the
client never hears of it: the case Idempotency-Key exists for). Streams pass through as they
come, chunk by chunk, so a client can follow a game through it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass
class Seen:
    """What went through: each mutating request's (method, path, Idempotency-Key), and those
    whose answers were lost."""

    sent: list[tuple[str, str, str | None]] = field(default_factory=list)
    lost: list[tuple[str, str, str | None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def lossy_proxy(upstream: str, lose: Callable[[str, str, int], bool]) -> Iterator[tuple[str, Seen]]:
    """``lose(method, path, n)``: whether to lose the answer of the ``n``-th (from 0) mutating
    request with that method and path."""
    seen = Seen()
    counts: dict[tuple[str, str], int] = {}
    session = requests.Session()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            lost = False
            if self.command != "GET":
                path = self.path.split("?", 1)[0]
                request = (self.command, path, self.headers.get("Idempotency-Key"))
                with seen.lock:
                    n = counts.get(request[:2], 0)
                    counts[request[:2]] = n + 1
                    seen.sent.append(request)
                    lost = lose(self.command, path, n)
                    if lost:
                        seen.lost.append(request)
            upstream_answer = session.request(
                self.command, upstream + self.path, headers=headers, data=body, stream=True
            )
            with upstream_answer:
                if lost:
                    upstream_answer.content  # noqa: B018 - applied; the answer is read, not sent
                    self.close_connection = True
                    return
                self.send_response(upstream_answer.status_code)
                for k, v in upstream_answer.headers.items():
                    if k.lower() not in _HOP:
                        self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in upstream_answer.raw.stream(65536, decode_content=False):
                        if chunk:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (OSError, requests.RequestException):
                    self.close_connection = True  # either side went away: so does this one

        do_GET = do_POST = do_PUT = do_DELETE = _forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        session.close()
