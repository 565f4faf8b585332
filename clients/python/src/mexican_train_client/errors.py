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
    answer that outlasts them raises :class:`ServerError`, with its problem ``code``); or a
    successful answer was not what the API sends (a body that is not JSON: a captive portal's
    or a proxy's page)."""


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
    """400: malformed body or header (``short_idempotency_key``: under 22 characters where the
    answer holds a token no caller's token scopes: a new game, player or seek)."""


class Unauthorized(ApiError):
    """401: missing or unknown token (``invalid_token`` also for a stream ticket used or
    expired, and for a seat token its seat no longer has: reopened, given to a bot, moved)."""


class Forbidden(ApiError):
    """403: the token belongs to another seat, or the action needs the host token
    (``not_host``), a seat's (``not_a_seat``), or the player's own (``not_this_player``)."""


class NotFound(ApiError):
    """404: unknown game (or path), or an unknown thing of one: ``invite_not_found``,
    ``transfer_not_found``, ``player_not_found``, ``webhook_not_found``, ..."""


class Conflict(ApiError):
    """409: the action is not legal now (``not_your_turn``, ``illegal_move``,
    ``transfer_used``, ``game_not_over``, ``rematch_closed``, ...). ``already_seated`` (a seek)
    names the table its player sits at in ``body["game_id"]``."""


class LogRewound(Conflict):
    """409 ``after_ahead_of_log``: the game's stored log ends at ``version``, before what the
    reader asked to resume after. Redis lost those entries (a restart from an AOF that missed
    its last second, a failover to a replica behind) and the game writes those versions anew,
    with other entries: drop what was built from entries past ``version`` and reload (the game
    view, or the events from ``after=0``)."""

    @property
    def version(self) -> int:
        return int(self.body.get("version") or 0)


#: Problem codes with a class of their own, more precise than their status's.
_BY_CODE: dict[str, type[ApiError]] = {"after_ahead_of_log": LogRewound}


class StaleVersion(ApiError):
    """412: ``If-Match`` was stale. ``view`` holds the game as re-read right after the refusal."""

    view: dict[str, Any] | None = None


class PayloadTooLarge(ApiError):
    """413: request body too large."""


class Unprocessable(ApiError):
    """422: well-formed but invalid values (bad rules, impossible position, malformed move,
    ``unrated_seat``, ``webhook_url_not_allowed``; ``validation_failed`` lists them in
    ``body["errors"]``)."""


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
    by_code = _BY_CODE.get(str(body.get("code")))
    return (by_code or _BY_STATUS.get(status, ApiError))(status, body)
