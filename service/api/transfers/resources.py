"""``POST /games/{id}/transfers`` and ``POST /games/{id}/transfers/claim``: a seat moved to
another device by a one-time ticket (a link or a QR code)."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from ..caching import CachePolicy, cache_policy
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..games.schemas import EmptySchema
from ..parsing import Blueprint
from .schemas import ClaimedSeatSchema, ClaimSchema, TransferTicketSchema
from .tickets import claim, issue

blp = Blueprint(
    "transfers",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>/transfers",
    description="Seats moved to another device",
)


@blp.route("")
class Transfers(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(EmptySchema(), required=False)
    @responds(201, TransferTicketSchema)
    @problems(400, 401, 403, 404, 409, 412, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, _body: dict[str, Any], game_id: str) -> Response:
        """With a seat's token: a ticket that moves the seat to another device once, within
        ten minutes. Claiming it gives the seat a new token; this one then stops working. After
        the game, `409 game_over`. A retry with the same Idempotency-Key (and token) gets the
        first ticket, and no second one is issued."""
        return issue(game_id)


@blp.route("/claim")
class Claims(MethodView):
    @doc(parameters=["IfMatch", "IdempotencyKey"])
    @blp.arguments(ClaimSchema(), example={"ticket": "tt.Q2x..."})
    @responds(201, ClaimedSeatSchema, headers=ETAG_HEADER)
    @problems(400, 401, 404, 409, 412, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any], game_id: str) -> Response:
        """Claim a transfer ticket, once: the seat and its new token (a second claim is `409
        transfer_used`). The old token stops working, on its open streams too. A retry with the
        same Idempotency-Key and body gets the same answer (kept sealed: it holds the token)."""
        return claim(game_id, body["ticket"])
