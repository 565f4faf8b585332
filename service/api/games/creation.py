"""Creating a game: the engine state, the table (people, server bots, open seats with their
invites), the first log records, and what the server plays at once (an automatic first deal,
bot moves)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from flask import request

from service import rules
from service.rules.log import TICK_MS, By, Kind, Record
from service.store import NO_TOKEN
from service.store.tokens import hash_token, invite_digest, new_invite, new_token
from service.table import Applied, Seat, SeatKind, Table, advance

from ..config import settings
from ..gameplay import now_ms
from ..problems import ApiError

# The engine wants a name for every seat; an open seat shows this until someone joins.
OPEN_SEAT_NAME = "open seat {}"


@dataclass
class NewGame:
    """A game about to be stored: what to keep, and what the creator is told once."""

    state: rules.GameState
    table: Table
    applied: list[Applied]
    tokens: list[str | None]
    invites: list[str | None]
    host_token: str

    @property
    def seat_digests(self) -> list[bytes]:
        return [NO_TOKEN if t is None else hash_token(t) for t in self.tokens]


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
        names = [s.get("name") or OPEN_SEAT_NAME.format(i) for i, s in enumerate(seats)]
        state = rules.new_game(
            names, body.get("preset", "standard"), body.get("options"), body.get("seed")
        )
        table = Table([_seat(s) for s in seats], bool(body.get("auto_deal", False)))
        table.turn_seconds = _turn_seconds(body.get("turn_seconds", 0))
    table.created_ms, table.tick_ms = created, TICK_MS
    creation = Record(Kind.CREATE, By.HOST, created, state=rules.dumps(state), tick_ms=TICK_MS)
    table.restart_clock(state, [], created)
    applied = [Applied(creation, []), *advance(state, table, created, 1)]
    tokens = [new_token() if s.kind == SeatKind.PERSON else None for s in table.seats]
    invites: list[str | None] = [None] * len(table.seats)
    for number, seat in enumerate(table.seats):
        if seat.kind == SeatKind.OPEN:
            invite = invites[number] = new_invite()
            table.seats[number] = replace(seat, invite=invite_digest(invite))
    return NewGame(state, table, applied, tokens, invites, new_token())


def _seat(seat: dict[str, Any]) -> Seat:
    if seat.get("open"):
        return Seat(SeatKind.OPEN)
    if seat.get("bot"):
        return Seat(SeatKind.BOT, seat["bot"])
    return Seat(SeatKind.PERSON)


def _turn_seconds(value: int) -> int:
    low = settings().min_turn_seconds
    if value and value < low:
        raise ApiError(
            422,
            "validation_failed",
            f"turn_seconds is 0 (no clock) or {low} to 86400.",
            extra={"errors": {"json": {"turn_seconds": [f"0, or {low} to 86400"]}}},
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
        "rules": game.state.rules.to_json(),
    }
