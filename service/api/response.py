"""The app's response class (Flask's ``response_class``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Response
from werkzeug.datastructures import Headers

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

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
