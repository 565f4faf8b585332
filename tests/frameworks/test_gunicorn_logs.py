"""``service/frameworks/gunicorn_logs.py``: gunicorn's own log lines that name a request's
target (an error escaping the app, a refused request line) leave its query out, in both pools,
so a token passed as ``access_token`` never reaches the log."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from tests.eventually import eventually

SECRET = "SeatTokenThatMustNotBeLogged"
TARGET = f"/fail?game=g1&access_token={SECRET}&ticket={SECRET}2"


@pytest.fixture(scope="module", params=["api", "streams"])
def logged(
    request: pytest.FixtureRequest,
    redis_server: RedisServer,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Gunicorn, Path]]:
    log = tmp_path_factory.mktemp("gunicorn") / "gunicorn.log"
    app = "tests.frameworks.gunicorn_failing_app:app"
    with Gunicorn(redis_server.url, workers=1, pool=request.param, app=app, log_path=log) as server:
        yield server, log


def send(server: Gunicorn, raw: bytes) -> bytes:
    """What gunicorn answers to ``raw`` (a connection it resets ends the read)."""
    out = b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(raw)
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                out += chunk
    return out


def test_an_error_escaping_the_app_is_logged_without_the_query(
    logged: tuple[Gunicorn, Path],
) -> None:
    server, log = logged
    send(server, f"GET {TARGET} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    eventually(lambda: "Error handling request" in log.read_text(), 20, "no error line")
    text = log.read_text()
    assert "RuntimeError: an error no handler of the app caught" in text
    assert "/fail?[query dropped]" in text
    assert SECRET not in text, text


def test_a_refused_request_line_is_logged_without_the_query(logged: tuple[Gunicorn, Path]) -> None:
    server, log = logged
    answer = send(server, f"GET {TARGET}\x01 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 400 ")
    eventually(lambda: "Invalid HTTP request line" in log.read_text(), 20, "no warning")
    assert SECRET not in log.read_text()


def test_the_access_log_stays_json_for_a_path_that_decodes_to_a_question_mark(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """gunicorn's access log (``ACCESS_LOG``) is one JSON object a line, whose ``path`` is the
    decoded path: a client's ``%3F`` makes a ``?`` there, and the query dropped from it must
    leave the rest of the line (status, bytes, request id) in place."""
    log = tmp_path / "gunicorn.log"
    with Gunicorn(redis_server.url, workers=1, env={"ACCESS_LOG": "-"}, log_path=log) as server:
        target = f"/api/v1/games/nope%3Faccess_token={SECRET}?ticket={SECRET}"
        send(server, f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        eventually(
            lambda: '"remote"' in log.read_text() and "/nope" in log.read_text(),
            20,
            "no access line",
        )
    text = log.read_text()
    (line,) = [
        line for line in text.splitlines() if line.startswith('{"ts": "[') and "/nope" in line
    ]
    entry = json.loads(line)
    assert entry["status"] == 404 and entry["path"].startswith("/api/v1/games/nope?")
    assert SECRET not in text, text
