"""Every Flask and werkzeug shortcut of ``service/frameworks/flask_app.py`` answers as the
framework does: the response class's WSGI headers, the shared null session, the JSON media type
rule, and the coroutine check of ``ensure_sync``."""

from __future__ import annotations

import functools
import gc
import inspect
import types
from collections.abc import Callable
from typing import Any

import flask
import pytest
from flask import Flask, Request, Response
from flask.globals import request_ctx
from flask.testing import FlaskClient
from werkzeug.datastructures import Headers
from werkzeug.test import EnvironBuilder

from service.frameworks.flask_app import (
    ApiResponse,
    CoroutineCheck,
    NoSessions,
    header_value,
    is_json_type,
)

ENVIRON = EnvironBuilder(path="/api/v1/games/g1/moves", method="POST").get_environ()

CASES = [
    (200, b'{"a":1}', {}),
    (200, b'{"a":1}', {"ETag": '"7"', "Vary": "Authorization", "X-Request-ID": "r1"}),
    (201, b'{"game_id":"x"}', {"Location": "/api/v1/games/x"}),
    (200, b"{}", {"Content-Location": "/api/v1/games/ü"}),
    (204, b"", {"ETag": '"3"'}),
    (304, b"", {"ETag": '"3"', "Content-Type": "application/json"}),
    (404, b'{"code":"game_not_found"}', {}),
    (503, b"{}", {"Retry-After": "1"}),
]


@pytest.mark.parametrize(("status", "body", "extra"), CASES)
def test_wsgi_headers_match_werkzeug(status: int, body: bytes, extra: dict[str, str]) -> None:
    ours = ApiResponse(body, status=status, mimetype="application/json", headers=extra)
    theirs = Response(body, status=status, mimetype="application/json", headers=extra)
    assert ours.get_wsgi_response(ENVIRON)[1:] == theirs.get_wsgi_response(ENVIRON)[1:]


def test_a_streamed_body_keeps_werkzeug_path() -> None:
    """No Content-Length yet: werkzeug's own path, which may count it."""
    ours = ApiResponse([b"a", b"bc"], mimetype="application/json")
    theirs = Response([b"a", b"bc"], mimetype="application/json")
    assert ours.get_wsgi_response(ENVIRON)[1:] == theirs.get_wsgi_response(ENVIRON)[1:]
    assert ("Content-Length", "3") in ours.get_wsgi_response(ENVIRON)[2]


def test_header_value_finds_any_case() -> None:
    headers = Headers([("Content-Type", "a"), ("VARY", "Accept")])
    assert header_value(headers, "vary") == "Accept"
    assert header_value(headers, "etag") is None


def test_requests_share_one_null_session(app: Flask, client: FlaskClient) -> None:
    """No cookie session is made, kept or sent: the API authenticates by bearer token."""
    with app.test_request_context("/api/v1/games"):
        assert request_ctx.session is NoSessions.null
        with pytest.raises(RuntimeError):
            flask.session["seat"] = 1
    r = client.post("/api/v1/games", json={"players": ["a", "b"]})
    assert r.status_code == 201
    assert "Set-Cookie" not in r.headers
    assert "cookie" not in r.headers.get("Vary", "").lower()


# is_json_type: werkzeug's Request.is_json on the same Content-Type.
CONTENT_TYPES = [
    "",
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON",
    "  application/json  ;q=1",
    "application/problem+json",
    "application/vnd.api+json; version=2",
    "application/merge-patch+JSON",
    "application/jsonx",
    "application/x-json",
    "text/json",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/+json",
    "application/json+x",
    "json",
    ";application/json",
    "application/x-www-form-urlencoded",
]


@pytest.mark.parametrize("content_type", CONTENT_TYPES)
def test_is_json_type_answers_as_werkzeug(content_type: str) -> None:
    werkzeug = Request.from_values(content_type=content_type).is_json
    assert is_json_type(content_type) == werkzeug


# CoroutineCheck: Flask.ensure_sync's own answer for every kind of callable.


def _plain() -> None:
    return None


async def _coroutine() -> None:
    return None


class _Holder:
    def method(self) -> None:
        return None

    async def coroutine_method(self) -> None:
        return None

    def __call__(self) -> None:
        return None


class _Slotted:
    __slots__ = ()

    def __call__(self) -> None:
        return None


def _callables() -> list[Any]:
    holder = _Holder()
    twin = types.FunctionType(_plain.__code__, globals(), "twin")  # same code object
    found: list[Any] = [
        _plain,
        _coroutine,
        holder.method,
        holder.coroutine_method,
        _Holder().method,  # another instance: another bound method, same function
        holder,
        _Slotted(),  # cannot be weakly referenced
        functools.partial(_plain),
        functools.partial(_coroutine),
        lambda: None,
        twin,
    ]
    mark = getattr(inspect, "markcoroutinefunction", None)
    if mark is not None:  # Python 3.12+: a marked function of the same code as an unmarked one
        found.append(mark(types.FunctionType(_plain.__code__, globals(), "marked")))
    return found


def _flask_answer(app: Flask, func: Any, ensure: Callable[[Any], Any]) -> str:
    try:
        return "as is" if ensure(func) is func else "wrapped"
    except RuntimeError:  # async views need Flask's async extra, not installed here
        return "async"


def test_the_coroutine_check_answers_as_flask(app: Flask) -> None:
    stock = Flask(__name__)
    for _ in range(2):  # the second round answers from what the first remembered
        for func in _callables():
            mine = _flask_answer(app, func, app.ensure_sync)
            theirs = _flask_answer(stock, func, stock.ensure_sync)
            assert mine == theirs, func


def test_the_coroutine_check_forgets_functions_made_per_request() -> None:
    check = CoroutineCheck()
    for _ in range(100):
        assert check(lambda: None) is False
    gc.collect()
    assert len(check._known) < 100


def test_a_function_marked_as_a_coroutine_is_told_from_its_unmarked_twin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python 3.12's ``inspect.markcoroutinefunction`` marks a function object, not its code:
    two functions of one code object can then answer differently. Played here on any Python
    by an ``iscoroutinefunction`` that honours such a mark, for the check and for Flask."""
    original = inspect.iscoroutinefunction

    def honours_marks(func: Any) -> bool:
        return bool(getattr(func, "_marked", False)) or original(func)

    monkeypatch.setattr(inspect, "iscoroutinefunction", honours_marks)
    monkeypatch.setattr(flask.app, "iscoroutinefunction", honours_marks)
    plain = types.FunctionType(_plain.__code__, globals(), "plain")
    marked = types.FunctionType(_plain.__code__, globals(), "marked")
    marked._marked = True  # type: ignore[attr-defined]
    check = CoroutineCheck()
    assert [check(plain), check(marked)] == [False, True]
    stock = Flask(__name__)
    assert _flask_answer(stock, marked, stock.ensure_sync) == "async"
