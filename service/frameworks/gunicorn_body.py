"""gunicorn's gevent worker: a streamed body written to its socket from outside the body.

gunicorn writes what a WSGI body yields, one blocking ``sendall`` per item, so each reader of a
stream is a greenlet woken to yield each message. A game's feed can instead write a new message
to all of its readers' sockets in one pass (``service.api.gamelog``), and wake a reader only
when it has something of its own to do. gunicorn has no public handle on a request's socket:
its ``start_response`` is a bound method of its ``Response``, which holds the socket and the
framing it chose. :func:`capture` keeps that ``Response`` in the environ, and
:class:`BodyWriter` writes as ``Response.write`` does (the same chunk framing, the byte count
its access log reports) without waiting: what the socket does not take now is handed back, for
the reader's own greenlet to send (:meth:`BodyWriter.finish`) before anything else is written.

Only where the socket is non-blocking at the OS level (gevent's) is there a writer: a sync or
gthread worker's blocking socket would stall the writer's whole pass on one slow reader.
``tests/frameworks/test_gunicorn_body.py`` holds the bytes on the wire to gunicorn's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn.http.wsgi import Response as GunicornResponse

#: Where :func:`capture` leaves gunicorn's Response for :func:`body_writer`.
ENVIRON_KEY = "mexican_train.gunicorn_response"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def capture(app: WsgiApp) -> WsgiApp:
    """``app``, with gunicorn's Response of each request kept in its environ."""

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        found = getattr(start_response, "__self__", None)
        # That class exactly: a subclass frames the body its own way (HTTP/2's, for one).
        if type(found) is GunicornResponse:
            environ[ENVIRON_KEY] = found
        return app(environ, start_response)

    return wsgi


def body_writer(environ: dict[str, Any]) -> BodyWriter | None:
    """A writer for this request's body, or None where there is none to be had (another server,
    a response that frames its body otherwise, such as HTTP/2's, a blocking socket, an answer
    without a body)."""
    resp = environ.get(ENVIRON_KEY)
    if (
        resp is None
        or type(resp) is not GunicornResponse
        or environ.get("REQUEST_METHOD") == "HEAD"
    ):
        return None  # gunicorn drops a HEAD answer's body; written past it, it would go out
    try:
        fd = resp.sock.fileno()
        if os.get_blocking(fd):
            return None
    except (OSError, AttributeError):
        return None
    return BodyWriter(resp, fd)


class BodyWriter:
    """Writes body bytes of one gunicorn response past its ``write``, once its headers are out."""

    def __init__(self, resp: GunicornResponse, fd: int) -> None:
        self._resp = resp
        self._fd = fd

    @property
    def ready(self) -> bool:
        """Whether gunicorn sent the headers of a body of no declared length (a stream)."""
        return bool(self._resp.headers_sent) and self._resp.response_length is None

    @property
    def chunked(self) -> bool:
        return bool(self._resp.chunked)

    def framed(self, data: bytes) -> bytes:
        """``data`` as ``Response.write`` puts it on the wire: one chunk, or as it is."""
        return b"%X\r\n%s\r\n" % (len(data), data) if self._resp.chunked else data

    def send(self, data: bytes, framed: bytes | None = None) -> bytes:
        """Write ``data`` as ``Response.write`` would, without waiting: the framed bytes the
        socket did not take (empty when it took them all). ``framed``: ``framed(data)``, made
        once for many writers. Raises OSError when the peer is gone."""
        if not data:
            return b""
        if framed is None:
            framed = self.framed(data)
        self._resp.sent += len(data)
        try:
            taken = os.write(self._fd, framed)
        except BlockingIOError:
            taken = 0
        return framed[taken:]

    def finish(self, rest: bytes) -> None:
        """Send what :meth:`send` handed back, waiting as gunicorn's own write does."""
        if rest:
            self._resp.sock.sendall(rest)
