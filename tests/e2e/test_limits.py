"""Abuse and size limits through the real nginx (deploy/nginx.conf) in front of two instances:
nginx's limit_req per address, the app's per-address create limit on the real client address
(X-Forwarded-For through ProxyFix), and oversized requests, each answered with a problem body."""

from __future__ import annotations

import re
import socket
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from requests.adapters import HTTPAdapter

from devstack.stack import Stack, build_stack
from tests.e2e.nginx import ensure_nginx

pytestmark = pytest.mark.e2e

APP_CREATE_LIMIT = 5
APP_TOKEN_LIMIT = 4
CREATE = "/api/v1/games"
BODY = {"players": ["ann", "bo"]}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    ensure_nginx()
    env = {
        "RATE_LIMIT_CREATE_PER_MINUTE": str(APP_CREATE_LIMIT),
        "RATE_LIMIT_PER_MINUTE": str(APP_TOKEN_LIMIT),
    }
    with build_stack(tmp_path_factory.mktemp("limits"), env) as built:
        yield built


class FromAddress(HTTPAdapter):
    """Connect from another loopback address (all of 127/8 is local): another client to nginx."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


def session_from(source: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", FromAddress(source))
    return session


def assert_problem(r: requests.Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text[:200]
    assert r.headers["Content-Type"] == "application/problem+json"
    assert "<html" not in r.text.lower()
    body: dict[str, Any] = r.json()
    assert (body["status"], body["code"]) == (status, code)
    assert body["type"] == f"urn:mexican-train:problem:{code}"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    return body


def test_nginx_limits_game_creation_per_address(limited: Stack) -> None:
    with session_from("127.0.0.2") as s:
        answers = [s.post(limited.url + CREATE, json=BODY, timeout=10) for _ in range(30)]
    by_status = Counter(r.status_code for r in answers)
    # burst 10 + 1/s pass nginx; of those the app's own limit (5/min) passes 5.
    assert by_status[201] == APP_CREATE_LIMIT, by_status
    refused = [r for r in answers if r.status_code != 201]
    nginx_refused = [r for r in refused if "this address; slow down" in r.text]
    app_refused = [r for r in refused if r not in nginx_refused]
    assert len(nginx_refused) >= 15 and app_refused, by_status
    for r in refused:
        assert_problem(r, 429, "rate_limited")
        assert int(r.headers["Retry-After"]) >= 1
    for r in app_refused:
        assert "create requests a minute from this address" in r.json()["detail"]


def test_nginx_limits_player_creation_per_address(limited: Stack) -> None:
    """A player never expires, so nginx holds its creation to the creations' rate too."""
    with session_from("127.0.0.7") as s:
        answers = [
            s.post(limited.url + "/api/v1/players", json={"name": "ann"}, timeout=10)
            for _ in range(30)
        ]
    by_status = Counter(r.status_code for r in answers)
    assert by_status[201] == APP_CREATE_LIMIT, by_status
    nginx_refused = [r for r in answers if "this address; slow down" in r.text]
    assert len(nginx_refused) >= 15, by_status
    for r in answers[APP_CREATE_LIMIT:]:
        assert_problem(r, 429, "rate_limited")


def test_app_counts_the_real_client_address_behind_nginx(limited: Stack) -> None:
    """Two clients behind the same nginx have their own allowance at the app (ProxyFix)."""
    for source in ("127.0.0.3", "127.0.0.4"):
        with session_from(source) as s:
            statuses = [
                s.post(limited.url + CREATE, json=BODY, timeout=10).status_code
                for _ in range(APP_CREATE_LIMIT + 1)
            ]
        assert statuses == [201] * APP_CREATE_LIMIT + [429], (source, statuses)


def quota_left(r: requests.Response, policy: str, limit: int) -> tuple[int, int]:
    """``RateLimit-Policy`` and ``RateLimit`` of one policy (the IETF draft's syntax): what is
    left of the quota and the seconds until the window ends."""
    assert r.headers["RateLimit-Policy"] == f'"{policy}";q={limit};w=60', r.headers
    found = re.fullmatch(rf'"{policy}";r=(\d+);t=(\d+)', r.headers["RateLimit"])
    assert found, r.headers["RateLimit"]
    return int(found[1]), int(found[2])


def test_answers_under_a_limit_say_where_it_stands(limited: Stack) -> None:
    """Through nginx, to both instances: a seat's requests count against its token's quota on
    the game, each answer says what is left, and the one past it is a 429 with Retry-After and
    the policy in its body; the create answer tells its own (per address) quota."""
    with session_from("127.0.0.6") as s:
        created = s.post(limited.url + CREATE, json=BODY, timeout=10)
        assert created.status_code == 201
        assert quota_left(created, "create", APP_CREATE_LIMIT)[0] == APP_CREATE_LIMIT - 1
        token = created.json()["seats"][0]["token"]
        url = f"{limited.url}{CREATE}/{created.json()['game_id']}"
        views = [
            s.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
            for _ in range(APP_TOKEN_LIMIT + 1)
        ]
    assert [r.status_code for r in views] == [200] * APP_TOKEN_LIMIT + [429]
    left = [quota_left(r, "token", APP_TOKEN_LIMIT) for r in views]
    assert [remaining for remaining, _ in left] == [3, 2, 1, 0, 0]
    assert all(0 < reset <= 60 for _, reset in left)
    refused = assert_problem(views[-1], 429, "rate_limited")
    retry_after = int(views[-1].headers["Retry-After"])
    assert refused["ratelimit"] == {
        "policy": {"name": "token", "quota": APP_TOKEN_LIMIT, "window": 60},
        "retry_after": retry_after,
    }
    assert 0 < retry_after <= left[-1][1] + 1


#: Requests sent at once from one address, each on its own connection: they reach nginx within
#: milliseconds, far past its burst of 100, however slowly a loaded machine answers them (one
#: request after another, a client never outran 50 a second there).
AT_ONCE = 250


def test_nginx_limits_all_requests_per_address(limited: Stack) -> None:
    """Over 50 requests a second (burst 100) from one address: the excess gets 429 problems."""
    request = (
        b"GET /api/v1/games/abcdefgh1234 HTTP/1.1\r\nHost: localhost\r\n"
        b"Accept: application/json\r\nConnection: close\r\n\r\n"
    )
    sockets = []
    try:
        for _ in range(AT_ONCE):
            sock = socket.create_connection(
                ("127.0.0.1", limited.nginx.port), timeout=30, source_address=("127.0.0.5", 0)
            )
            sockets.append(sock)
            sock.sendall(request)
        statuses = Counter(_status_of(sock) for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()
    assert statuses[404] >= 100 and statuses[429] > 0, statuses
    assert set(statuses) == {404, 429}, statuses


def _status_of(sock: socket.socket) -> int:
    """The status of the one answer a ``Connection: close`` request gets."""
    answer = b""
    while b"\r\n" not in answer and (chunk := sock.recv(4096)):
        answer += chunk
    return int(answer.split(b" ", 2)[1])


def raw(stack: Stack, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send bytes as they are (requests would refuse to send some of these)."""
    with socket.create_connection(("127.0.0.1", stack.nginx.port), timeout=10) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in header_lines)
    return int(status_line.split()[1]), headers, body


@pytest.mark.parametrize(
    ("what", "request_bytes", "status", "code"),
    [
        ("long URL", b"GET /" + b"a" * 4200 + b" HTTP/1.1\r\nHost: x\r\n", 414, "uri_too_long"),
        (
            "long header",
            b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 4200 + b"\r\n",
            431,
            "headers_too_large",
        ),
        (
            "many headers",
            b"GET / HTTP/1.1\r\nHost: x\r\n"
            + b"".join(b"X-H%d: %s\r\n" % (i, b"c" * 3500) for i in range(6)),
            431,
            "headers_too_large",
        ),
        ("not HTTP", b"HELLO THERE\r\n", 400, "malformed_request"),
        # nginx's own pages for these are HTML (505, 501); gunicorn answers both with a 400.
        (
            "HTTP/2.0 request line",
            b"GET /healthz HTTP/2.0\r\nHost: x\r\n",
            400,
            "malformed_request",
        ),
        (
            "a transfer coding other than chunked",
            b"POST /api/v1/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n",
            400,
            "malformed_request",
        ),
        ("TRACE", b"TRACE /api/v1/bots HTTP/1.1\r\nHost: x\r\n", 405, "method_not_allowed"),
        (
            "a control byte in a header (gunicorn refuses it)",
            b"GET /api/v1/bots HTTP/1.1\r\nHost: x\r\nIf-Match: a\x7fb\r\n",
            400,
            "malformed_request",
        ),
        (
            "large body",
            b"POST /api/v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000000\r\n",
            413,
            "body_too_large",
        ),
    ],
)
def test_oversized_or_broken_requests_get_problem_bodies_from_nginx(
    stack: Stack, what: str, request_bytes: bytes, status: int, code: str
) -> None:
    got, headers, body = raw(stack, request_bytes + b"Connection: close\r\n\r\n")
    assert got == status, (what, body[:200])
    assert headers["Content-Type"] == "application/problem+json", what
    assert b"<html" not in body.lower()
    problem = requests.models.complexjson.loads(body)
    assert (problem["status"], problem["code"]) == (status, code), what
    assert headers.get("X-Request-ID"), what
    assert headers.get("X-Content-Type-Options") == "nosniff", what


@pytest.mark.parametrize(
    ("what", "request_bytes"),
    [
        ("URL just under nginx's limit", b"GET /" + b"a" * 4070 + b" HTTP/1.1\r\nHost: x\r\n"),
        (
            "header just under it",
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 4080 + b"\r\n",
        ),
        ("990 short headers", b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"a:\r\n" * 990),
    ],
)
def test_what_nginx_passes_on_gunicorn_accepts(
    stack: Stack, what: str, request_bytes: bytes
) -> None:
    """Just inside nginx's limits: the app answers, not gunicorn with its HTML page."""
    status, headers, body = raw(stack, request_bytes + b"Connection: close\r\n\r\n")
    assert b"<html" not in body.lower(), (what, status, body[:200])
    assert status in (200, 404), (what, status)
    assert headers["Content-Type"] in ("application/json", "application/problem+json"), what
