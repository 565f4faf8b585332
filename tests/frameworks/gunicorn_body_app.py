"""A WSGI app for ``test_gunicorn_body.py``: the same body yielded to gunicorn (``/plain``) or
written past it with :class:`BodyWriter` between two yielded items (``/direct``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from service.frameworks.gunicorn_body import body_writer

#: Parts written past gunicorn: small ones, and one larger than any socket buffer, which a
#: non-blocking write cannot send whole while the client does not read.
PARTS = [b"one\n", b"two two\n", bytes(range(256)) * 64, b"x" * (24 << 20), b"three\n"]


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
    path = environ["PATH_INFO"]
    start_response("200 OK", [("Content-Type", "application/octet-stream")])
    if path == "/healthz":
        return iter([b"ok"])
    return body(environ) if path == "/direct" else plain()


def plain() -> Iterator[bytes]:
    yield b"writer\n"
    yield from PARTS
    yield b"last\n"


def body(environ: dict[str, Any]) -> Iterator[bytes]:
    writer = body_writer(environ)
    if writer is None:
        yield b"no writer\n"  # a body gunicorn's /plain never has
        return
    yield b"writer\n" if not writer.ready else b"ready before the headers\n"
    if not writer.ready:
        yield b"not ready after the headers\n"
        return
    held_back = 0
    for part in PARTS:
        rest = writer.send(part)
        held_back += len(rest)
        writer.finish(rest)
    yield b""  # an empty item writes nothing
    yield b"last\n" if held_back else b"the socket took all\n"
