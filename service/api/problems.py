"""RFC 9457 problem details: the one shape of every error the service returns.

Each problem has a stable ``code`` (clients branch on it) besides ``type``, ``title``,
``status`` and ``detail``; validation failures add ``errors`` (field -> messages).
"""

from __future__ import annotations

import http
import logging
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import marshmallow as ma
import orjson
import redis
from flask import Flask, Response
from werkzeug.exceptions import HTTPException

from service.frameworks.flask_app import ApiResponse
from service.frameworks.smorest import HookedApi, prepare_response
from service.rules.errors import InvalidMove, RulesError

from .codes import BY_STATUS, Problem
from .log_throttle import throttled

PROBLEM_MIMETYPE = "application/problem+json"
TYPE_BASE = "urn:mexican-train:problem:"

log = logging.getLogger(__name__)
STORAGE_FULL_RETRY_AFTER = "5"
VALIDATION_DETAIL = "The request is well-formed but some values are invalid; see errors."


class RateLimitPolicy(StrEnum):
    """The name of each limit, in the RateLimit headers and a 429's ``ratelimit.policy``."""

    TOKEN = "token"  # requests per token per game
    CREATE = "create"  # creations (games and players) per address
    JOIN = "join"  # joins per address
    SAMPLES = "samples"  # samples dealt per address
    STREAMS = "streams"  # open streams per address (a cap at any moment, no window)
    WEBHOOK_LOOKUPS = "webhook_lookups"  # registrations checking their URL per address (a cap)


class RatePolicySchema(ma.Schema):
    name = ma.fields.String(
        required=True, validate=ma.validate.OneOf([policy.value for policy in RateLimitPolicy])
    )
    quota = ma.fields.Integer(required=True, metadata={"description": "requests per window"})
    window = ma.fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "seconds; null for a cap on what is open at once (streams)"},
    )


class RateLimitSchema(ma.Schema):
    policy = ma.fields.Nested(RatePolicySchema, required=True)
    retry_after = ma.fields.Integer(
        required=True, metadata={"description": "seconds to wait, as in Retry-After"}
    )


class ProblemSchema(ma.Schema):
    """An RFC 9457 problem (``application/problem+json``)."""

    type = ma.fields.String(required=True, metadata={"description": "URI naming the problem type"})
    title = ma.fields.String(required=True, metadata={"description": "Short summary"})
    status = ma.fields.Integer(required=True, metadata={"description": "HTTP status code"})
    detail = ma.fields.String(required=True, metadata={"description": "What went wrong"})
    code = ma.fields.String(
        required=True,
        metadata={
            "description": "Stable machine-readable code, e.g. `not_your_turn`, `illegal_move`,"
            " `stale_version`, `game_not_found`, `invalid_rules`",
            "enum": [problem.value for problem in Problem],  # the service's and its nginx's
        },
    )
    errors = ma.fields.Dict(
        metadata={"description": "Field -> messages, for request validation failures (422)"}
    )
    version = ma.fields.Integer(
        metadata={"description": "The game's current version (409/412 version problems)"}
    )
    ratelimit = ma.fields.Nested(
        RateLimitSchema, metadata={"description": "429 from the service: the limit passed"}
    )
    game_id = ma.fields.String(
        metadata={"description": "409 `already_seated`: the table where the seeker sits already"}
    )


class ApiError(Exception):
    """Raised by views: becomes a problem response."""

    def __init__(
        self,
        kind: Problem,
        detail: str,
        *,
        errors: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.errors = errors
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})


def problem(
    kind: Problem,
    detail: str,
    *,
    errors: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Response:
    body: dict[str, Any] = {
        "type": TYPE_BASE + kind,
        "title": kind.phrase,
        "status": kind.status,
        "detail": detail,
        "code": kind.value,
    }
    if errors:
        body["errors"] = errors
    if extra:
        body.update(extra)
    # Validation messages may be keyed by list index (an int): OPT_NON_STR_KEYS keeps them.
    data = orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS)
    resp = ApiResponse(data, status=kind.status, mimetype=PROBLEM_MIMETYPE)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def handle_api_error(err: ApiError) -> Response:
    return problem(err.kind, err.detail, errors=err.errors, headers=err.headers, extra=err.extra)


def handle_rules_error(err: RulesError) -> Response:
    """The engine's code is the problem's (``Problem`` holds each with its status); a move
    field of the wrong shape is a validation failure of that field, as a schema's would be."""
    if isinstance(err, InvalidMove) and err.field is not None:
        return problem(Problem.VALIDATION_FAILED, VALIDATION_DETAIL, errors={err.field: [str(err)]})
    kind = Problem[err.code.name]
    if kind.status >= 500:
        log.error("engine fault: %s (%s)", err, err.code)
        return problem(kind, "The stored game could not be read.")
    return problem(kind, err.message or err.code)


def storage_full() -> ApiError:
    """Redis is at its memory limit: nothing was written; retrying later may succeed."""
    return ApiError(
        Problem.STORAGE_FULL,
        "Game storage is full; try again later.",
        headers={"Retry-After": STORAGE_FULL_RETRY_AFTER},
    )


def is_out_of_memory(err: redis.RedisError) -> bool:
    """Redis' OOM refusal; older servers report it inside a script error's message."""
    return isinstance(err, redis.exceptions.OutOfMemoryError) or (
        isinstance(err, redis.ResponseError) and "OOM command not allowed" in str(err)
    )


def handle_redis_error(err: redis.RedisError) -> Response:
    """Storage trouble is the server's, and usually brief: 503 with Retry-After."""
    if is_out_of_memory(err):
        throttled(log, logging.ERROR, "redis out of memory: %s", err)
        return handle_api_error(storage_full())
    # Each request Redis fails says the same: one line a second, not one per request.
    throttled(log, logging.ERROR, "redis error: %s", err)
    return problem(
        Problem.STORAGE_UNAVAILABLE,
        "Game storage is unavailable; try again shortly.",
        headers={"Retry-After": "1"},
    )


def handle_unexpected(err: Exception) -> Response:
    """Last resort: log the traceback, tell the client nothing internal."""
    if isinstance(err, HTTPException):  # pragma: no cover - routed to the HTTP handler first
        return handle_http(err)
    log.exception("unhandled error")
    return problem(Problem.INTERNAL_ERROR, "An unexpected error occurred on the server.")


def handle_http(err: HTTPException) -> Response:
    status = err.code or 500
    kind = BY_STATUS.get(status, Problem.INTERNAL_ERROR if status >= 500 else Problem.NOT_FOUND)
    data = getattr(err, "data", None) or {}
    errors = data.get("errors") or data.get("messages")
    detail = err.description or http.HTTPStatus(status).description
    headers = dict(data.get("headers") or {})
    if status == 400 and errors and "json" in errors and errors["json"] == ["Invalid JSON body."]:
        kind, detail, errors = Problem.MALFORMED_JSON, "The request body is not valid JSON.", None
    elif status == 422:
        detail = VALIDATION_DETAIL
        # webargs nests messages under the location ("json", "query"); keep them flat.
        if isinstance(errors, dict) and len(errors) == 1 and set(errors) <= {"json", "query"}:
            errors = next(iter(errors.values()))
    elif status == 405:
        allowed = err.get_headers()
        headers.update({k: v for k, v in allowed if k == "Allow"})
    return problem(kind, detail, errors=errors, headers=headers)


class ProblemApi(HookedApi):
    """flask-smorest Api whose errors, served and documented, are problem details."""

    ERROR_SCHEMA = ProblemSchema

    def register_error_handlers(self, app: Flask) -> None:
        app.register_error_handler(HTTPException, handle_http)
        app.register_error_handler(ApiError, handle_api_error)
        app.register_error_handler(RulesError, handle_rules_error)
        app.register_error_handler(redis.RedisError, handle_redis_error)
        app.register_error_handler(Exception, handle_unexpected)

    def register_responses(self) -> None:
        """Document the shared error responses as ``application/problem+json``."""
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if status >= 400:
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, PROBLEM_MIMETYPE)
            self.spec.components.response(status.name, response, lazy=True)
        response = {"description": "Unexpected server error", "schema": self.ERROR_SCHEMA}
        prepare_response(response, self.spec, PROBLEM_MIMETYPE)
        self.spec.components.response("DEFAULT_ERROR", response, lazy=True)
