"""Who may open a stream, and how many: stream tickets, the deprecated token in the URL, and
the per-address cap on open streams.

A browser's ``EventSource`` cannot send headers, so its credential travels in the URL, where
proxies and nginx's error log may write it down. A seat (or table, or host) token there would
then be a long-lived secret in a log; a **stream ticket** is what goes there instead: issued
for a token, valid for one stream opened within a minute, useless once used. The ticket stands
for the token it was issued to, so a seat taken from that token before the stream opens makes
the ticket worthless too.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable

from flask import request

from service.rules import Role, RoleKind
from service.rules.log import rfc3339
from service.store import GameRecord
from service.store.streams import TICKET_SECONDS as TICKET_SECONDS
from service.store.tokens import hash_token

from ..caching import TOKEN_QUERY
from ..codes import Problem
from ..config import settings
from ..limits import AddressCap, take_address_slot
from ..problems import ApiError, RateLimitPolicy
from ..store_access import store
from ..transaction import Loaded, blind_host, load_game
from ..web import UNAUTHORIZED_HEADERS

log = logging.getLogger(__name__)

#: Tickets start with this, which no token does (tokens are base64url: no dot).
TICKET_PREFIX = "st."
#: RFC 9745: a seat token in ``access_token`` is deprecated since this date (tickets replace it).
DEPRECATION_HEADERS = {"Deprecation": "@1796342400"}

_HOST, _TABLE, _SEAT = b"h", b"m", b"s"
#: A client past its open streams is told to try again after this many seconds.
STREAM_SLOT_RETRY_SECONDS = 10


def grant(g: Loaded) -> bytes:
    """What a ticket of the caller stands for: its role and its token's digest."""
    assert g.token is not None
    digest = hash_token(g.token)
    if g.record.identify(g.token) is Role.HOST:  # a host blind for now keeps its grant
        return _HOST + digest
    if g.role.kind is RoleKind.TABLE:
        return _TABLE + digest
    assert g.seat is not None
    return _SEAT + bytes([g.seat]) + digest


def issue_ticket(g: Loaded) -> dict[str, str]:
    """A new ticket for the caller's token; its body (``ticket``, ``expires_at``)."""
    ticket = TICKET_PREFIX + secrets.token_urlsafe(24)
    store().tickets.issue(g.record.game_id, ticket, grant(g))
    expires = int(time.time() * 1000) + TICKET_SECONDS * 1000
    return {"ticket": ticket, "expires_at": rfc3339(expires)}


def stream_reader(game_id: str) -> tuple[Loaded, bool]:
    """The caller of ``GET /events`` and whether it used the deprecated token in the URL."""
    raw = None if "Authorization" in request.headers else request.args.get(TOKEN_QUERY)
    if raw is None or not raw.startswith(TICKET_PREFIX):
        return load_game(game_id, query=True), raw is not None
    granted = store().tickets.redeem(game_id, raw)
    if granted is None:
        load_game(game_id, mark=False)  # an unknown game is 404, as with any other credential
        raise _bad_ticket("This stream ticket was used, has expired, or is not this game's.")
    g = load_game(game_id)
    g.role = _role_of(granted, g.record)
    blind_host(g)
    return g, False


def _role_of(granted: bytes, record: GameRecord) -> Role:
    """The role a grant names, if its token still holds it (a revoked seat's does not)."""
    kind, rest = granted[:1], granted[1:]
    if kind == _HOST and rest == record.host_digest:
        return Role.HOST
    if kind == _TABLE and rest == record.table_digest:
        return Role.TABLE
    seat = rest[0] if kind == _SEAT and rest else None
    if (
        seat is not None
        and seat < len(record.seat_digests)
        and record.seat_digests[seat] == rest[1:]
    ):
        return Role.of_seat(seat)
    raise _bad_ticket("The token this ticket was issued to no longer holds its seat.")


def _bad_ticket(detail: str) -> ApiError:
    return ApiError(Problem.INVALID_TOKEN, detail, headers=UNAUTHORIZED_HEADERS)


def take_stream_slot() -> Callable[[], None]:
    """Take one of the caller's address's open-stream slots (429 when the address holds
    ``STREAMS_PER_ADDRESS`` already, on any instance); returns what gives it back, which the
    stream calls when it ends."""
    values = settings()
    limit = AddressCap(
        RateLimitPolicy.STREAMS,
        "open streams",
        values.streams_per_address,
        values.stream_max_seconds + 60,
        STREAM_SLOT_RETRY_SECONDS,
    )
    return take_address_slot(store().stream_slots, limit)
