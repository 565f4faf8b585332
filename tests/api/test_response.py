"""The app's response class hands the server exactly the headers werkzeug's own would."""

from __future__ import annotations

import flask
import pytest
from flask import Flask, Response
from flask.globals import request_ctx
from flask.testing import FlaskClient
from werkzeug.datastructures import Headers
from werkzeug.test import EnvironBuilder

from service.api.app import NoSessions
from service.api.response import ApiResponse, header_value

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
