"""Every problem the service answers: its stable ``code``, its status, its title.

Clients branch on ``code``, so this enum is the one place a code is written; the engine's codes
come from :class:`service.rules.errors.RuleCode`. ``tests/api/test_problem_codes.py`` holds it to
the table of docs/api.md §9, both ways, and to nginx's own problems in deploy/nginx.conf.
"""

from __future__ import annotations

import http
from enum import StrEnum

from service.rules.errors import RuleCode


class Problem(StrEnum):
    """A problem code with the HTTP status it is answered with."""

    status: int

    def __new__(cls, code: str, status: int) -> Problem:
        member = str.__new__(cls, code)
        member._value_ = code
        member.status = status
        return member

    @property
    def phrase(self) -> str:
        return http.HTTPStatus(self.status).phrase

    # 400: the request cannot be read
    MALFORMED_JSON = "malformed_json", 400
    MALFORMED_PRECONDITION = "malformed_precondition", 400
    MALFORMED_IDEMPOTENCY_KEY = "malformed_idempotency_key", 400
    SHORT_IDEMPOTENCY_KEY = "short_idempotency_key", 400
    MALFORMED_REQUEST = "malformed_request", 400
    # 401, 403: who is asking
    MISSING_TOKEN = "missing_token", 401
    INVALID_TOKEN = "invalid_token", 401
    UNAUTHORIZED = "unauthorized", 401
    NOT_A_SEAT = "not_a_seat", 403
    NOT_HOST = "not_host", 403
    NOT_THIS_PLAYER = "not_this_player", 403
    FORBIDDEN = "forbidden", 403
    # 404, 405, 406: what is asked for
    GAME_NOT_FOUND = "game_not_found", 404
    NOT_FOUND = "not_found", 404
    INVITE_NOT_FOUND = "invite_not_found", 404
    SEAT_NOT_FOUND = "seat_not_found", 404
    PLAYER_NOT_FOUND = "player_not_found", 404
    WEBHOOK_NOT_FOUND = "webhook_not_found", 404
    TRANSFER_NOT_FOUND = "transfer_not_found", 404
    METHOD_NOT_ALLOWED = "method_not_allowed", 405
    NOT_ACCEPTABLE = "not_acceptable", 406
    # 409: not now
    NOT_YOUR_TURN = RuleCode.NOT_YOUR_TURN, 409
    ILLEGAL_MOVE = RuleCode.ILLEGAL_MOVE, 409
    ROUND_NOT_RUNNING = RuleCode.ROUND_NOT_RUNNING, 409
    ROUND_IN_PROGRESS = RuleCode.ROUND_IN_PROGRESS, 409
    GAME_OVER = RuleCode.GAME_OVER, 409
    SEATS_OPEN = "seats_open", 409
    INVITE_USED = "invite_used", 409
    TRANSFER_USED = "transfer_used", 409
    VERSION_CONFLICT = "version_conflict", 409
    TOO_MANY_SEAT_CHANGES = "too_many_seat_changes", 409
    TOO_MANY_WEBHOOKS = "too_many_webhooks", 409
    LOG_FULL = "log_full", 409
    GAME_NOT_OVER = "game_not_over", 409
    SEAT_TAKEN = "seat_taken", 409
    ALREADY_SEATED = "already_seated", 409
    REMATCH_CLOSED = "rematch_closed", 409
    AFTER_AHEAD_OF_LOG = "after_ahead_of_log", 409
    RATED_GAME_DEALT = "rated_game_dealt", 409
    CONFLICT = "conflict", 409
    # 412-431: preconditions and sizes
    STALE_VERSION = "stale_version", 412
    BODY_TOO_LARGE = "body_too_large", 413
    URI_TOO_LONG = "uri_too_long", 414
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type", 415
    PRECONDITION_REQUIRED = "precondition_required", 428
    RATE_LIMITED = "rate_limited", 429
    HEADERS_TOO_LARGE = "headers_too_large", 431
    # 422: well-formed, but the values are not
    VALIDATION_FAILED = "validation_failed", 422
    INVALID_RULES = RuleCode.INVALID_RULES, 422
    INVALID_POSITION = RuleCode.INVALID_POSITION, 422
    INVALID_MOVE = RuleCode.INVALID_MOVE, 422
    TILE_NOT_IN_SET = RuleCode.TILE_NOT_IN_SET, 422
    UNKNOWN_TRAIN = RuleCode.UNKNOWN_TRAIN, 422
    TOO_MANY_BOTS = "too_many_bots", 422
    UNRATED_SEAT = "unrated_seat", 422
    WEBHOOK_URL_NOT_ALLOWED = "webhook_url_not_allowed", 422
    # 5xx: the server's
    CORRUPT_STATE = RuleCode.CORRUPT_STATE, 500
    INTERNAL_ERROR = "internal_error", 500
    STORAGE_UNAVAILABLE = "storage_unavailable", 503
    STORAGE_FULL = "storage_full", 503
    REDIS_UNAVAILABLE = "redis_unavailable", 503
    UNAVAILABLE = "unavailable", 503
    WEBHOOK_LOOKUP_TIMEOUT = "webhook_lookup_timeout", 503


#: The problem of a status Flask or werkzeug raises by itself.
BY_STATUS: dict[int, Problem] = {
    400: Problem.MALFORMED_REQUEST,
    401: Problem.UNAUTHORIZED,
    403: Problem.FORBIDDEN,
    404: Problem.NOT_FOUND,
    405: Problem.METHOD_NOT_ALLOWED,
    406: Problem.NOT_ACCEPTABLE,
    409: Problem.CONFLICT,
    412: Problem.STALE_VERSION,
    413: Problem.BODY_TOO_LARGE,
    415: Problem.UNSUPPORTED_MEDIA_TYPE,
    422: Problem.VALIDATION_FAILED,
    428: Problem.PRECONDITION_REQUIRED,
    429: Problem.RATE_LIMITED,
    500: Problem.INTERNAL_ERROR,
    503: Problem.UNAVAILABLE,
}
