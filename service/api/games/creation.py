"""Creating a game: the engine state, the table (people, server bots, open seats with their
invites), the first log records, and what the server plays at once (an automatic first deal,
bot moves)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from flask import request

from service import rules
from service.rules import Preset
from service.rules.log import TICK_MS, By, Kind, Record
from service.seating import Listing, Seat, SeatKind, Table, open_seat_name
from service.store.players import Player
from service.store.tokens import invite_digest, new_invite, new_token

from ..codes import Problem
from ..config import settings
from ..problems import ApiError
from ..store_access import store
from ..transaction import NewGame, now_ms, server_moves


def invite_url(game_id: str, invite: str) -> str:
    """The link a person opens to take the seat (the web table reads the fragment)."""
    return f"{request.host_url.rstrip('/')}/#/join/{game_id}/{invite}"


def build(body: dict[str, Any]) -> NewGame:
    """Parse the request into a new game; nothing is stored yet."""
    created = now_ms()
    if "position" in body:
        state = rules.import_position(body["position"])
        table = Table.of_people(state.n_players)
    else:
        seats = body["players"]
        check_unseeded(body)
        # The engine wants a name for every seat; an open seat shows this until someone joins.
        names = [s.get("name") or open_seat_name(i) for i, s in enumerate(seats)]
        state = rules.new_game(
            names, body.get("preset", Preset.STANDARD), body.get("options"), body.get("seed")
        )
        check_rated_seats(body)
        rated = bool(body.get("rated", False))
        table = Table([_seat(s, rated) for s in seats], bool(body.get("auto_deal", False)))
        table.turn_seconds = turn_seconds_of(body.get("turn_seconds", 0))
        table.listing = Listing(public=bool(body.get("public", False)), rated=rated)
        check_one_seat_each(table)
    table.created_ms, table.tick_ms = created, TICK_MS
    creation = Record(Kind.CREATE, By.HOST, created, state=rules.dumps(state), tick_ms=TICK_MS)
    applied = server_moves(state, table, creation, [], 1)
    tokens = [new_token() if s.kind == SeatKind.PERSON else None for s in table.seats]
    invites: list[str | None] = [None] * len(table.seats)
    for number, seat in enumerate(table.seats):
        if seat.kind == SeatKind.OPEN:
            invite = invites[number] = new_invite()
            table.seats[number] = replace(seat, invite=invite_digest(invite))
    return NewGame(
        state, table, applied, tokens, invites, new_token(), new_token(), present=_creators(table)
    )


def _creators(table: Table) -> int | None:
    """The seat the creator takes: the one person seat, when there is one only (the others bots
    or open, as the web table makes them). With several, the creator holds every token and no
    seat is known to be theirs."""
    people = [number for number, seat in enumerate(table.seats) if seat.kind == SeatKind.PERSON]
    return people[0] if len(people) == 1 else None


def _seat(seat: dict[str, Any], rated: bool) -> Seat:
    if seat.get("open"):
        return Seat(SeatKind.OPEN)
    if seat.get("bot"):
        return Seat(SeatKind.BOT, seat["bot"], player=bot_player(seat["bot"]) if rated else None)
    if "player_token" in seat:
        return Seat(SeatKind.PERSON, player=player_of(seat["player_token"]).player_id)
    return Seat(SeatKind.PERSON)


def bot_player(level: str) -> str:
    """The player a bot level plays rated games as (made on first use)."""
    return store().players.ensure_bot(level).player_id


def player_of(token: str) -> Player:
    """The durable player of a ``player_token`` in a request body (422 when it is none)."""
    found = store().players.identify(token)
    if found is None:
        raise ApiError(
            Problem.VALIDATION_FAILED,
            "player_token is no player's token.",
            extra={"errors": {"player_token": ["not the token of a player"]}},
        )
    return found


def turn_seconds_of(value: int) -> int:
    low = settings().min_turn_seconds
    if value and value < low:
        raise ApiError(
            Problem.VALIDATION_FAILED,
            f"turn_seconds is 0 (no clock) or {low} to 86400.",
            extra={"errors": {"turn_seconds": [f"0, or {low} to 86400"]}},
        )
    return value


def created_body(game_id: str, game: NewGame) -> dict[str, Any]:
    """The create response: every secret, once."""
    seats = []
    for number, seat in enumerate(game.table.seats):
        invite = game.invites[number]
        seats.append(
            {
                "seat": number,
                "name": game.state.players[number],
                "token": game.tokens[number],
                "bot": seat.bot,
                "invite": invite,
                "invite_url": None if invite is None else invite_url(game_id, invite),
            }
        )
    return {
        "game_id": game_id,
        "version": len(game.applied),
        "status": game.state.status,
        "seats": seats,
        "host_token": game.host_token,
        "table_token": game.table_token,
        "rules": game.state.rules.to_json(),
    }


def check_unseeded(body: dict[str, Any]) -> None:
    """A rated game is dealt from a seed nobody chose: whoever knows the seed knows every hand."""
    if body.get("rated", False) and body.get("seed") is not None:
        raise ApiError(
            Problem.VALIDATION_FAILED,
            "A rated game takes no seed: its deals are the server's own.",
            extra={"errors": {"seed": ["a rated game is dealt from a seed nobody knows"]}},
        )


def check_rated_seats(body: dict[str, Any]) -> None:
    """A rated table that deals by itself deals once every seat is a player or a bot: a seat
    that is neither would hold it before its first deal for ever, and no request would be told
    why. Refused at once, as a join without player_token is, before anything is stored."""
    if not (body.get("rated", False) and body.get("auto_deal", False)):
        return
    for number, seat in enumerate(body["players"]):
        if not (seat.get("open") or seat.get("bot") or "player_token" in seat):
            raise ApiError(
                Problem.UNRATED_SEAT,
                f"Seat {number} of a rated game that deals by itself must be a player "
                "(player_token), a bot, or open for a player to join.",
            )


def check_one_seat_each(table: Table) -> None:
    """A rated game rates each player once: no player (a person, or a bot level) holds two of
    its seats."""
    players = [p for p in table.players() if p is not None]
    if table.listing.rated and len(players) != len(set(players)):
        raise ApiError(
            Problem.VALIDATION_FAILED,
            "A player holds at most one seat of a rated game (a bot level too).",
            extra={"errors": {"players": ["a player twice at one rated table"]}},
        )
