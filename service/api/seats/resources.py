"""``GET /bots``, ``POST /games/{id}/join`` and ``PUT /games/{id}/seats/{seat}``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask import Response
from flask.views import MethodView

from service import rules
from service.bots.registry import LEVELS
from service.rules import RoleKind
from service.rules.log import By, Kind, Record, seat_events
from service.store import NO_TOKEN, VersionConflict
from service.store.tokens import hash_token, invite_digest, new_invite, new_token
from service.table import Applied, Seat, SeatKind, advance

from ..caching import CachePolicy, cache_policy
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..gameplay import Loaded, change_of, ever_dealt, load_game, lost_race, now_ms, save_change
from ..games.creation import invite_url
from ..limits import PerAddress, limit_address
from ..parsing import Blueprint
from ..problems import ApiError
from ..store_access import store
from ..web import json_response
from .schemas import (
    JoinedSchema,
    JoinSchema,
    LevelSchema,
    SeatChangeResultSchema,
    SeatChangeSchema,
)

blp = Blueprint("seats", __name__, url_prefix="/api/v1", description="Bots, invites and seats")

# A join that loses a race re-reads the game and judges its invite again: concurrent joins of
# other seats should not fail, and the same invite fails as used.
JOIN_ATTEMPTS = 8


@blp.route("/bots")
class Bots(MethodView):
    @responds(200, LevelSchema(many=True))
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self) -> Response:
        """The bot levels a seat may be given, with their measured strength."""
        return json_response([asdict(level) for level in LEVELS])


@blp.route("/games/<string:game_id>/join")
class Join(MethodView):
    @blp.arguments(JoinSchema(), example={"invite": "Jm3q2v0d1...", "name": "bo"})
    @responds(201, JoinedSchema, headers=ETAG_HEADER)
    @problems(400, 401, 404, 409, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Take an open seat with its invite (once): answers the seat's secret token."""
        limit_address(PerAddress.JOIN)
        digest = invite_digest(body["invite"])
        for _ in range(JOIN_ATTEMPTS):
            g = load_game(game_id)
            token = new_token()
            seat, version = join(g, digest, body["name"], token)
            if version is not None:
                joined = {"game_id": game_id, "version": version, "seat": seat}
                joined.update(name=body["name"], token=token)
                return json_response(joined, 201, version=version)
        raise lost_race(g, g.record.version)


def join(g: Loaded, digest: str, name: str, token: str) -> tuple[int, int | None]:
    """Seat the player: the seat and the new version (None when another change came first)."""
    seat = g.table.seat_of_invite(digest)
    if seat is None:
        if digest in g.table.used_invites:
            raise ApiError(409, "invite_used", "This invite was used already.")
        raise ApiError(404, "invite_not_found", "There is no such invite in this game.")
    record = Record(Kind.JOIN, By.PLAYER, now_ms(), seat, text=name)
    g.state.players[seat] = name
    g.table.seats[seat] = Seat(SeatKind.PERSON)
    g.table.used_invites.append(digest)
    g.table.restart_clock(g.state, [], record.at_ms)
    applied = [Applied(record, seat_events(record))]
    applied += advance(g.state, g.table, record.at_ms, g.record.version + 1)
    digests = list(g.record.seat_digests)
    digests[seat] = hash_token(token)
    change = change_of(g, applied, digests)
    try:
        version = store().save(
            g.record.game_id, g.record.version, change, dealt=ever_dealt(g.state)
        )
    except VersionConflict:
        return seat, None
    return seat, version


@blp.route("/games/<string:game_id>/seats/<int:seat>")
class SeatResource(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(SeatChangeSchema(), example={"bot": "planner"})
    @responds(200, SeatChangeResultSchema, headers=ETAG_HEADER)
    @problems(400, 401, 403, 404, 409, 412, 413, 415, 422, 429)
    def put(self, body: dict[str, Any], game_id: str, seat: int) -> Response:
        """Host only: hand a seat to a bot (at once, mid-round too) or reopen it with a new
        invite; either way the seat's old token stops working."""
        g = load_game(game_id, RoleKind.HOST, mutating=True)
        if seat >= g.state.n_players:
            last = g.state.n_players - 1
            raise ApiError(404, "seat_not_found", f"This game has seats 0 to {last}.")
        level: str | None = body.get("bot")
        invite = None if level else new_invite()
        if level:
            g.table.seats[seat] = Seat(SeatKind.BOT, level)
        else:
            g.table.seats[seat] = Seat(SeatKind.OPEN, invite=invite_digest(invite or ""))
        record = Record(Kind.SEAT, By.HOST, now_ms(), seat, text=level or "")
        events: list[rules.Event] = seat_events(record)
        g.table.restart_clock(g.state, events, record.at_ms)
        applied = [Applied(record, events)]
        applied += advance(g.state, g.table, record.at_ms, g.record.version + 1)
        digests = list(g.record.seat_digests)
        digests[seat] = NO_TOKEN
        url = None if invite is None else invite_url(game_id, invite)
        changed = {"seat": seat, "bot": level, "open": invite is not None, "invite": invite}
        return save_change(g, applied, digests, extra={"changed": {**changed, "invite_url": url}})
