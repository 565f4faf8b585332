"""Typed client errors: one class per HTTP status family, each carrying the problem body.

The server answers every error with an RFC 9457 problem body whose ``code`` is stable, so callers
branch on ``err.code`` (or the class) rather than on message text.
"""

from __future__ import annotations

from typing import Any


class ClientError(Exception):
    """Base of everything the client raises."""


class TransportError(ClientError):
    """The server could not be reached, or its answer was cut, after every retry (a 502-504
    answer that outlasts them raises :class:`ServerError`, with its problem ``code``)."""


class ApiError(ClientError):
    """The server refused the request with a problem body (``status``, ``code``, ``detail``)."""

    #: Seconds the server asked to wait before asking again (``Retry-After``), if it did.
    retry_after: float | None = None

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body
        self.code = str(body.get("code") or f"http_{status}")
        self.title = str(body.get("title") or "")
        self.detail = str(body.get("detail") or self.title or self.code)
        super().__init__(f"{status} {self.code}: {self.detail}")


class BadRequest(ApiError):
    """400: malformed body or header."""


class Unauthorized(ApiError):
    """401: missing or unknown token."""


class Forbidden(ApiError):
    """403: the token belongs to another seat, or the action needs the host token."""


class NotFound(ApiError):
    """404: unknown game (or path)."""


class Conflict(ApiError):
    """409: the action is not legal now (``not_your_turn``, ``illegal_move``, ...)."""


class StaleVersion(ApiError):
    """412: ``If-Match`` was stale. ``view`` holds the game as re-read right after the refusal."""

    view: dict[str, Any] | None = None


class PayloadTooLarge(ApiError):
    """413: request body too large."""


class Unprocessable(ApiError):
    """422: well-formed but invalid values (bad rules, impossible position, malformed move)."""


class RateLimited(ApiError):
    """429 that persisted through every retry, or asked for a wait past
    ``RetryPolicy.max_retry_after`` (``retry_after`` says how long)."""


class ServerError(ApiError):
    """5xx that is not retryable, or persisted through every retry."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: StaleVersion,
    413: PayloadTooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def error_for(status: int, body: dict[str, Any]) -> ApiError:
    """The typed exception for a refused response."""
    if status >= 500:
        return ServerError(status, body)
    return _BY_STATUS.get(status, ApiError)(status, body)
