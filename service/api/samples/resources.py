"""The samples resource: deals of the tiles a seat cannot see, drawn from that seat's view.

The engine's sampler sees only the seat's view (``rules.seat_view``) and the round's clues as
that seat knows them (replayed from the game's log), never the hidden tiles or the seed, so a
sample tells the seat nothing it does not already know.
"""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from service import rules
from service.rules import RoleKind
from service.rules.log import chronicle

from .. import examples
from ..caching import CachePolicy, cache_policy
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..limits import PerAddress, limit_address
from ..parsing import Blueprint
from ..transaction import load_game, read_log
from ..web import json_response
from .schemas import SamplesQuerySchema, SamplesSchema

blp = Blueprint(
    "samples",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>",
    description="Information sets for bots",
)


@blp.route("/samples")
class Samples(MethodView):
    @doc(security=SEAT_OR_HOST)
    @blp.arguments(SamplesQuerySchema(), location="query")
    @responds(
        200,
        SamplesSchema,
        example=examples.SAMPLES,
        headers={**ETAG_HEADER, "Cache-Control": {"schema": {"type": "string"}}},
    )
    @problems(400, 401, 403, 404, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)  # a sample holds tiles: never in any cache
    def get(self, query: dict[str, Any], game_id: str) -> Response:
        """Seat only: `n` positions that agree with all the seat sees, its whole public history
        included: a seat that drew or marked had no tile fitting any end open to it then, and
        tiles are drawn in the boneyard's order. The unseen tiles are dealt at random among
        the deals of the round that fit (docs/api.md: samples)."""
        # n samples are the work of n requests, and count as many against the rate limit; and
        # against the address's, since any number of seat tokens are made for nothing.
        limit_address(PerAddress.SAMPLES, cost=query["n"])
        g = load_game(game_id, RoleKind.SEAT, cost=query["n"])
        seat = g.seat
        assert seat is not None  # load_game checked the role
        view = rules.seat_view(g.state, seat)
        # The log as far as the state read (a move may have landed since).
        log = read_log(g)[: g.record.version]
        clues = chronicle(log).seen_by(seat, view.round)
        body = {
            "game_id": game_id,
            "version": g.record.version,
            "seat": seat,
            "samples": rules.sample_positions(view, query["n"], query.get("seed"), clues),
        }
        return json_response(body, version=g.record.version)
