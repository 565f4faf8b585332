"""``GET /bots``, ``POST /games/{id}/join`` and ``PUT /games/{id}/seats/{seat}``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from flask import Response
from flask.views import MethodView

from service.bots.registry import LEVELS, MAX_SEATS, too_many
from service.rules import RoleKind, Status
from service.rules.log import By, Kind, Record, seat_events
from service.seating import Applied, Seat, SeatKind, bot_seat_name, open_seat_name
from service.store.tokens import invite_digest, new_invite, new_token

from ..caching import CachePolicy, cache_policy
from ..codes import Problem
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..games.creation import bot_player, check_one_seat_each, invite_url, player_of
from ..limits import PerAddress, limit_address
from ..parsing import Blueprint
from ..players.records import bot_player_id
from ..problems import ApiError
from ..transaction import Decision, Loaded, now_ms, transact, with_seat_token
from ..web import json_response
from .schemas import (
    JoinedSchema,
    JoinSchema,
    LevelSchema,
    SeatChangeResultSchema,
    SeatChangeSchema,
)

blp = Blueprint("seats", __name__, url_prefix="/api/v1", description="Bots, invites and seats")

#: Seat changes (bots and reopenings) a game accepts in all: each is an entry of its log, seen by
#: every stream, so a host cannot grow a game without end.
MAX_SEAT_CHANGES = 200

#: Keys a join's Idempotency-Key by its invite (no token scopes it): only who holds the invite
#: finds, and can unseal, the kept answer.
JOIN_SCOPE = "join\n"

# A join that loses a race re-reads the game and judges its invite again: concurrent joins of
# other seats should not fail, and the same invite fails as used.
JOIN_ATTEMPTS = 8


@blp.route("/bots")
class Bots(MethodView):
    @responds(200, LevelSchema(many=True))
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self) -> Response:
        """The bot levels a seat may be given, with their measured strength."""
        return json_response(
            [{**asdict(level), "player_id": bot_player_id(level.name)} for level in LEVELS]
        )


@blp.route("/games/<string:game_id>/join")
class Join(MethodView):
    @doc(parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(JoinSchema(), example={"invite": "Jm3q2v0d1...", "name": "bo"})
    @responds(201, JoinedSchema, headers=ETAG_HEADER)
    @problems(400, 401, 404, 409, 412, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Take an open seat with its invite (once): answers the seat's secret token. A retry
        with the same Idempotency-Key and body gets the same answer (kept sealed: it holds
        the token)."""
        limit_address(PerAddress.JOIN)
        digest, name = invite_digest(body["invite"]), body["name"]
        player = player_of(body["player_token"]).player_id if "player_token" in body else None
        return transact(
            game_id,
            lambda g: join(g, digest, name, player),
            attempts=JOIN_ATTEMPTS,
            scope=JOIN_SCOPE + body["invite"],
        )


def join(g: Loaded, digest: str, name: str, player: str | None = None) -> Decision:
    """Seat the player with a new token, answered once (201)."""
    seat = g.table.seat_of_invite(digest)
    if seat is None:
        if digest in g.table.used_invites:
            raise ApiError(Problem.INVITE_USED, "This invite was used already.")
        raise ApiError(Problem.INVITE_NOT_FOUND, "There is no such invite in this game.")
    if g.state.status == Status.GAME_OVER:
        # As a seat change: a finished game's seats stay as the game ended (its rematch, if
        # any, was made of them).
        raise ApiError(Problem.GAME_OVER, "The game is over: its open seats are no longer taken.")
    if g.table.listing.rated and player is None:
        # Mid-game no deal would stop it: the game would end with nobody rated.
        raise ApiError(
            Problem.UNRATED_SEAT, "A seat of a rated game is joined with a player_token."
        )
    record = Record(Kind.JOIN, By.PLAYER, now_ms(), seat, text=name)
    g.state.players[seat] = name
    g.table.seats[seat] = Seat(SeatKind.PERSON, player=player)
    check_one_seat_each(g.table)
    g.table.used_invites.append(digest)
    token = new_token()
    digests = with_seat_token(g, seat, token)

    def answer(g: Loaded, version: int, _: Sequence[Applied]) -> tuple[int, dict[str, Any]]:
        joined = {"game_id": g.record.game_id, "version": version, "seat": seat}
        return 201, {**joined, "name": name, "token": token}

    return Decision(record, seat_events(record), digests, answer=answer, secret=True, takes=seat)


@blp.route("/games/<string:game_id>/seats/<int:seat>")
class SeatResource(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(SeatChangeSchema(), example={"bot": "planner"})
    @responds(200, SeatChangeResultSchema, headers=ETAG_HEADER)
    @problems(400, 401, 403, 404, 409, 412, 413, 415, 422, 429)
    def put(self, body: dict[str, Any], game_id: str, seat: int) -> Response:
        """Table or host only: hand a seat to a bot (at once, mid-round too) or reopen it with a
        new invite; either way the seat's old token stops working."""
        return transact(
            game_id, lambda g: change_seat(g, seat, body.get("bot")), need=RoleKind.TABLE
        )


def change_seat(g: Loaded, seat: int, level: str | None) -> Decision:
    """Hand the seat to a bot at ``level``, or reopen it with a new invite. Handing a bot's
    seat to the same level changes nothing and adds no entry; after the game, seats stay."""
    if seat >= g.state.n_players:
        last = g.state.n_players - 1
        raise ApiError(Problem.SEAT_NOT_FOUND, f"This game has seats 0 to {last}.")
    if g.state.status == Status.GAME_OVER:
        raise ApiError(Problem.GAME_OVER, "The game is over: its seats no longer change.")
    current = g.table.seats[seat]
    if level and current.kind == SeatKind.BOT and current.bot == level:
        unchanged = {"seat": seat, "bot": level, "open": False, "invite": None}
        return Decision(None, [], extra={"changed": {**unchanged, "invite_url": None}})
    if level is None:
        check_reopenable(g)
    check_limits(g, seat, level)
    g.table.seat_changes += 1
    invite = None if level else new_invite()
    if level:
        rated = bot_player(level) if g.table.listing.rated else None
        g.table.seats[seat] = Seat(SeatKind.BOT, level, player=rated)
        check_one_seat_each(g.table)
    else:
        g.table.seats[seat] = Seat(SeatKind.OPEN, invite=invite_digest(invite or ""))
    record = Record(
        Kind.SEAT, By.HOST, now_ms(), seat, text=level or "", name=_renamed(g, seat, level)
    )
    digests = with_seat_token(g, seat, None)
    url = None if invite is None else invite_url(g.record.game_id, invite)
    changed = {"seat": seat, "bot": level, "open": invite is not None, "invite": invite}
    extra = {"changed": {**changed, "invite_url": url}}
    return Decision(record, seat_events(record), digests, extra, secret=invite is not None)


def _renamed(g: Loaded, seat: int, level: str | None) -> str | None:
    """The seat's new name when a bot takes an open seat still named "open seat N" (a name that
    would tell of nobody), as the server names the bots it seats; else None: a seat keeps the
    name its person or its host gave it."""
    if not level or g.state.players[seat] != open_seat_name(seat):
        return None
    name = g.state.players[seat] = bot_seat_name(level, seat)
    return name


def check_reopenable(g: Loaded) -> None:
    """A rated game's seats reopen only before its first deal: the table token is kept by a
    seated player, who could otherwise join a dealt seat with a second account and read its
    hand. A bot, which shows nobody a tile, may still take such a seat over."""
    if g.table.listing.rated and g.state.status is not Status.WAITING_DEAL:
        raise ApiError(
            Problem.RATED_GAME_DEALT,
            "A rated game's seat is not reopened once the game is dealt: hand it to a bot.",
        )


def check_limits(g: Loaded, seat: int, level: str | None) -> None:
    """A table's bounds: so many seats of the costliest bots, so many seat changes in all."""
    others = [other.bot for n, other in enumerate(g.table.seats) if n != seat and other.bot]
    crowded = too_many([*others, level]) if level else None
    if crowded is not None:
        raise ApiError(
            Problem.TOO_MANY_BOTS, f"A table may have at most {MAX_SEATS[crowded]} {crowded} bots."
        )
    if g.table.seat_changes >= MAX_SEAT_CHANGES:
        raise ApiError(
            Problem.TOO_MANY_SEAT_CHANGES,
            f"A game's seats may change at most {MAX_SEAT_CHANGES} times.",
        )
