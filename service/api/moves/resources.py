"""The moves resource: one endpoint per action, plus ``/moves`` for any move object."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from service import rules
from service.rules import Action, RoleKind
from service.rules.log import By, Record

from .. import examples
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..gameplay import commit, load_game, now_ms, on_known_record
from ..games.schemas import ActionResultSchema, EmptySchema
from ..parsing import Blueprint
from .schemas import MoveSchema, PlaySchema

blp = Blueprint(
    "moves",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>",
    description="Act for the seat of the bearer token",
)

# Schemas are passed as instances: given a class, webargs would build a new one per request.
ERRORS = (400, 401, 403, 404, 409, 412, 413, 415, 422, 429)


def act(game_id: str, move: dict[str, Any]) -> Response:
    """Parse the move (engine), load the game as its seat, apply, save, respond."""
    parsed = rules.Move.from_json(move)

    def run(known: bool) -> Response:
        g = load_game(game_id, RoleKind.SEAT, mutating=True, known=known)
        seat = g.seat
        assert seat is not None  # load_game checked the role
        record = Record.of_move(parsed, seat, By.PLAYER, now_ms())
        return commit(g, lambda state: rules.apply(state, seat, parsed), record)

    return on_known_record(run)


def action_doc(example: dict[str, Any] | None = None) -> Any:
    return responds(200, ActionResultSchema, headers=ETAG_HEADER, example=example)


@blp.route("/play")
class Play(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(PlaySchema(), example={"tile": [12, 5], "train": "0"})
    @action_doc(examples.PLAY_RESPONSE)
    @problems(*ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Play a tile on a train (either tile order: the server orients it)."""
        return act(game_id, {"action": Action.PLAY, **body})


@blp.route("/draw")
class Draw(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @action_doc()
    @problems(*ERRORS)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """Draw one tile; the response's events show it to its owner only."""
        return act(game_id, {"action": Action.DRAW})


@blp.route("/mark")
class Mark(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @action_doc()
    @problems(*ERRORS)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """Pass: place the marker on your own train and end the turn."""
        return act(game_id, {"action": Action.MARK})


@blp.route("/end-turn")
class EndTurn(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @action_doc()
    @problems(*ERRORS)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """End an opening-turn chain after at least one tile."""
        return act(game_id, {"action": Action.END_TURN})


@blp.route("/moves")
class Moves(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(MoveSchema(), example={"action": "play", "tile": [5, 3], "train": "mexican"})
    @action_doc()
    @problems(*ERRORS)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Apply any move object exactly as legal-moves listed it."""
        return act(game_id, body)
