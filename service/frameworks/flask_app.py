"""The service's shortcuts past Flask's and werkzeug's per-request work, each held to the
framework's own answer by ``tests/frameworks/test_web.py``.

- :class:`NoSessions`: one shared null session instead of a cookie session built per request.
- :class:`CoroutineCheck`: ``Flask.ensure_sync``'s question (is this callable a coroutine
  function?) answered once per function, not on every request.
- :func:`is_json_type`: werkzeug's ``Request.is_json`` rule on the raw ``Content-Type``.
- :class:`ApiResponse`: headers handed to the server uncopied when werkzeug would change
  nothing in them; :func:`header_value`: a header looked up without raising.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flask import Flask, Request, Response
from flask.sessions import NullSession, SessionInterface, SessionMixin
from werkzeug.datastructures import Headers

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment


class NoSessions(SessionInterface):
    """The API keeps no session (its callers send bearer tokens, never cookies). Flask would
    build a cookie session for each request only to find there is no secret key and make a
    null one; every request shares one null session instead, which refuses any write."""

    null = NullSession()

    def open_session(self, app: Flask, request: Request) -> NullSession:
        return self.null

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        return None


class CoroutineCheck:
    """Whether a callable is a coroutine function, as ``inspect.iscoroutinefunction`` (Flask's
    test in ``ensure_sync``) says, remembered per function: Flask asks it for every hook and
    view on every request. Keyed by the function object (a bound method by its function), not
    its code: from Python 3.12 ``inspect.markcoroutinefunction`` marks a function object, so
    two functions of one code object may answer differently. Held weakly: a function made per
    request is forgotten with it. A callable that cannot be weakly referenced is asked afresh."""

    def __init__(self) -> None:
        self._known: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()

    def __call__(self, func: Callable[..., Any]) -> bool:
        target = getattr(func, "__func__", func)
        try:
            known = self._known.get(target)
        except TypeError:  # not weakly referenceable, or not hashable
            return inspect.iscoroutinefunction(func)
        if known is None:
            known = self._known[target] = inspect.iscoroutinefunction(func)
        return known


def is_json_type(content_type: str) -> bool:
    """``application/json`` or ``application/*+json``, parameters ignored (werkzeug's rule)."""
    mimetype = content_type.partition(";")[0].strip().lower()
    return mimetype == "application/json" or (
        mimetype.startswith("application/") and mimetype.endswith("+json")
    )


# Headers werkzeug rewrites on the way out (made absolute, percent-encoded).
_REWRITTEN = frozenset({"location", "content-location"})


class ApiResponse(Response):
    """The app's response: its headers go to the server as they are when werkzeug would change
    nothing in them.

    For every response werkzeug copies the headers (checking each value again) to fix what may
    need it: a Location or Content-Location header, a Content-Length still to count or one a
    204, 1xx or 304 answer must not carry. A JSON answer of this API has its Content-Length and
    usually none of the rest, and the copy cost more than the checks it exists for."""

    def get_wsgi_headers(self, environ: WSGIEnvironment) -> Headers:
        status = self.status_code
        if not 200 <= status < 300 or status == 204:
            return super().get_wsgi_headers(environ)
        counted = False
        for key, _ in self.headers:
            name = key.lower()
            if name in _REWRITTEN:
                return super().get_wsgi_headers(environ)
            counted = counted or name == "content-length"
        return self.headers if counted else super().get_wsgi_headers(environ)


def header_value(headers: Headers, name: str) -> str | None:
    """The first value of header ``name`` (lower case), or None. ``Headers.get`` finds a
    missing header by raising and catching KeyError, dearer than looking."""
    for key, value in headers:
        if key.lower() == name:
            return value
    return None
