"""A real HTTP proxy in front of the live server that injects the faults retries must survive.

No mocks: requests really reach gunicorn through a loopback socket. ``drop_after_forward`` makes
the proxy forward a request and then hang up without answering (a lost response, the case
idempotency keys exist for); ``503`` and ``429`` answer that status itself without forwarding,
with a problem body, ``502html`` (``504html``) with the HTML page a proxy of its own (nginx's
default) answers when no upstream did (in time), and ``200html`` with a captive portal's page,
status 200.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
#: nginx's own answer when no upstream answered, as a proxy without error pages of its own sends it.
NGINX_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)
#: nginx's own answer when its upstream did not answer in time.
NGINX_504 = NGINX_502.replace(b"502 Bad Gateway", b"504 Gateway Time-out")
#: A captive portal's (or a misrouted proxy's) page, answered 200 to whatever was asked.
PORTAL_PAGE = b"<html><body><h1>Sign in to the network</h1></body></html>\r\n"
#: The actions that answer an HTML page of the proxy's own: their status and page.
PAGES = {
    "502html": (502, NGINX_502),
    "504html": (504, NGINX_504),
    "200html": (200, PORTAL_PAGE),
}


@dataclass
class Faults:
    """What to do to the next mutating requests (each list is consumed front first)."""

    # "drop", "503", "429", "502html", "504html", "200html", "pass"
    plan: list[str] = field(default_factory=list)
    retry_after: str = "0"
    #: The ``Date`` of the proxy's answers (an HTTP date), for a proxy whose clock is off.
    date: str | None = None
    seen_keys: list[str | None] = field(default_factory=list)
    forwarded: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def faulty_proxy(upstream: str) -> Iterator[tuple[str, Faults]]:
    faults = Faults()
    session = requests.Session()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def date_time_string(self, timestamp: float | None = None) -> str:
            return faults.date or super().date_time_string(timestamp)

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            action = "pass"
            if self.command != "GET":
                with faults.lock:
                    faults.seen_keys.append(self.headers.get("Idempotency-Key"))
                    if faults.plan:
                        action = faults.plan.pop(0)
            if action in ("503", "429"):
                # A problem as the service's nginx answers it (complete, with its code: the
                # suite checks it).
                code = b"unavailable" if action == "503" else b"rate_limited"
                payload = (
                    b'{"type":"about:blank","title":"injected","status":%s,'
                    b'"detail":"injected by the test proxy","code":"%s"}' % (action.encode(), code)
                )
                self.send_response(int(action))
                self.send_header("Content-Type", "application/problem+json")
                self.send_header("Retry-After", faults.retry_after)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            if action in PAGES:
                status, page = PAGES[action]
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            resp = session.request(self.command, upstream + self.path, headers=headers, data=body)
            with faults.lock:
                faults.forwarded += 1
            if action == "drop":
                # The server applied the request; the client never hears about it.
                self.close_connection = True
                return
            self.send_response(resp.status_code)
            for k, v in resp.headers.items():
                if k.lower() not in _HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(resp.content)))
            self.end_headers()
            self.wfile.write(resp.content)

        do_GET = do_POST = do_PUT = do_DELETE = _forward

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", faults
    finally:
        server.shutdown()
        server.server_close()
        session.close()
