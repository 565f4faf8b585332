"""OpenAPI helpers: shared problem responses and request headers, documented once."""

from __future__ import annotations

import http
from collections.abc import Callable
from typing import Any, TypeVar

from flask_smorest import Blueprint

F = TypeVar("F", bound=Callable[..., Any])

# Reusable header parameters (registered in the spec by create_app).
HEADER_PARAMETERS: dict[str, dict[str, Any]] = {
    "IfMatch": {
        "name": "If-Match",
        "in": "header",
        "required": False,
        "description": 'Act only if the game is still at this version, e.g. `"7"`; else 412.',
        "schema": {"type": "string"},
    },
    "IfNoneMatch": {
        "name": "If-None-Match",
        "in": "header",
        "required": False,
        "description": "Answer 304 Not Modified if the game is still at this version.",
        "schema": {"type": "string"},
    },
    "IdempotencyKey": {
        "name": "Idempotency-Key",
        "in": "header",
        "required": False,
        "description": (
            'RFC 8941 string (`"f3a9c0"`; a bare token is accepted). A retry with the same key '
            "and token returns the first response (kept 24 h) and applies nothing."
        ),
        "schema": {"type": "string"},
    },
}

ETAG_HEADER = {
    "ETag": {"description": 'The game version, e.g. `"7"`', "schema": {"type": "string"}}
}
SEAT_OR_HOST: list[dict[str, list[str]]] = [{"bearer": []}]
OPTIONAL_TOKEN: list[dict[str, list[str]]] = [{}, {"bearer": []}]


def problems(blp: Blueprint, *codes: int) -> Callable[[F], F]:
    """Document each status as an ``application/problem+json`` response."""

    def decorate(func: F) -> F:
        for code in reversed(codes):
            func = blp.alt_response(code, response=http.HTTPStatus(code).name)(func)
        return func

    return decorate
