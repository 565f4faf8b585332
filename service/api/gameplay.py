"""The steps every game view shares: authenticate, load, check preconditions, save, respond.

Views call :func:`load_game` then either answer from the loaded state or hand an engine call
to :func:`commit`. Nothing here knows a rule; the engine (``service.rules``) decides.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from flask import Response

from service import rules
from service.rules import Role, RoleKind
from service.rules.log import Record, encode, rfc3339
from service.store import (
    Change,
    GameNotFound,
    GameRecord,
    IdempotentReplay,
    KeptResponse,
    VersionConflict,
)
from service.table import Applied, SeatKind, Table, advance

from .caching import CachePolicy, use_policy
from .config import settings
from .etag import check_if_match, stale
from .idempotency import request_idempotency_key
from .limits import rate_limited
from .observability import record_cas_conflict, record_move
from .problems import ApiError
from .store_access import store
from .web import UNAUTHORIZED_HEADERS, bearer_token, json_response


@dataclass
class Loaded:
    record: GameRecord
    state: rules.GameState
    role: Role
    token: str | None
    idem_key: str | None
    if_match: bool  # the request named a version (If-Match) and the game is at it
    table: Table

    @property
    def seat(self) -> int | None:
        return self.role.seat

    def view(self, version: int | None = None) -> dict[str, Any]:
        """The game view for the caller: a seat sees its hand, anyone else the public view."""
        body = {
            "game_id": self.record.game_id,
            "version": self.record.version if version is None else version,
            **rules.game_view(self.state, self.seat),
        }
        return table_view(body, self.table)


class DecodedStates:
    """Game states by their stored bytes, decoded once per process and copied per request (a
    copy costs a fifth of a decode). Legal-moves and then the move of one turn load the same
    bytes, and the process that stored a change is often asked for the next request of its
    game. A kept state is never handed out, so no request sees another's changes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_raw: dict[bytes, rules.GameState] = {}
        self._lock = threading.Lock()

    def get(self, raw: bytes) -> rules.GameState:
        kept = self._by_raw.get(raw)
        if kept is None:
            kept = rules.loads(raw)
            self.keep(raw, kept)
        return kept.copy()

    def keep(self, raw: bytes, state: rules.GameState) -> None:
        """Remember ``state`` (no longer changed by its owner) as the decoding of ``raw``."""
        with self._lock:
            if len(self._by_raw) >= self.size:
                del self._by_raw[next(iter(self._by_raw))]  # the oldest
            self._by_raw[raw] = state


# A few KB each.
DECODED = DecodedStates(256)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def table_of(record: GameRecord, state: rules.GameState) -> Table:
    """The stored table; a game stored without one has a person in every seat."""
    if not record.table:
        return Table.of_people(state.n_players)
    return Table.from_json(orjson.loads(record.table))


def table_view(body: dict[str, Any], table: Table) -> dict[str, Any]:
    """The view's table fields: each player's ``bot`` and ``open``, and the turn clock."""
    for player, seat in zip(body["players"], table.seats, strict=True):
        player["bot"] = seat.bot
        player["open"] = seat.kind == SeatKind.OPEN
    deadline = table.deadline_ms
    body["clock"] = {
        "turn_seconds": table.turn_seconds,
        "deadline": None if deadline is None else rfc3339(deadline),
    }
    return body


def ever_dealt(state: rules.GameState) -> bool:
    """Whether a round was ever dealt: until then the game lives only UNDEALT_TTL_SECONDS."""
    return state.round > 0


def not_found(game_id: str) -> ApiError:
    return ApiError(404, "game_not_found", f"There is no game {game_id!r} (or it expired).")


def load_game(
    game_id: str, need: RoleKind | None = None, *, mutating: bool = False, query: bool = False
) -> Loaded:
    """The game and the caller's role, after every check a request passes before the engine:
    token, rate limit, role, a kept response to replay, and (when ``mutating``) If-Match.
    ``query``: the token may come as the ``access_token`` parameter."""
    token = bearer_token(query=query)
    if need is not None and token is None:
        raise ApiError(
            401, "missing_token", "This request needs a bearer token.", headers=UNAUTHORIZED_HEADERS
        )
    key = request_idempotency_key() if mutating else None
    try:
        record = store().load(game_id, token=token, idempotency_key=key)
    except GameNotFound:
        raise not_found(game_id) from None
    _check_rate(record)
    role = _role(record, token, need)
    if record.kept is not None:
        raise IdempotentReplay(record.kept)
    state = DECODED.get(record.state)
    g = Loaded(record, state, role, token, key, False, table_of(record, state))
    if g.table.overdue(now_ms()):
        g = settle(g)
    g.if_match = check_if_match(g.record.version) if mutating else False
    return g


def settle_overdue(game_id: str) -> None:
    """Play the game's overdue turn, if it has one (the streams' ticker calls this)."""
    record = store().load(game_id)
    state = DECODED.get(record.state)
    g = Loaded(record, state, Role.HOST, None, None, False, table_of(record, state))
    if g.table.overdue(now_ms()):
        settle(g)


def settle(g: Loaded) -> Loaded:
    """Play an overdue turn (and what follows it) before serving the request, then reload.

    Several instances may notice the same overdue turn: the compare-and-set lets one apply it,
    the others find the game moved on and read the result."""
    applied = advance(g.state, g.table, now_ms(), g.record.version)
    if applied:
        with contextlib.suppress(VersionConflict):
            store().save(g.record.game_id, g.record.version, change_of(g, applied))
    record = store().load(g.record.game_id)
    state = DECODED.get(record.state)
    return Loaded(record, state, g.role, g.token, g.idem_key, False, table_of(record, state))


def _check_rate(record: GameRecord) -> None:
    limit = settings().rate_limit_per_minute
    if limit and record.rate_count > limit:
        detail = f"More than {limit} requests a minute with this token on this game."
        raise rate_limited(detail, record.rate_reset)


def _role(record: GameRecord, token: str | None, need: RoleKind | None) -> Role:
    """Who the token is in this game (401 for a stranger's token, 403 for the wrong role)."""
    if token is None:
        role = Role.PUBLIC
    else:
        found = record.identify(token)
        if found is None:
            raise ApiError(
                401,
                "invalid_token",
                "The token is not one of this game's.",
                headers=UNAUTHORIZED_HEADERS,
            )
        role = found
    if need is RoleKind.SEAT and not role.is_seat:
        raise ApiError(403, "not_a_seat", "Only a seat token may do this.")
    if need is RoleKind.HOST and not role.is_host:
        raise ApiError(403, "not_host", "Only the host token may do this.")
    return role


def change_of(
    g: Loaded, applied: Sequence[Applied], seat_digests: Sequence[bytes] | None = None
) -> Change:
    """The store's change for ``applied``: new state, encoded records, seats, and the table
    only when it changed (most moves leave it as it was: nothing to send or store)."""
    created, n = g.table.created_ms, g.state.n_players
    table = orjson.dumps(g.table.to_json())
    return Change(
        rules.dumps(g.state),
        [encode(step.record, created, n, g.table.tick_ms) for step in applied],
        seat_digests,
        None if table == g.record.table else table,
    )


def commit(
    g: Loaded, action: Callable[[rules.GameState], list[rules.Event]], record: Record
) -> Response:
    """Run an engine action, then what the server plays by itself after it (bot seats,
    automatic deals), store it all with compare-and-set, answer with the view and the events.

    An engine refusal raises before anything is written.
    """
    events = action(g.state)
    g.table.restart_clock(g.state, events, record.at_ms)
    applied = [Applied(record, events)]
    applied += advance(g.state, g.table, record.at_ms, g.record.version + 1)
    return save_change(g, applied)


def save_change(
    g: Loaded,
    applied: Sequence[Applied],
    seat_digests: Sequence[bytes] | None = None,
    extra: dict[str, Any] | None = None,
) -> Response:
    """Store ``applied`` with compare-and-set and answer with the caller's view.

    A lost race is 412 with If-Match and 409 without: never retried blindly, since the move
    was judged against an old state. A concurrent request with the same Idempotency-Key that
    saved first raises ``IdempotentReplay`` from the store (answered by the app's handler).
    """
    use_policy(CachePolicy.PRIVATE)  # an action's answer shows the actor's hand
    version = g.record.version + len(applied)
    body = g.view(version)
    body["events"] = [
        event for step in applied for event in rules.visible_events(step.events, g.seat)
    ]
    body.update(extra or {})
    payload = orjson.dumps(body)
    kept = KeptResponse(200, payload) if g.idem_key is not None else None
    change = change_of(g, applied, seat_digests)
    try:
        store().save(
            g.record.game_id,
            g.record.version,
            change,
            kept=kept,
            token=g.token,
            idempotency_key=g.idem_key,
            dealt=ever_dealt(g.state),
        )
    except VersionConflict as conflict:
        raise lost_race(g, conflict.current) from None
    except GameNotFound:
        raise not_found(g.record.game_id) from None
    DECODED.keep(change.state, g.state.copy())
    record_move()
    return json_response(payload, version=version)


def lost_race(g: Loaded, current: int) -> ApiError:
    record_cas_conflict()
    if g.if_match:
        return stale(current)
    return ApiError(
        409,
        "version_conflict",
        "Another action on this game was applied first; reload and try again.",
        extra={"version": current},
    )
