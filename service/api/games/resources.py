"""The games resource. Each view: parse, load, call the engine, save, respond."""

from __future__ import annotations

from typing import Any

from flask import Response, url_for
from flask.views import MethodView

from service import rules
from service.rules import RoleKind
from service.rules.log import By, Kind, Record

from .. import examples, transaction
from ..caching import CachePolicy, cache_policy
from ..codes import Problem
from ..docs import OPTIONAL_TOKEN, SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER, not_modified
from ..idempotency import MIN_CREATE_KEY, request_idempotency_key
from ..limits import PerAddress, limit_address
from ..parsing import Blueprint
from ..problems import ApiError
from ..transaction import Decision, Loaded, load_game, now_ms
from ..web import json_response
from . import creation
from .rematch import rematch
from .schemas import (
    ActionResultSchema,
    CreatedGameSchema,
    CreateGameSchema,
    EmptySchema,
    GameViewSchema,
    LegalMovesSchema,
    PositionSchema,
    ScoreSchema,
    rematch_answer,
)

blp = Blueprint(
    "games", __name__, url_prefix="/api/v1/games", description="Create, view and deal games"
)


def game_url(game_id: str) -> str:
    return url_for("games.Game", game_id=game_id)


@blp.route("")
class Games(MethodView):
    @doc(parameters=["IdempotencyKey"])
    @blp.arguments(CreateGameSchema(), example=examples.CREATE_REQUEST)
    @responds(
        201,
        CreatedGameSchema,
        example=examples.CREATE_RESPONSE,
        headers={**ETAG_HEADER, "Location": {"schema": {"type": "string"}}},
    )
    @problems(400, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any]) -> Response:
        """Create a game (or start one from a position); returns every secret token once."""
        limit_address(PerAddress.CREATE)
        # No caller identity scopes this key, and the answer holds every token: the key is
        # bound to the request, so reusing someone's key with another body makes a new game,
        # and it must be long enough not to be guessed with the same body.
        key = request_idempotency_key(MIN_CREATE_KEY)
        transaction.check_create(key)
        game = creation.build(body)
        return transaction.create(
            game, key, lambda game_id: creation.created_body(game_id, game), game_url
        )


@blp.route("/<string:game_id>")
class Game(MethodView):
    @doc(security=OPTIONAL_TOKEN, parameters=["IfNoneMatch"])
    @responds(200, GameViewSchema, example=examples.GAME_VIEW, headers=ETAG_HEADER)
    @responds(304, description="Not modified (If-None-Match)", headers=ETAG_HEADER, success=False)
    @problems(400, 401, 404, 429)
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self, game_id: str) -> Response:
        """The game view; with a seat token it includes that seat's hand, and on its turn its
        legal moves."""
        g = load_game(game_id, view=True)
        return not_modified(g.record.version) or json_response(g.view(), version=g.record.version)


@blp.route("/<string:game_id>/deal")
class Deal(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @responds(200, ActionResultSchema, headers=ETAG_HEADER)
    @problems(400, 401, 403, 404, 409, 412, 413, 415, 422, 429)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """Table or host only: deal the next round (409 while a round runs or after the last)."""
        return transaction.transact(game_id, decide_deal, need=RoleKind.TABLE)


def decide_deal(g: Loaded) -> Decision:
    if not g.table.full:
        raise ApiError(Problem.SEATS_OPEN, "Every seat must be taken before the deal.")
    if not g.table.rated_ready:
        raise ApiError(
            Problem.UNRATED_SEAT,
            "Every seat of a rated game must be a player (player_token) or a bot.",
        )
    return Decision(Record(Kind.DEAL, By.HOST, now_ms()), rules.deal(g.state))


@blp.route("/<string:game_id>/rematch")
class Rematch(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @responds(
        201,
        rematch_answer(),
        description="the caller's place in the next game, named by Location",
        headers={"Location": {"schema": {"type": "string"}}},
    )
    @responds(200, rematch_answer(), description="this seat (or the table) asked already")
    @problems(400, 401, 403, 404, 409, 412, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """After the game: the next game of this table (same rules, table options, seat order,
        bot seats), made by the first call; each seat's token is its token there. A person seat
        not claimed within 60 s of the first call becomes an open seat. A retry with the same
        Idempotency-Key (and token) gets the first answer."""
        return rematch(game_id)


@blp.route("/<string:game_id>/legal-moves")
class LegalMoves(MethodView):
    @doc(security=SEAT_OR_HOST)
    @responds(200, LegalMovesSchema, example=examples.LEGAL_MOVES, headers=ETAG_HEADER)
    @problems(400, 401, 403, 404, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def get(self, game_id: str) -> Response:
        """Seat only: every move the seat may make now (empty when it is not its turn)."""
        g = load_game(game_id, RoleKind.SEAT)
        seat = g.seat
        assert seat is not None  # load_game checked the role
        body = {
            "version": g.record.version,
            "seat": seat,
            "turn": g.state.turn,
            "moves": [m.to_json() for m in rules.legal_moves(g.state, seat)],
        }
        return json_response(body, version=g.record.version)


@blp.route("/<string:game_id>/score")
class Score(MethodView):
    @doc(security=OPTIONAL_TOKEN, parameters=["IfNoneMatch"])
    @responds(200, ScoreSchema, headers=ETAG_HEADER)
    @responds(304, description="Not modified (If-None-Match)", headers=ETAG_HEADER, success=False)
    @problems(400, 401, 404, 429)
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self, game_id: str) -> Response:
        """Per-round scores, totals, zero-round counts, and winners once the game is over."""
        g = load_game(game_id)
        version = g.record.version
        body = {"game_id": game_id, "version": version, **rules.score_view(g.state)}
        return not_modified(version) or json_response(body, version=version)


@blp.route("/<string:game_id>/position")
class Position(MethodView):
    @doc(security=SEAT_OR_HOST)
    @responds(200, PositionSchema, example=examples.POSITION, headers=ETAG_HEADER)
    @problems(400, 401, 403, 404, 409, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def get(self, game_id: str) -> Response:
        """Host only: the full position (`mexican-train-position/1`), hidden tiles included."""
        g = load_game(game_id, RoleKind.HOST)
        return json_response(rules.export_position(g.state), version=g.record.version)
