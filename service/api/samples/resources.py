"""The samples resource: deals of the tiles a seat cannot see, drawn from that seat's view.

The engine's sampler sees only the seat's view (``rules.seat_view``), never the hidden tiles or
the seed, so a sample tells the seat nothing it does not already know.
"""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from service import rules
from service.rules import RoleKind

from .. import examples
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..etag import ETAG_HEADER
from ..gameplay import load_game
from ..parsing import Blueprint
from ..web import json_response
from .schemas import SamplesQuerySchema, SamplesSchema

blp = Blueprint(
    "samples",
    __name__,
    url_prefix="/api/v1/games/<string:game_id>",
    description="Information sets for bots",
)

# A sample holds tiles the seat must not keep around in shared caches.
NO_STORE = {"Cache-Control": "private, no-store"}


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
    def get(self, query: dict[str, Any], game_id: str) -> Response:
        """Seat only: `n` positions that agree with all the seat sees, the unseen tiles dealt
        uniformly at random among the other hands and the boneyard."""
        g = load_game(game_id, RoleKind.SEAT)
        seat = g.seat
        assert seat is not None  # load_game checked the role
        view = rules.seat_view(g.state, seat)
        body = {
            "game_id": game_id,
            "version": g.record.version,
            "seat": seat,
            "samples": rules.sample_positions(view, query["n"], query.get("seed")),
        }
        return json_response(body, version=g.record.version, headers=NO_STORE)
