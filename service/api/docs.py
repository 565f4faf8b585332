"""OpenAPI helpers: shared problem responses and request headers, documented once."""

from __future__ import annotations

import copy
import http
from collections.abc import Callable
from typing import Any, TypeVar

from service.frameworks.smorest import apidoc, deepupdate, resolve_schema_instance

from . import etag, idempotency

F = TypeVar("F", bound=Callable[..., Any])

# Reusable header parameters (registered in the spec by create_app).
HEADER_PARAMETERS: dict[str, dict[str, Any]] = {**etag.PARAMETERS, **idempotency.PARAMETERS}

SEAT_OR_HOST: list[dict[str, list[str]]] = [{"bearer": []}]
OPTIONAL_TOKEN: list[dict[str, list[str]]] = [{}, {"bearer": []}]


# flask-smorest documents through decorators that each wrap the view in one more call layer,
# run on every request. These helpers write the same documentation entries without wrapping, so
# documenting ten problem responses costs nothing at run time.


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
            "schema": resolve_schema_instance(schema) if schema is not None else None,
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
