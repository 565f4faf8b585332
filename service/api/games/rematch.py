"""Rematch: the next game of a finished table, with the same rules, table options, seat order
and bot seats.

The first call makes the next game, then appends a ``rematch`` entry naming it to the finished
game's log, so every watcher sees it. The next game takes over the finished game's tokens
(their digests): each seat's token is its token in the next game, the table token runs the
next table, and no new secret is made or stored. A caller takes its place by asking: ``201``
the first time, ``200`` after. A person seat nobody claims within ``REMATCH_CLAIM_SECONDS``
becomes an open seat of the next game (the background worker), its token no longer valid there:
the worker closes the claims as it opens the seats, and a later first claim is refused.
Two first calls at once: one rematch entry wins the compare-and-set; the other's game is never
named (it expires unplayed).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import Response, url_for

from service import rules
from service.rules import RoleKind
from service.rules.log import TICK_MS, By, Kind, Record
from service.seating import Listing, Seat, SeatKind, Table
from service.store import GameNotFound, RematchClosed

from ..background import queue_now
from ..codes import Problem
from ..config import settings
from ..etag import check_if_match
from ..presence import mark_alone, mark_due
from ..problems import ApiError
from ..store_access import store
from ..transaction import (
    Decision,
    Loaded,
    NewGame,
    answered_once,
    create,
    load_game,
    not_found,
    now_ms,
    server_moves,
    transact,
)
from ..web import json_response, missing_token

#: Who claims for the table token, beside seat numbers.
TABLE = "table"


def rematch(game_id: str) -> Response:
    """The caller's place in the next game; a retry with the same Idempotency-Key (and token)
    gets the first answer, once the token is known to hold its seat still."""
    g = caller(game_id)
    return answered_once(lambda: claim_place(g))


def claim_place(g: Loaded) -> Response:
    game_id = g.record.game_id
    check_if_match(g.record.version)  # a first call appends the rematch entry: it is a change
    if not g.table.listing.next_game:
        start(g)
        g = caller(game_id)
    made = g.table.listing.next_game
    who = TABLE if g.seat is None else str(g.seat)
    try:
        first = store().claim_rematch(game_id, who, closes=g.seat is not None)
    except GameNotFound:
        raise not_found(game_id) from None  # it expired since it was read
    except RematchClosed:
        raise ApiError(
            Problem.REMATCH_CLOSED,
            f"This seat was not claimed within {settings().rematch_claim_seconds} s of the "
            "rematch: it is open in the next game, for anyone its table invites.",
        ) from None
    if g.seat is not None:
        _seen(made, g.seat)
    if first and g.seat is not None:
        queue_now(store().work, made)  # the worker closes the claims once all have claimed
    assert g.token is not None
    body: dict[str, Any] = {"game_id": made}
    if g.seat is None:
        body["table_token"] = g.token
    else:
        body.update(seat=g.seat, token=g.token)
    if not first:
        return json_response(body, 200)
    # The caller's place in the next game was made now: a 201 names that game (RFC 9110).
    return json_response(body, 201, headers={"Location": url_for("games.Game", game_id=made)})


def _seen(made: str, seat: int) -> None:
    """A claim is a request of the seat's holder, who holds the same seat of the next game: it
    is present there, as a join's seat is (at most every few seconds a seat, as any request)."""
    due = mark_due(made, seat)
    if due is not None:
        mark_alone(made, seat, due)


def caller(game_id: str) -> Loaded:
    """The finished game and who asks: a seat, or the table."""
    g = load_game(game_id)
    if g.token is None:
        raise missing_token("A rematch is asked with a seat's token (or the table's).")
    if g.role.kind is RoleKind.HOST:
        raise ApiError(Problem.NOT_A_SEAT, "Ask a rematch with a seat's or the table's token.")
    if g.state.status != rules.Status.GAME_OVER:
        raise ApiError(Problem.GAME_NOT_OVER, "A rematch comes after the game is over.")
    return g


def start(g: Loaded) -> None:
    """Make the next game, then the rematch entry (a concurrent first call may win it)."""
    game = next_game(g)
    response = create(game, None, lambda made: {"game_id": made}, lambda made: made)
    made = str(response.get_json()["game_id"])
    try:
        transact(g.record.game_id, lambda old: entry(old, made), keyed=False)
    except ApiError as err:
        if err.kind is not Problem.VERSION_CONFLICT:
            raise  # a lost race: another call made the rematch, which the caller reads now


def entry(g: Loaded, made: str) -> Decision:
    if g.table.listing.next_game:
        raise ApiError(Problem.VERSION_CONFLICT, "A rematch was made meanwhile.")
    g.table.listing = replace(g.table.listing, next_game=made)
    by = By.HOST if g.seat is None else By.PLAYER
    return Decision(Record(Kind.REMATCH, by, now_ms(), g.seat, text=made), [])


def next_game(g: Loaded) -> NewGame:
    """The finished game's next one: rules, options, seats and tokens kept; a fresh deal."""
    old, created = g.table, now_ms()
    options = g.state.rules.to_json()
    state = rules.new_game(list(g.state.players), options["preset"], options["options"])
    table = Table([Seat(s.kind, s.bot, player=s.player) for s in old.seats])
    table.auto_deal, table.turn_seconds = old.auto_deal, old.turn_seconds
    # A table of bots alone has no seat to claim: no window, so it deals at once rather than
    # wait out a window nobody can use.
    claims = any(seat.kind == SeatKind.PERSON for seat in table.seats)
    table.listing = Listing(
        public=old.listing.public,
        rated=old.listing.rated,
        rematch_of=g.record.game_id,
        claim_until_ms=created + settings().rematch_claim_seconds * 1000 if claims else None,
    )
    table.created_ms, table.tick_ms = created, TICK_MS
    creation = Record(Kind.CREATE, By.HOST, created, state=rules.dumps(state), tick_ms=TICK_MS)
    applied = server_moves(state, table, creation, [], 1)
    none: list[str | None] = [None] * len(table.seats)
    keeps = (g.record.host_digest, g.record.table_digest, g.record.seat_digests)
    return NewGame(state, table, applied, none, list(none), "", "", keeps=keeps)
