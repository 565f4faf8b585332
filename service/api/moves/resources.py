"""The moves resource: one endpoint per action, plus ``/moves`` for any move object.

A move is parsed once, by the engine: the body's JSON goes to ``Move.from_json``, and the
schemas only document it (no per-process memory of bodies, no second check)."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from service import rules
from service.frameworks.smorest import documents_body
from service.rules import Action, InvalidMove, Move, RoleKind
from service.rules.log import By, Record

from .. import examples
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..games.schemas import ActionResultSchema, EmptySchema
from ..parsing import Blueprint, json_body
from ..transaction import Decision, Loaded, now_ms, transact
from .schemas import MoveSchema, PlaySchema

blp = Blueprint(
    "moves",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>",
    description="Act for the seat of the bearer token",
)

ERRORS = (400, 401, 403, 404, 409, 412, 413, 415, 422, 429)


def move_of(action: Action | None = None) -> Move:
    """The request's move, parsed once by the engine. ``action``: the endpoint's own (the
    body then holds only what that action takes: a play's tile and train, or nothing)."""
    body = json_body()
    if action is not None:
        if not isinstance(body, dict) or "action" in body:
            field = "action" if isinstance(body, dict) else "_schema"
            raise InvalidMove(f"the body of /{action} holds its action's fields only", field=field)
        body = {**body, "action": action}
    return Move.from_json(body)


def act(game_id: str, parsed: Move) -> Response:
    """The game transaction as the token's seat, for the parsed move."""

    def decide(g: Loaded) -> Decision:
        seat = g.seat
        assert seat is not None  # the transaction checked the role
        record = Record.of_move(parsed, seat, By.PLAYER, now_ms())
        return Decision(record, rules.apply(g.state, seat, parsed))

    return transact(game_id, decide, need=RoleKind.SEAT, known=True)


def action_doc(example: dict[str, Any] | None = None) -> Any:
    return responds(200, ActionResultSchema, headers=ETAG_HEADER, example=example)


@blp.route("/play")
class Play(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @documents_body(PlaySchema(), example={"tile": [12, 5], "train": "0"})
    @action_doc(examples.PLAY_RESPONSE)
    @problems(*ERRORS)
    def post(self, game_id: str) -> Response:
        """Play a tile on a train (either tile order: the server orients it)."""
        return act(game_id, move_of(Action.PLAY))


@blp.route("/draw")
class Draw(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @documents_body(EmptySchema(), required=False)
    @action_doc()
    @problems(*ERRORS)
    def post(self, game_id: str) -> Response:
        """Draw one tile; the response's events show it to its owner only."""
        return act(game_id, move_of(Action.DRAW))


@blp.route("/mark")
class Mark(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @documents_body(EmptySchema(), required=False)
    @action_doc()
    @problems(*ERRORS)
    def post(self, game_id: str) -> Response:
        """Pass: place the marker on your own train and end the turn."""
        return act(game_id, move_of(Action.MARK))


@blp.route("/end-turn")
class EndTurn(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @documents_body(EmptySchema(), required=False)
    @action_doc()
    @problems(*ERRORS)
    def post(self, game_id: str) -> Response:
        """End an opening-turn chain after at least one tile."""
        return act(game_id, move_of(Action.END_TURN))


@blp.route("/moves")
class Moves(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @documents_body(MoveSchema(), example={"action": "play", "tile": [5, 3], "train": "mexican"})
    @action_doc()
    @problems(*ERRORS)
    def post(self, game_id: str) -> Response:
        """Apply any move object exactly as legal-moves listed it."""
        return act(game_id, move_of())
