"""gunicorn's own refusals as RFC 9457 problems, like every other error of the service.

A request gunicorn cannot parse (a control byte in a header value, a broken chunk, a bad
proxy line) never reaches the app: gunicorn answers it itself with an HTML page, written by
``gunicorn.util.write_error``, which its workers call by that name. :func:`install` replaces
that one function with :func:`write_problem`, which writes the same status line and
``Connection: close`` with a problem body whose ``code`` a client can branch on (and
``nosniff``, as every answer of the service). One status is not gunicorn's: its 501 for a
transfer coding it does not know is a 400 ``malformed_request``, as the nginx of ``deploy/``
answers every transfer coding other than chunked (the vocabulary has no 501 code).
``tests/frameworks/test_gunicorn_errors.py`` holds the answer to gunicorn's own but for the
body, and a real gunicorn to it.
"""

from __future__ import annotations

import json
import socket

import gunicorn.util

#: A problem's ``code`` for each status gunicorn answers with (the app's codes for them).
CODES = {
    400: "malformed_request",
    403: "forbidden",
    414: "uri_too_long",
    417: "malformed_request",
    431: "headers_too_large",
    500: "internal_error",
}
#: The code of a status not listed: a request gunicorn could not take, or its own failure.
FALLBACK_CODES = ("malformed_request", "internal_error")
#: gunicorn's statuses answered as another: its 501 (``Unsupported transfer coding``, the
#: reason it gives "Bad Request") is the client's unreadable request, 400 as through nginx.
RESTATED = {501: (400, "Bad Request")}
TYPE_BASE = "urn:mexican-train:problem:"


def problem_body(status: int, reason: str) -> bytes:
    """The problem for gunicorn's refusal; its message (which may echo the request) is left out."""
    code = CODES.get(status, FALLBACK_CODES[status >= 500])
    detail = "The server could not read the request as HTTP." if status < 500 else reason
    body = {"type": TYPE_BASE + code, "title": reason, "status": status, "detail": detail}
    return json.dumps({**body, "code": code}).encode()


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """``gunicorn.util.write_error``'s answer with a problem body."""
    status_int, reason = RESTATED.get(status_int, (status_int, reason))
    body = problem_body(status_int, reason)
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    gunicorn.util.write_nonblock(sock, head.encode("latin-1") + body)


def install() -> None:
    """Make gunicorn's workers answer their refusals with :func:`write_problem`."""
    gunicorn.util.write_error = write_problem
