"""OpenAPI helpers: shared problem responses and request headers, documented once."""

from __future__ import annotations

import copy
import http
from collections.abc import Callable
from typing import Any, TypeVar

from service.frameworks.smorest import apidoc, deepupdate, resolve_schema_instance

from . import etag, idempotency
from .idempotency import REPLAYED_HEADER
from .limits import POLICY_HEADER, STATE_HEADER

F = TypeVar("F", bound=Callable[..., Any])

# Reusable header parameters (registered in the spec by create_app).
HEADER_PARAMETERS: dict[str, dict[str, Any]] = {**etag.PARAMETERS, **idempotency.PARAMETERS}

SEAT_OR_HOST: list[dict[str, list[str]]] = [{"bearer": []}]
OPTIONAL_TOKEN: list[dict[str, list[str]]] = [{}, {"bearer": []}]


# flask-smorest documents through decorators that each wrap the view in one more call layer,
# run on every request. These helpers write the same documentation entries without wrapping, so
# documenting ten problem responses costs nothing at run time.


def _schema(schema: Any) -> Any:
    """A marshmallow schema as an instance; a schema object (``{"oneOf": [...]}``) as it is."""
    if schema is None or isinstance(schema, dict):
        return schema
    return resolve_schema_instance(schema)


def responds(
    status: int,
    schema: Any = None,
    *,
    description: str | None = None,
    example: Any = None,
    headers: dict[str, Any] | None = None,
    success: bool = True,
) -> Callable[[F], F]:
    """Document a response (what ``Blueprint.response``/``alt_response`` record)."""
    entry: dict[str, Any] = {
        k: v
        for k, v in {
            "schema": _schema(schema),
            "description": description or http.HTTPStatus(status).phrase,
            "example": example,
            "headers": headers,
        }.items()
        if v is not None
    }
    entry["content_type"] = None

    def decorate(func: F) -> F:
        doc = apidoc(func)
        doc.setdefault("response", {}).setdefault("responses", {}).setdefault(status, [])
        doc["response"]["responses"][status].append(entry)
        if success:
            doc.setdefault("success_status_codes", []).append(status)
        return func

    return decorate


def problems(*codes: int) -> Callable[[F], F]:
    """Document each status as an ``application/problem+json`` response (shared component)."""

    def decorate(func: F) -> F:
        doc = apidoc(func)
        responses = doc.setdefault("response", {}).setdefault("responses", {})
        for code in codes:
            responses.setdefault(code, []).append(http.HTTPStatus(code).name)
        return func

    return decorate


def doc(**kwargs: Any) -> Callable[[F], F]:
    """Verbatim OpenAPI operation fields (security, parameters, ...)."""

    def decorate(func: F) -> F:
        documented = apidoc(func)
        documented["manual_doc"] = deepupdate(
            copy.deepcopy(documented.get("manual_doc", {})), kwargs
        )
        return func

    return decorate


#: Response headers every operation may carry, by what makes it carry them (documented once,
#: as components, and referred to from each response they apply to).
RESPONSE_HEADERS: dict[str, dict[str, Any]] = {
    POLICY_HEADER: {
        "description": "Each limit this request was counted against: its quota `q` per window "
        '`w` seconds (IETF ratelimit-headers draft), e.g. `"token";q=1200;w=60`',
        "schema": {"type": "string"},
    },
    STATE_HEADER: {
        "description": "What is left of each limit: `r` requests, `t` seconds until its window "
        'ends, e.g. `"token";r=1187;t=42`',
        "schema": {"type": "string"},
    },
    "Retry-After": {
        "description": "Seconds to wait before asking again",
        "schema": {"type": "integer"},
    },
    REPLAYED_HEADER: {
        "description": "`true`: the answer kept for this Idempotency-Key, nothing applied again",
        "schema": {"type": "string", "enum": ["true"]},
    },
    "WWW-Authenticate": {
        "description": 'The scheme a token is sent with (RFC 6750): `Bearer realm="mexican-train"`',
        "schema": {"type": "string"},
    },
}


def with_response_headers(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with the headers of :data:`RESPONSE_HEADERS` on the responses that carry them:
    the rate-limit headers on every answer of an operation that can answer 429 and on every
    shared problem response, ``Retry-After`` on a 429 and a 503 (an operation's default
    response stands for its 503), ``Idempotent-Replayed`` on the successes of an operation
    that takes an Idempotency-Key, and the ETag of a 412."""
    spec["components"]["headers"] = RESPONSE_HEADERS
    limited = {name: _header_ref(name) for name in (POLICY_HEADER, STATE_HEADER)}
    shared = spec["components"]["responses"]
    for problem in shared.values():  # a limited request's refusal counts against its limits
        problem["headers"] = dict(limited)
    for waits in ("TOO_MANY_REQUESTS", "SERVICE_UNAVAILABLE", "DEFAULT_ERROR"):
        shared[waits]["headers"]["Retry-After"] = _header_ref("Retry-After")
    shared["PRECONDITION_FAILED"]["headers"].update(etag.ETAG_HEADER)  # the current version
    shared["UNAUTHORIZED"]["headers"]["WWW-Authenticate"] = _header_ref("WWW-Authenticate")
    for operations in spec["paths"].values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue  # the path's own parameters
            keyed = {"$ref": "#/components/parameters/IdempotencyKey"} in operation.get(
                "parameters", []
            )
            for status, response in operation.get("responses", {}).items():
                if "$ref" in response:
                    continue  # a shared problem response
                headers = response.setdefault("headers", {})
                if "429" in operation["responses"]:
                    headers.update(limited)
                if keyed and status.startswith("2"):
                    headers[REPLAYED_HEADER] = _header_ref(REPLAYED_HEADER)
                if not headers:
                    del response["headers"]
    return spec


def _header_ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{name}"}
