"""The game transaction: the one path from a request to a stored change of a game.

1. **Load**: the record at the version If-Match names, when this process knows it (no read),
   or a read (with the idempotency look-up and the rate counter); the caller's role, a kept
   answer to replay, If-Match.
2. **Decide**: the view's ``decide(game)`` changes the loaded copy (an engine action, a seat
   change) and names the change's log record and events. A refusal raises: nothing is written.
3. **Advance**: the change restarts the turn clock, then the server makes its own moves (bot
   seats, automatic deals) within the request's budget (:mod:`.background`).
4. **Save**: one compare-and-set of the version with the change's records, table, seat
   digests and the kept answer; what is left for the server is handed to the worker.
5. **Retry**: a decision made on a known record that the compare-and-set refuses, or that was
   refused outright, is made once more on a fresh read (the copy may have been behind), so
   every answer is what a plain read gives. A decision on a fresh read that loses the race is
   412 with If-Match and 409 without (it was judged on an old state), unless the view asks for
   more attempts (a join: other seats' joins must not fail it).

Reads (``GET``) use :func:`load_game` alone. Nothing here knows a rule: the engine decides.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
import redis
from flask import Response

from service import rules
from service.rules import Role, RoleKind, Status
from service.rules.log import By, Kind, Record, encode, rfc3339, seat_events
from service.seating import (
    Applied,
    Seat,
    SeatKind,
    Table,
    open_seat_name,
    server_turns,
)
from service.seating.server_turns import give_to_fill_bot
from service.store import (
    NO_TOKEN,
    Change,
    GameNotFound,
    GameRecord,
    GameStore,
    IdempotentReplay,
    KeptResponse,
    LogFull,
    VersionConflict,
)
from service.store.tokens import hash_token, invite_digest, new_invite

from .background import hand_over, queue_when_stored, request_budget, server_due
from .caching import CachePolicy, use_policy
from .codes import Problem
from .config import settings
from .etag import check_if_match, if_match_version, stale
from .idempotency import MIN_CREATE_KEY, request_idempotency_key
from .limits import counted, rate_limited
from .notifications import notify, notify_if_stored
from .observability import record_cas_conflict, record_move
from .owed import NotYet, owe, write_or_owe
from .presence import mark_alone, mark_due, mark_undue, marked, present, read_due, remember
from .problems import ApiError, RateLimitPolicy, storage_full
from .ratings import ends_rated_game, finish_pending, rate_game
from .records import DECODED, KNOWN, lobby_kind, table_of
from .store_access import store
from .web import UNAUTHORIZED_HEADERS, bearer_token, json_response, missing_token

#: The worker reads again when a person acted between its read and its write; past this many
#: times in a row it leaves the game for its next job.
SERVER_ATTEMPTS = 3


@dataclass
class Loaded:
    record: GameRecord
    state: rules.GameState
    role: Role
    token: str | None
    idem_key: str | None
    if_match: bool  # the request named a version (If-Match) and the game is at it
    table: Table
    known: bool = False  # judged on this process's copy, not on a read
    scope: str | None = None  # the caller's secret keying its kept answers (token or invite)
    seen: tuple[int, int] | None = None  # the caller's due presence mark (seat, ms), unwritten

    @property
    def seat(self) -> int | None:
        return self.role.seat

    def view(self, version: int | None = None) -> dict[str, Any]:
        """The game view for the caller: a seat sees its hand, anyone else the public view;
        on its turn, a seat also gets its legal moves."""
        body = {
            "game_id": self.record.game_id,
            "version": self.record.version if version is None else version,
            **rules.observe(self.state, self.role).to_json(),
        }
        moves = rules.turn_moves(self.state, self.role)
        if moves is not None:
            body["legal_moves"] = [move.to_json() for move in moves]
        seats = list(present(self.record.game_id, self.state.n_players))  # a shared list
        if self.seat is not None:
            seats[self.seat] = True  # the caller is at the table; its mark may be on its way
        return table_view(body, self.table, seats)


#: An answer's status and body, from the game after the change, its version and what was applied.
Answer = Callable[[Loaded, int, Sequence[Applied]], tuple[int, dict[str, Any]]]


@dataclass
class Decision:
    """A change decided on a loaded game: its record and events, the seat token digests when
    they change, fields added to the answer, and the answer itself when it is not the caller's
    view with the events. ``record`` None: nothing changes (no entry, no write). ``secret``:
    the answer holds a credential (a token, an invite), so a copy kept for an Idempotency-Key
    is sealed under that key (:mod:`service.store.sealed`)."""

    record: Record | None
    events: list[rules.Event]
    seat_digests: list[bytes] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    answer: Answer | None = None
    secret: bool = False
    rematch: bytes = b""  # a rematch's id and sealed tokens, stored with the change
    spends: str | None = None  # a one-time ticket's key, spent by the same compare-and-set
    # The seat the caller takes with a new token (a join, a seek, a claim): taking it is its
    # holder's request, so the change marks it present (the caller's own token is not it).
    takes: int | None = None


Decide = Callable[[Loaded], Decision]


class _Refused(Exception):
    """The compare-and-set refused the change: the version moved to ``current``."""

    def __init__(self, current: int) -> None:
        self.current = current


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def transact(
    game_id: str,
    decide: Decide,
    *,
    need: RoleKind | None = None,
    known: bool = False,
    keyed: bool = True,
    attempts: int = 1,
    scope: str | None = None,
) -> Response:
    """Load, decide, advance and save one change of the game; the answer. ``known``: a record
    this process knows at the If-Match version may stand in for the read. ``keyed``: the
    request takes Idempotency-Key and If-Match. ``attempts``: fresh decisions made before a
    lost race is answered. ``scope``: see :func:`load_game`."""
    if known:
        g = _known_game(game_id, need)
        if g is not None:
            try:
                return _apply_marked(g, decide, verified=False)
            except (ApiError, rules.RulesError, _Refused):
                pass  # the copy may have been behind: decide again on the stored record
    for attempt in range(1, attempts + 1):
        g = load_game(game_id, need, mutating=keyed, scope=scope, mark=False, view=True)
        try:
            return _apply_marked(g, decide)
        except _Refused as refused:
            if attempt == attempts:
                raise lost_race(g, refused.current) from None
    raise AssertionError("attempts must be at least 1")


def server_moves(
    state: rules.GameState, table: Table, record: Record, events: list[rules.Event], version: int
) -> list[Applied]:
    """A change at ``version``, with its clock restarted, then the server's moves after it
    that fit the request's budget."""
    table.restart_clock(state, events, record.at_ms)
    return [
        Applied(record, events),
        *server_turns(state, table, record.at_ms, version, request_budget()),
    ]


def _apply_marked(g: Loaded, decide: Decide, *, verified: bool = True) -> Response:
    """``_apply``, with the caller's presence mark, when due, stored with the change (no
    round trip of its own), or written alone when nothing is stored. ``verified``: the
    caller's seat was read from the store, not from a copy this process kept; a refusal
    judged on a copy marks nothing (its token may have lost the seat since), and leaves the
    mark due for the read that decides again."""
    seat = g.seat
    due = None if seat is None else mark_due(g.record.game_id, seat)
    g.seen = None if seat is None or due is None else (seat, due)
    try:
        return _apply(g, decide)
    except redis.RedisError:
        g.seen = None  # Redis is away: a mark would only wait for it again
        raise
    except (ApiError, rules.RulesError, _Refused):
        if not verified and g.seen is not None:
            mark_undue(g.record.game_id, *g.seen)
            g.seen = None
        raise
    finally:
        if g.seen is not None:
            mark_alone(g.record.game_id, *g.seen)


def _apply(g: Loaded, decide: Decide) -> Response:
    decision = decide(g)
    if decision.record is None:
        return _unchanged(g, decision)
    _settle_claims(g)
    applied = server_moves(g.state, g.table, decision.record, decision.events, g.record.version + 1)
    return _save(g, decision, applied)


def _unchanged(g: Loaded, decision: Decision) -> Response:
    """The answer to a request that changes nothing: the game as it is, nothing written."""
    use_policy(CachePolicy.PRIVATE)
    status, body = (decision.answer or _view_answer)(g, g.record.version, [])
    body.update(decision.extra)
    return json_response(body, status, version=g.record.version)


def _save(g: Loaded, decision: Decision, applied: Sequence[Applied]) -> Response:
    """Store ``applied`` with compare-and-set; the answer (kept with the Idempotency-Key)."""
    use_policy(CachePolicy.PRIVATE)  # an action's answer shows the actor's hand
    version = g.record.version + len(applied)
    status, body = (decision.answer or _view_answer)(g, version, applied)
    body.update(decision.extra)
    payload = orjson.dumps(body)
    kept = KeptResponse(status, payload, decision.secret) if g.idem_key is not None else None
    change = change_of(g, applied, decision.seat_digests, decision.rematch, decision.spends)
    taken = None if decision.takes is None else (decision.takes, applied[0].record.at_ms)
    seen = taken or g.seen  # the change carries one mark: a caller's own is then written alone
    try:
        store().save(
            g.record.game_id,
            g.record.version,
            change,
            kept=kept,
            token=g.scope,
            idempotency_key=g.idem_key,
            dealt=lives_long(g.state, g.table),
            seen=seen,
            due=server_due(g.state, g.table, now_ms()),
        )
        if seen is not None:
            marked(g.record.game_id, *seen)
        if seen == g.seen:
            g.seen = None  # stored with the change
    except VersionConflict as conflict:
        raise _Refused(conflict.current) from None
    except GameNotFound:
        raise not_found(g.record.game_id) from None
    except LogFull:
        raise log_full() from None
    except redis.RedisError:
        _maybe_stored(g, change, version, applied)
        raise
    _stored(g, change, version, applied)
    return json_response(payload, status, version=version)


def _maybe_stored(g: Loaded, change: Change, version: int, applied: Sequence[Applied]) -> None:
    """After a compare-and-set that failed with a Redis error: the change may be stored yet (a
    slow or hung Redis runs a command its client gave up on), though answered 503. The worker
    looks at the game (its bots or clock), and the webhooks the change owes are sent if it
    turns out stored; neither waits on Redis now."""
    game_id = g.record.game_id
    first = (g.record.version, change.records[0])
    queue_when_stored(store(), game_id, first)
    notify_if_stored(game_id, g.state, g.table, applied, version, first)
    if change.table is not None:  # seats may have changed
        list_as_seated_if_stored(game_id, g.state, g.table, first)


def _view_answer(g: Loaded, version: int, applied: Sequence[Applied]) -> tuple[int, dict[str, Any]]:
    body = g.view(version)
    body["events"] = [
        # An answer's events are the caller's seat's (the host's are the public's: the log,
        # not an action's answer, is where the host reads every tile).
        event
        for step in applied
        for event in rules.visible_events(step.events, g.seat)
    ]
    return 200, body


def _stored(g: Loaded, change: Change, version: int, applied: Sequence[Applied]) -> None:
    """After a stored change: the worker's share, what it owes to webhooks, and this
    process's copies of the game."""
    hand_over(store().work, g.record.game_id, g.state, g.table, now_ms())
    _announce(g, change, applied, version)
    KNOWN.keep(g.record.after(change, version))
    DECODED.keep(change.state, g.state)  # the request is done with it: only the answer is left
    record_move()


def play_server_moves(
    game_id: str, spent: Callable[[], bool], played: Callable[[int], None] = lambda _: None
) -> tuple[bool, int | None]:
    """The worker's transaction: the game's server moves until ``spent()``, stored (``played``
    is told how many, for the worker's metrics); whether more are left now, else the turn
    clock's deadline to come back at."""
    for _ in range(SERVER_ATTEMPTS):
        try:
            record = store().load(game_id)
        except GameNotFound:
            store().set_due(game_id, 0, None)  # out of the due set: nothing to sweep for
            return False, None
        g = _loaded(record, Role.HOST, None, None)
        now = now_ms()
        close_seek_if_filling(game_id, g.table, now)
        opened, digests = open_unclaimed(g, now)
        applied = opened + server_turns(g.state, g.table, now, record.version, spent)
        due = server_due(g.state, g.table, now)
        if not applied:
            # The due set holds what the stored record said when it was written; a look that
            # finds nothing to do writes what it says now (unless a change came since), or the
            # sweep would queue the game again at each turn.
            store().set_due(game_id, record.version, due)
        else:
            stored = _store_server_moves(g, applied, digests, due)
            if stored is None:
                return False, None  # nothing more can be stored, or the game expired meanwhile
            if not stored:
                continue  # a person acted meanwhile: decide again on what is stored
            played(len(applied))
        more = due == now
        return more, None if more else due
    return True, None


def stored_due(record: GameRecord, now: int) -> int | None:
    """When the server owes the stored game its next change (see :func:`server_due`): what
    the worker's backfill writes for a game stored without it."""
    state = DECODED.get(record.state)
    return server_due(state, table_of(record, state), now)


def _store_server_moves(
    g: Loaded, applied: Sequence[Applied], digests: list[bytes] | None, due: int | None
) -> bool | None:
    """Store the worker's moves; False when a person acted since the read, None when they
    cannot be stored (the log full, or the game gone): the game is owed nothing more."""
    game_id, version = g.record.game_id, g.record.version
    change = change_of(g, applied, digests)
    try:
        store().save(game_id, version, change, dealt=lives_long(g.state, g.table), due=due)
    except VersionConflict:
        return False
    except (LogFull, GameNotFound):
        store().set_due(game_id, version, None)
        return None
    _announce(g, change, applied, version + len(applied))
    return True


def _announce(g: Loaded, change: Change, applied: Sequence[Applied], version: int) -> None:
    """What a stored change owes outside its game, whoever made it: webhooks, ratings at a
    rated game's end, and the lobby's listing when seats may have changed."""
    game_id = g.record.game_id
    notify(game_id, g.state, g.table, applied, version)
    if change.ends_rated:
        rate_game(game_id, g.state, g.table)
    if change.table is not None:
        list_as_seated(game_id, g.state, g.table)
    keep_seek_bucket(game_id, g.state, g.table)


def keep_seek_bucket(game_id: str, state: rules.GameState, table: Table) -> None:
    """A seek table with a seat open renews its bucket with each change: its own keys are
    renewed in another slot, and a bucket gone under it offers its open seat to no seeker
    (owed if Redis refuses: the change is stored)."""
    bucket = table.listing.seek
    if bucket and not table.full and state.status != Status.GAME_OVER:
        lobby = store().lobby
        write_or_owe(f"keep-seek:{game_id}", lambda: lobby.keep(bucket))


@dataclass
class NewGame:
    """A game about to be stored: what to keep, and what the creator is told once."""

    state: rules.GameState
    table: Table
    applied: list[Applied]
    tokens: list[str | None]
    invites: list[str | None]
    host_token: str  # sees every tile: a referee's credential, never a seated player's
    table_token: str  # deals and changes seats, and sees what the public sees
    game_id: str | None = None  # an id chosen before the game exists (a seek table's)
    # A rematch keeps its finished game's tokens: their digests (host, table, seats).
    keeps: tuple[bytes, bytes, Sequence[bytes]] | None = None
    # The seat its maker takes, present at once as a join's is: making it is their request.
    present: int | None = None

    @property
    def seat_digests(self) -> list[bytes]:
        if self.keeps is not None:
            return list(self.keeps[2])
        return [NO_TOKEN if t is None else hash_token(t) for t in self.tokens]


def check_create(key: str | None) -> None:
    """Before a game or a player is made: the answer kept for a repeated Idempotency-Key, or
    no room."""
    replay_unscoped(key)
    if store().memory.full(settings().storage_full_percent):
        raise storage_full()


def replay_unscoped(key: str | None) -> None:
    """Raise the answer kept for ``key`` by a request that names no game (a create, a seek),
    if there is one."""
    if key is not None and (kept := store().kept_create(key)) is not None:
        raise IdempotentReplay(kept)


def keep_unscoped(key: str | None, kept: KeptResponse, ttl: int | None = None) -> None:
    """Keep the answer to such a request under ``key`` (for ``ttl`` seconds at most); raise
    the one a concurrent request with the same key kept first, which is then the answer."""
    if key is not None and (first := store().keep_create(key, kept, ttl)) is not None:
        raise IdempotentReplay(first)


def keep_answer(key: str | None, response: Response, ttl: int | None = None) -> None:
    """:func:`keep_unscoped` for an answer already made."""
    keep_unscoped(key, KeptResponse(response.status_code, response.get_data()), ttl)


#: What a token-scoped key is sealed under besides the key: a digest of the token that Redis
#: does not hold (it holds :func:`hash_token`'s), so that a short key is no weak seal.
_TOKEN_SCOPE = b"idempotency-scope\n"


def token_scoped_key() -> str | None:
    """The request's Idempotency-Key, bound to its bearer token too: for a token's requests
    that change no game but hand out a secret (a ticket, a webhook's), so that only the same
    token's retry gets the first answer."""
    key = request_idempotency_key()
    if key is None:
        return None
    scope = hashlib.sha256(_TOKEN_SCOPE + (bearer_token() or "").encode()).hexdigest()
    return f"{key}\n{scope}"


def answered_once(answer: Callable[[], Response], ttl: int | None = None) -> Response:
    """``answer()``, kept (sealed) under :func:`token_scoped_key` for ``ttl`` seconds at most
    (what it hands out may expire sooner than a kept answer would): a retry with the same key
    gets the first answer, and nothing is issued twice. Call it once the caller is known to
    hold the right: a replay skips every check ``answer`` makes."""
    key = token_scoped_key()
    replay_unscoped(key)
    response = answer()
    keep_answer(key, response, ttl)
    return response


def create(
    game: NewGame,
    key: str | None,
    answer: Callable[[str], dict[str, Any]],
    location: Callable[[str], str],
) -> Response:
    """Store a new game with its first records (its server moves made within the budget),
    hand the rest to the worker; ``answer(game_id)`` is kept sealed under ``key``."""
    table, n = game.table, game.state.n_players
    records = [encode(step.record, table.created_ms, n, table.tick_ms) for step in game.applied]
    # A table of bots alone may play its whole game within its creation's budget.
    events = [event for step in game.applied for event in step.events]
    ends_rated = ends_rated_game(game.state, table, events)
    game_id = store().create(
        rules.dumps(game.state),
        game.host_token,
        game.seat_digests,
        records,
        table=orjson.dumps(table.to_json()),
        dealt=lives_long(game.state, game.table),
        table_token=game.table_token,
        game_id=game.game_id,
        keeps=None if game.keeps is None else game.keeps[:2],
        due=server_due(game.state, table, table.created_ms),
        ends_rated=ends_rated,
    )
    if game.present is not None:
        mark_alone(game_id, game.present, table.created_ms)
    hand_over(store().work, game_id, game.state, table, table.created_ms)
    notify(game_id, game.state, table, game.applied, len(game.applied))
    if table.listing.public and not table.full:
        list_in_lobby(store(), game_id, game.state, table)
    elif table.listing.seek:
        # Its seeker's claim put it in its bucket; bots took every other seat at once (a
        # fill of 0): no later seek may be offered one.
        delist_if_full(game_id, table)
    payload = orjson.dumps(answer(game_id))
    keep_unscoped(key, KeptResponse(201, payload))  # if another won, the game made here expires
    if ends_rated:
        # Once its answer is kept: a game answered by none is never rated (a retry with the
        # key makes its own game, or gets this one, whose next read rates it).
        rate_game(game_id, game.state, table)
    headers = {"Location": location(game_id)}
    return json_response(payload, 201, version=len(game.applied), headers=headers)


def list_as_seated(game_id: str, state: rules.GameState, table: Table) -> None:
    """After a change of seats: a public table with a seat open again (reopened by its host, or
    a rematch seat nobody claimed) is listed again, as API.md lists every public game with open
    seats; a full one leaves the lobby."""
    if table.listing.public and not table.full and state.status != Status.GAME_OVER:
        list_in_lobby(store(), game_id, state, table)
    else:
        delist_if_full(game_id, table)


def list_in_lobby(games: GameStore, game_id: str, state: rules.GameState, table: Table) -> None:
    """List a public table, by its creation time (owed if Redis refuses)."""
    lobby, kind, listed = games.lobby, lobby_kind(state, table), {game_id: table.created_ms}
    write_or_owe(f"list:{game_id}", lambda: lobby.add(kind, listed))


def delist_if_full(game_id: str, table: Table) -> None:
    """A public table leaves the lobby, and a seek table its bucket, once every seat is taken
    (owed if Redis refuses: the change that filled it is stored)."""
    _delist_if_full(store(), game_id, table)


def _delist_if_full(games: GameStore, game_id: str, table: Table) -> None:
    lobby = games.lobby
    if table.full and table.listing.public:
        write_or_owe(f"delist:{game_id}", lambda: lobby.remove(game_id))
    if table.full and (bucket := table.listing.seek):
        write_or_owe(f"close:{game_id}", lambda: lobby.close(bucket, game_id))


def list_as_seated_if_stored(
    game_id: str, state: rules.GameState, table: Table, first: tuple[int, bytes]
) -> None:
    """:func:`list_as_seated`, owed, after a compare-and-set that failed with a Redis error: a
    slow or hung Redis may run it after its client gave up, and a table that change filled
    would stay listed, offered to seekers it cannot seat, and a public table whose seat it
    opened again (its host's reopening) would stay out of the lobby. Once Redis answers, the
    table is listed or delisted as it is seated then, if the change turns out stored (``first``,
    the log index and bytes of its first record, is in the log; looked for again while the log
    does not reach it): changes stored since, which listed or delisted it themselves, may have
    seated it otherwise than this one did. A table whose change was lost is left as it was."""
    relist = table.listing.public and not table.full and state.status != Status.GAME_OVER
    if not (relist or (table.full and (table.listing.public or table.listing.seek))):
        return
    games = store()

    def list_or_delist() -> None:
        held = games.holds_record(game_id, *first)
        if held is None:
            raise NotYet  # a slow Redis may run the change yet
        if not held:
            return
        record = games.peek([game_id])[0]
        if record is None:
            return  # gone
        now_state = DECODED.get(record.state)
        now_table = table_of(record, now_state)
        listing = now_table.listing
        if listing.public and not now_table.full and now_state.status != Status.GAME_OVER:
            games.lobby.add(lobby_kind(now_state, now_table), {game_id: now_table.created_ms})
            return
        if not now_table.full:
            return
        if listing.public:
            games.lobby.remove(game_id)
        if listing.seek:
            games.lobby.close(listing.seek, game_id)

    digest = hashlib.blake2b(first[1], digest_size=8).hexdigest()
    owe(f"seated:{game_id}:{digest}", list_or_delist)


def reopen_if_held(
    games: GameStore, game_id: str, digest: bytes, name: Callable[[int], str]
) -> None:
    """Reopen the seat that holds the token of ``digest``, if one does (named ``name(seat)``
    again): a seat taken by a change whose request failed (a Redis error, answered 503) but
    which Redis ran all the same. Nobody holds that token, so the seat would wait for nobody.
    A rated game dealt since gives it to a bot instead (:func:`_vacate`). Not found (yet: a
    slow Redis may run it later), it is looked for again (owed.NotYet). Runs on the owing
    thread: no app context, so the store comes in ``games``."""
    for _ in range(SERVER_ATTEMPTS):
        try:
            record = games.load(game_id)
        except GameNotFound:
            raise NotYet from None  # a table whose making is yet to run
        if digest not in record.seat_digests:
            raise NotYet
        seat = record.seat_digests.index(digest)
        g = _loaded(record, Role.HOST, None, None)
        now = now_ms()
        vacated = _vacate(g, seat, name(seat), now)
        applied = [Applied(vacated, seat_events(vacated))]
        change = change_of(g, applied, with_seat_token(g, seat, None))
        due = server_due(g.state, g.table, now)
        try:
            games.save(game_id, record.version, change, dealt=lives_long(g.state, g.table), due=due)
        except VersionConflict:
            continue
        except (LogFull, GameNotFound):
            return
        hand_over(games.work, game_id, g.state, g.table, now)
        if g.table.full:
            _delist_if_full(games, game_id, g.table)  # the failed seek gave the seat back
        else:
            _relist(games, game_id, g.state, g.table, now)
        return


def _vacate(g: Loaded, seat: int, name: str, now: int) -> Record:
    """Give up the seat whose token nobody holds: reopened (named ``name``), unless the game is
    rated and was dealt (the change that took the seat may have filled the table and dealt):
    such a game's seat reopens only before its first deal (``409 rated_game_dealt``), so it
    goes to the bot a seek table fills with, named as a fill's is. Either way the record
    carries the name, so the log's replay names the seat as the state does."""
    if g.table.listing.rated and g.state.status is not Status.WAITING_DEAL:
        return give_to_fill_bot(g.state, g.table, seat, now)
    g.table.seats[seat] = Seat(SeatKind.OPEN)
    g.state.players[seat] = name
    return Record(Kind.SEAT, By.AUTO, now, seat, name=name)


def _relist(games: GameStore, game_id: str, state: rules.GameState, table: Table, now: int) -> None:
    """A table with a seat open again is listed again, and back in its seek bucket if it had
    left it (filled by the change that took the seat), first in line; not once bots are to
    fill it. Owed if Redis refuses: the seat is open already, and a look at it again would
    find nothing to reopen."""
    lobby = games.lobby
    if table.listing.public:
        list_in_lobby(games, game_id, state, table)
    fill_at = table.listing.fill_at_ms
    if (bucket := table.listing.seek) and (fill_at is None or now < fill_at):
        taken = sum(1 for seat in table.seats if seat.kind != SeatKind.OPEN)
        write_or_owe(f"reopen-seek:{game_id}", lambda: lobby.reopen(bucket, game_id, taken))


def open_unclaimed(g: Loaded, now: int) -> tuple[list[Applied], list[bytes] | None]:
    """A rematch whose claim window is over, or whose person seats are all claimed: its claims
    close, and its person seats nobody claimed become open (their tokens stop working here),
    named as open seats: they are no longer their old players' places. The changes, and the
    seat digests after them."""
    listing = g.table.listing
    if not listing.rematch_of or listing.claim_until_ms is None:
        return [], None
    if now < listing.claim_until_ms and not _all_claimed(g.table, listing.rematch_of):
        return [], None
    g.table.listing = replace(listing, claim_until_ms=None)
    claimed = store().close_rematch_claims(listing.rematch_of)
    if claimed is None:  # the finished game expired: who claimed is not known, open nobody
        return [], None
    applied, digests = [], list(g.record.seat_digests)
    for n, seat in enumerate(g.table.seats):
        if seat.kind == SeatKind.PERSON and str(n) not in claimed:
            g.table.seats[n] = Seat(SeatKind.OPEN, invite=invite_digest(new_invite()))
            digests[n] = NO_TOKEN
            name = g.state.players[n] = open_seat_name(n)
            record = Record(Kind.SEAT, By.AUTO, now, n, name=name)
            applied.append(Applied(record, seat_events(record)))
    return applied, digests if applied else None


def _settle_claims(g: Loaded) -> None:
    """A rematch whose person seats are all claimed has no seat left to open: its claims close
    (a seat given to a bot meanwhile cannot be claimed by its old player), and the change made
    now stores its claim window closed. The worker's closing of such a window changes nothing
    it could store, and a window left stored would hand every later change to the worker for
    nothing. One read of the claims, only while a window is stored; closing them is harmless
    if this change is refused, since every person seat has claimed whatever it stores."""
    listing = g.table.listing
    waiting = listing.rematch_of and listing.claim_until_ms is not None
    if waiting and _all_claimed(g.table, listing.rematch_of):
        store().close_rematch_claims(listing.rematch_of)
        g.table.listing = replace(listing, claim_until_ms=None)


def _all_claimed(table: Table, finished: str) -> bool:
    people = {str(n) for n, seat in enumerate(table.seats) if seat.kind == SeatKind.PERSON}
    return people <= store().rematch_claims(finished)


def close_seek_if_filling(game_id: str, table: Table, now: int) -> None:
    """A seek table about to be filled with bots takes no more seekers: out of its bucket
    first, then its open seats go to bots."""
    fill_at = table.listing.fill_at_ms
    if table.listing.seek and fill_at is not None and now >= fill_at and not table.full:
        store().lobby.close(table.listing.seek, game_id)


def table_view(body: dict[str, Any], table: Table, here: list[bool]) -> dict[str, Any]:
    """The view's table fields: each player's ``bot``, ``open`` and ``present``, and the turn
    clock. Only a person's seat is present: an open or a bot seat has nobody holding it,
    whatever a copy of the presence read before the seat changed hands says."""
    for player, seat, seen in zip(body["players"], table.seats, here, strict=True):
        player["bot"] = seat.bot
        player["open"] = seat.kind == SeatKind.OPEN
        player["present"] = seen and seat.kind == SeatKind.PERSON
    deadline = table.deadline_ms
    body["clock"] = {
        "turn_seconds": table.turn_seconds,
        "deadline": None if deadline is None else rfc3339(deadline),
    }
    return body


def lives_long(state: rules.GameState, table: Table) -> bool:
    """Whether the game lives GAME_TTL_SECONDS: a round was ever dealt, or bots are to take its
    open seats (a seek table's fill, up to an hour away, must find it there). Else it lives
    only UNDEALT_TTL_SECONDS from its last change: a fill as late as that found it gone."""
    return state.round > 0 or table.listing.fill_at_ms is not None


def log_full() -> ApiError:
    return ApiError(Problem.LOG_FULL, "This game's log holds as many entries as a game may.")


def not_found(game_id: str) -> ApiError:
    return ApiError(Problem.GAME_NOT_FOUND, f"There is no game {game_id!r} (or it expired).")


def load_game(
    game_id: str,
    need: RoleKind | None = None,
    *,
    mutating: bool = False,
    query: bool = False,
    scope: str | None = None,
    cost: int = 1,
    mark: bool = True,
    view: bool = False,
) -> Loaded:
    """The game and the caller's role, after every check a request passes before the engine:
    token, rate limit, role, a kept response to replay, and (when ``mutating``) If-Match.
    ``query``: the token may come as the ``access_token`` parameter. ``scope``: the secret
    that keys a tokenless caller's Idempotency-Key (a join's invite). ``cost``: the request's
    weight against the rate limit (the work of several requests counts as several).
    ``mark``: mark a seat's presence, in the read (a transaction marks it with its change).
    ``view``: the answer shows the game view, so the read brings the presence hash when this
    process's copy of it is due (:func:`present` then needs no round trip of its own)."""
    token = _token(need, query)
    key = scoped_key(scope) if mutating else None
    owner = token if scope is None else scope
    seen = mark_due(game_id, hash_token(token)) if mark and token is not None else None
    record = _read(game_id, token, key, owner, cost, view and read_due(game_id), seen)
    _check_rate(record, token)
    role = _role(record, token, need)
    if record.kept is not None:
        raise IdempotentReplay(record.kept)
    g = _loaded(record, role, token, key)
    blind_host(g, need)
    g.scope = owner
    g.if_match = check_if_match(g.record.version) if mutating else False
    return g


def scoped_key(scope: str | None) -> str | None:
    """The request's Idempotency-Key. One that a shared secret scopes (a join's invite, a
    transfer's ticket) must be as long as a creation's: an invite link goes to a whole group,
    and anyone holding it who guessed a short key (and read the joiner's name off the public
    view) would be answered the joiner's seat token, kept for a day."""
    return request_idempotency_key(1 if scope is None else MIN_CREATE_KEY)


def _known_game(game_id: str, need: RoleKind | None) -> Loaded | None:
    """The game from the record this process knows at the version If-Match names, when
    nothing needs a read: no Idempotency-Key to look up, no rate limit to count."""
    version = if_match_version()
    if version is None or settings().rate_limit_per_minute:
        return None
    if request_idempotency_key() is not None:
        return None
    record = KNOWN.get(game_id, version)
    if record is None:
        return None
    token = _token(need, False)
    g = _loaded(record, _role(record, token, need), token, None)
    blind_host(g, need)
    g.if_match, g.known = True, True
    return g


def blind_host(g: Loaded, need: RoleKind | None = None) -> None:
    """A rated game's host token sees what its table token sees until the game is over: a
    creator seated at the table holds it, and a rating is only worth something if nobody at
    the table saw a hidden tile. What only the host may do then is ``409 game_not_over``."""
    if not (g.role.is_host and g.table.listing.rated and g.state.status != Status.GAME_OVER):
        return
    g.role = Role.TABLE
    if need is RoleKind.HOST:
        raise ApiError(
            Problem.GAME_NOT_OVER, "A rated game's hidden tiles are shown once it is over."
        )


def _loaded(record: GameRecord, role: Role, token: str | None, key: str | None) -> Loaded:
    state = DECODED.get(record.state)
    table = table_of(record, state)
    finish_pending(record, state, table)
    return Loaded(record, state, role, token, key, False, table)


def _token(need: RoleKind | None, query: bool) -> str | None:
    token = bearer_token(query=query)
    if need is not None and token is None:
        raise missing_token("This request needs a bearer token.")
    return token


def _read(
    game_id: str,
    token: str | None,
    key: str | None,
    scope: str | None,
    cost: int,
    presence: bool,
    seen: int | None,
) -> GameRecord:
    try:
        record = store().load(
            game_id,
            token=token,
            idempotency_key=key,
            scope=scope,
            cost=cost,
            presence=presence,
            seen=seen,
        )
    except GameNotFound:
        raise not_found(game_id) from None
    if record.presence is not None:
        remember(game_id, record.presence)
    if record.kept is None:
        KNOWN.keep(record)
    return record


def _check_rate(record: GameRecord, token: str | None) -> None:
    limit = settings().rate_limit_per_minute
    if not limit or token is None:
        return  # requests without a token are not counted
    quota = counted(RateLimitPolicy.TOKEN, limit, record.rate_count, record.rate_reset)
    if record.rate_count > limit:
        detail = f"More than {limit} requests a minute with this token on this game."
        raise rate_limited(detail, quota)


def _role(record: GameRecord, token: str | None, need: RoleKind | None) -> Role:
    """Who the token is in this game (401 for a stranger's token, 403 for the wrong role)."""
    if token is None:
        role = Role.PUBLIC
    else:
        found = record.identify(token)
        if found is None:
            raise ApiError(
                Problem.INVALID_TOKEN,
                "The token is not one of this game's.",
                headers=UNAUTHORIZED_HEADERS,
            )
        role = found
    if need is RoleKind.SEAT and not role.is_seat:
        raise ApiError(Problem.NOT_A_SEAT, "Only a seat token may do this.")
    if need is RoleKind.HOST and not role.is_host:
        raise ApiError(Problem.NOT_HOST, "Only the host token may do this.")
    if need is RoleKind.TABLE and not role.runs_table:
        raise ApiError(Problem.NOT_HOST, "Only the table token (or the host token) may do this.")
    return role


def read_log(g: Loaded) -> list[bytes]:
    """The game's whole log (its history)."""
    return store().log(g.record.game_id)[1]


def with_seat_token(g: Loaded, seat: int, token: str | None) -> list[bytes]:
    """The game's seat token digests with ``seat``'s replaced: ``token``'s, or none at all
    (the seat's old token stops working)."""
    digests = list(g.record.seat_digests)
    digests[seat] = NO_TOKEN if token is None else hash_token(token)
    return digests


def change_of(
    g: Loaded,
    applied: Sequence[Applied],
    seat_digests: Sequence[bytes] | None = None,
    rematch: bytes = b"",
    spends: str | None = None,
) -> Change:
    """The store's change for ``applied``: new state, encoded records, seats, and the table
    only when it changed (most moves leave it as it was: nothing to send or store)."""
    created, n = g.table.created_ms, g.state.n_players
    events = [event for step in applied for event in step.events]
    ended = [step.record.at_ms for step in applied if rules.ends_game(step.events)]
    if ended:
        g.table.listing = replace(g.table.listing, ended_ms=ended[0])
    table = orjson.dumps(g.table.to_json())
    return Change(
        rules.dumps(g.state),
        [encode(step.record, created, n, g.table.tick_ms) for step in applied],
        seat_digests,
        None if table == g.record.table else table,
        ends_rated=ends_rated_game(g.state, g.table, events),
        rematch=rematch,
        spends=spends,
    )


def lost_race(g: Loaded, current: int) -> ApiError:
    record_cas_conflict()
    if g.if_match:
        return stale(current)
    return ApiError(
        Problem.VERSION_CONFLICT,
        "Another action on this game was applied first; reload and try again.",
        extra={"version": current},
    )
