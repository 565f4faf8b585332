"""A WSGI app for ``test_gunicorn_logs.py`` that fails on ``/fail`` before its answer's head is
sent: the error escapes to gunicorn, which logs ``Error handling request <method> <target>``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterator[bytes]:
    if environ["PATH_INFO"] == "/fail":
        raise RuntimeError("an error no handler of the app caught")
    start_response("200 OK", [("Content-Type", "text/plain")])
    return iter([b"ok"])
