"""``Cache-Control``: what a browser or shared cache may keep. The one home of that policy.

A response that shows a hand or carries a token must never be stored by any cache (a shared
proxy, a browser's disk cache, its back button): :attr:`CachePolicy.PRIVATE`. The public view
may be kept, but must be revalidated with its ETag before each use, since any move changes it:
:attr:`CachePolicy.REVALIDATE`.

A view opts in with the :func:`cache_policy` decorator, or with :func:`use_policy` when the
answer depends on the request. Whatever a view chose, a request that carries a token (header or
``access_token`` query) gets ``PRIVATE``: a token-bearing answer may show a hand, so an endpoint
that forgets to choose fails safe.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, ParamSpec, TypeVar

from flask import Response, g, request

HEADER = "Cache-Control"
TOKEN_QUERY = "access_token"
_POLICY = "cache_policy"

P = ParamSpec("P")
R = TypeVar("R")


class CachePolicy(StrEnum):
    PRIVATE = "private, no-store"  # hands, tokens: never stored anywhere
    REVALIDATE = "no-cache"  # public views: stored, revalidated with the ETag every time


def use_policy(policy: CachePolicy) -> None:
    """Choose this request's policy (the last choice wins; a token still forces PRIVATE)."""
    setattr(g, _POLICY, policy)


def cache_policy(policy: CachePolicy) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a view: its responses (replays and refusals included) carry ``policy``."""

    def decorate(view: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(view)
        def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
            use_policy(policy)
            return view(*args, **kwargs)

        return wrapped

    return decorate


def carries_token(environ: Mapping[str, Any]) -> bool:
    # The query string is parsed only when there is one (most requests have none).
    return "HTTP_AUTHORIZATION" in environ or bool(
        environ.get("QUERY_STRING") and TOKEN_QUERY in request.args
    )


def apply_policy(response: Response, environ: Mapping[str, Any]) -> None:
    """After every request (the app's after-request hook calls it): the chosen policy,
    PRIVATE for any token-bearing request."""
    policy: CachePolicy | None = g.get(_POLICY)
    if carries_token(environ):
        policy = CachePolicy.PRIVATE
    if policy is not None:
        response.headers[HEADER] = policy.value
