"""``service/frameworks/gunicorn_errors.py``: a request gunicorn refuses itself is answered as
gunicorn answers it (status line, ``Connection: close``, a body of the length it says) but with
a problem body; both pools of the service install it (``deploy/gunicorn.conf.py``)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import gunicorn.util
import pytest

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from service.api.codes import Problem
from service.api.problems import TYPE_BASE
from service.frameworks.gunicorn_errors import CODES, FALLBACK_CODES, write_problem

#: What gunicorn's workers pass to ``write_error`` (status, reason, message).
REFUSALS = [
    (400, "Bad Request", "Invalid HTTP Header: 'a\\x7fb'"),
    (414, "URI Too Long", "limit request line"),
    (431, "Request Header Fields Too Large", "Error parsing headers"),
    (500, "Internal Server Error", ""),
]


def written(write: object, status: int, reason: str, mesg: str) -> tuple[list[bytes], bytes]:
    """The answer ``write`` puts on a socket: its head's lines and its body."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        write(ours, status, reason, mesg)  # type: ignore[operator]
        ours.shutdown(socket.SHUT_WR)
        out = b""
        while chunk := theirs.recv(65536):
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    return head.split(b"\r\n"), body


@pytest.mark.parametrize(("status", "reason", "mesg"), REFUSALS)
def test_a_refusal_is_gunicorns_answer_with_a_problem_body(
    status: int, reason: str, mesg: str
) -> None:
    theirs, their_body = written(gunicorn.util.write_error, status, reason, mesg)
    ours, body = written(write_problem, status, reason, mesg)
    assert b"<html>" in their_body  # what is replaced
    assert ours[0] == theirs[0] and b"Connection: close" in ours
    headers = dict(line.split(b": ", 1) for line in ours[1:])
    assert headers[b"Content-Type"] == b"application/problem+json"
    assert headers[b"X-Content-Type-Options"] == b"nosniff"
    assert int(headers[b"Content-Length"]) == len(body)
    problem = json.loads(body)
    assert (problem["status"], problem["title"]) == (status, reason)
    assert problem["type"] == TYPE_BASE + problem["code"]  # the app's own type URNs
    assert "x7f" not in problem["detail"]  # the request is not echoed


def test_an_unknown_transfer_coding_is_a_400_as_through_nginx() -> None:
    """gunicorn's 501 for it has no code of the vocabulary; nginx answers it 400 too."""
    ours, body = written(write_problem, 501, "Bad Request", "Unsupported transfer coding")
    assert ours[0] == b"HTTP/1.1 400 Bad Request" and b"Connection: close" in ours
    problem = json.loads(body)
    assert (problem["status"], problem["code"]) == (400, "malformed_request")
    assert Problem(problem["code"]).status == problem["status"]


def test_every_code_is_one_the_service_answers_with() -> None:
    codes = {p.value for p in Problem}
    assert set(CODES.values()) | set(FALLBACK_CODES) <= codes
    assert all(Problem(code).status == status for status, code in CODES.items() if status != 417)


@pytest.fixture(scope="module", params=["api", "streams"])
def pool(request: pytest.FixtureRequest, redis_server: RedisServer) -> Iterator[Gunicorn]:
    with Gunicorn(redis_server.url, workers=1, pool=request.param) as server:
        yield server


#: Requests gunicorn refuses before the app sees them (docs/api.md §13, straight at gunicorn),
#: and the status and code each is answered with.
LONG = b"a" * 8200  # past gunicorn's 8190-byte limits of a request line and a header line
RAW_REFUSALS = [
    (b"GET /api/v1/bots HTTP/1.1\r\nHost: x\r\nIf-Match: a\x7fb\r\n\r\n", 400, "malformed_request"),
    (b"GET /" + LONG + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: " + LONG + b"\r\n\r\n", 431, "headers_too_large"),
    # A transfer coding gunicorn does not know (its 501): 400, as the nginx of deploy/ answers it.
    (b"POST /api/v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n", 400,
     "malformed_request"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "status", "code"), RAW_REFUSALS)
def test_gunicorns_own_refusals_are_problems_from_either_pool(
    pool: Gunicorn, raw: bytes, status: int, code: str
) -> None:
    with socket.create_connection(("127.0.0.1", pool.port), timeout=30) as sock:
        sock.sendall(raw)
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), head
    assert b"Content-Type: application/problem+json" in head
    assert json.loads(body)["code"] == code
