"""The steps every game view shares: authenticate, load, check preconditions, save, respond.

Views call :func:`load_game` then either answer from the loaded state or hand an engine call
to :func:`commit`. Nothing here knows a rule; the engine (``service.rules``) decides.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import orjson
from flask import Response
from flask import g as request_state

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
from .etag import check_if_match, if_match_version, stale
from .idempotency import request_idempotency_key
from .limits import rate_limited
from .observability import record_cas_conflict, record_move
from .problems import ApiError
from .remembered import Remembered
from .store_access import store
from .web import UNAUTHORIZED_HEADERS, bearer_token, json_response

T = TypeVar("T")


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


class Decoded(Generic[T]):
    """Values decoded from stored bytes, once per process, copied per request (a copy costs a
    fifth of a decode). Legal-moves and then the move of one turn load the same bytes, and the
    process that stored a change is often asked for the next request of its game. A kept value
    is never handed out, so no request sees another's changes."""

    def __init__(self, size: int, decode: Callable[[bytes], T], copy: Callable[[T], T]) -> None:
        self.decode = decode
        self.copy = copy
        self.kept: Remembered[bytes, T] = Remembered(size)

    def get(self, raw: bytes) -> T:
        kept = self.kept.get(raw)
        if kept is None:
            kept = self.decode(raw)
            self.kept.put(raw, kept)
        return self.copy(kept)

    def keep(self, raw: bytes, value: T) -> None:
        """Remember ``value`` (which its owner no longer changes) as the decoding of ``raw``."""
        self.kept.put(raw, value)


def _decode_state(raw: bytes) -> rules.GameState:
    """The state, with the legal moves of the seat on turn already made: its copies share
    them, so legal-moves and the move that follows (which checks against them) do not each
    generate them again."""
    state = rules.loads(raw)
    if state.turn is not None:
        rules.legal_moves(state, state.turn)
    return state


def _decode_table(raw: bytes) -> Table:
    return Table.from_json(orjson.loads(raw))


# A few KB each.
DECODED = Decoded(256, _decode_state, rules.GameState.copy)
DECODED_TABLES = Decoded(256, _decode_table, Table.copy)


class KnownRecords:
    """Each game's record as this process last read or stored it (a version names a whole
    record: every stored change moves it). A move that names that version in If-Match is judged
    on this copy and sent straight to the compare-and-set, one Redis round trip instead of two;
    see :func:`on_known_record` for when the copy was behind."""

    def __init__(self, size: int) -> None:
        self.by_game: Remembered[str, GameRecord] = Remembered(size)

    def get(self, game_id: str, version: int) -> GameRecord | None:
        record = self.by_game.get(game_id)
        return record if record is not None and record.version == version else None

    def keep(self, record: GameRecord) -> None:
        if record.kept is not None or record.rate_count:
            record = replace(record, kept=None, rate_count=0, rate_reset=0)
        self.by_game.put(record.game_id, record)


KNOWN = KnownRecords(1024)
# Set on the request while it acts on a known record whose compare-and-set has not yet succeeded.
SPECULATING = "acting_on_known_record"


class Unconfirmed(Exception):
    """The compare-and-set refused a change judged on a known record: it was behind."""


def on_known_record(run: Callable[[bool], Response]) -> Response:
    """``run(True)`` may act on a known record; if that run is refused in any way before its
    compare-and-set succeeded (the copy may have been behind, and nothing was written), the
    request is decided again by ``run(False)`` on the stored record, so every answer is the one
    a plain run gives."""
    try:
        return run(True)
    except (ApiError, rules.RulesError, Unconfirmed):
        if not request_state.pop(SPECULATING, False):
            raise
    return run(False)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def table_of(record: GameRecord, state: rules.GameState) -> Table:
    """The stored table; a game stored without one has a person in every seat."""
    if not record.table:
        return Table.of_people(state.n_players)
    return DECODED_TABLES.get(record.table)


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
    game_id: str,
    need: RoleKind | None = None,
    *,
    mutating: bool = False,
    query: bool = False,
    known: bool = False,
) -> Loaded:
    """The game and the caller's role, after every check a request passes before the engine:
    token, rate limit, role, a kept response to replay, and (when ``mutating``) If-Match.
    ``query``: the token may come as the ``access_token`` parameter. ``known``: a record this
    process knows at the If-Match version may stand in for reading it (under
    :func:`on_known_record` only)."""
    token = bearer_token(query=query)
    if need is not None and token is None:
        raise ApiError(
            401, "missing_token", "This request needs a bearer token.", headers=UNAUTHORIZED_HEADERS
        )
    key = request_idempotency_key() if mutating else None
    record = known_record(game_id) if known and key is None else None
    if record is None:
        record = read_record(game_id, token, key)
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


def known_record(game_id: str) -> GameRecord | None:
    """The known record at the version If-Match names, when nothing needs a read: no rate
    limit to count (it is counted with the read)."""
    version = if_match_version()
    if version is None or settings().rate_limit_per_minute:
        return None
    record = KNOWN.get(game_id, version)
    if record is not None:
        setattr(request_state, SPECULATING, True)
    return record


def read_record(game_id: str, token: str | None, key: str | None) -> GameRecord:
    try:
        record = store().load(game_id, token=token, idempotency_key=key)
    except GameNotFound:
        raise not_found(game_id) from None
    if record.kept is None:
        KNOWN.keep(record)
    return record


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
    request_state.pop(SPECULATING, None)
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
    except (VersionConflict, GameNotFound) as refused:
        if request_state.get(SPECULATING):
            raise Unconfirmed() from None
        if isinstance(refused, VersionConflict):
            raise lost_race(g, refused.current) from None
        raise not_found(g.record.game_id) from None
    request_state.pop(SPECULATING, None)  # confirmed: from here on, errors are plain errors
    KNOWN.keep(g.record.after(change, version))
    DECODED.keep(change.state, g.state)  # the request is done with it: only the answer is left
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
