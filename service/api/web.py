"""HTTP plumbing shared by the views: JSON responses and bearer tokens."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response, request

from service.frameworks.flask_app import ApiResponse

from .caching import TOKEN_QUERY
from .codes import Problem
from .etag import set_etag
from .problems import ApiError

JSON_MIMETYPE = "application/json"
MAX_TOKEN_LENGTH = 512
UNAUTHORIZED_HEADERS = {"WWW-Authenticate": 'Bearer realm="mexican-train"'}


def missing_token(detail: str) -> ApiError:
    """401 for a request that needs a bearer token and sent none (with its challenge)."""
    return ApiError(Problem.MISSING_TOKEN, detail, headers=UNAUTHORIZED_HEADERS)


def json_response(
    body: Any,
    status: int = 200,
    *,
    version: int | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """orjson-encoded response (bytes pass through); a strong ETag from the game version."""
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    resp = ApiResponse(data, status=status, mimetype=JSON_MIMETYPE)
    if version is not None:
        set_etag(resp, version)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def bearer_token(*, query: bool = False) -> str | None:
    """The token of ``Authorization: Bearer <token>`` (or, with ``query``, of the
    ``access_token`` parameter); another scheme is a 401."""
    header = request.headers.get("Authorization")
    if header is None:
        if query and TOKEN_QUERY in request.args:
            return _checked(request.args[TOKEN_QUERY])  # an empty one too: a wrong token
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        token = ""
    return _checked(token.strip())


def _checked(token: str) -> str:
    if not token or len(token) > MAX_TOKEN_LENGTH:
        raise ApiError(
            Problem.INVALID_TOKEN,
            "Send the token as 'Authorization: Bearer <token>'.",
            headers=UNAUTHORIZED_HEADERS,
        )
    return token
