"""``GET /lobby`` and ``POST /lobby/seek``: public tables to join, and quick play."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask.views import MethodView

from ..caching import CachePolicy, cache_policy
from ..docs import doc, problems, responds
from ..etag import ETAG_HEADER
from ..limits import PerAddress, limit_address
from ..parsing import Blueprint
from ..web import json_response
from .listing import tables
from .schemas import LobbyQuerySchema, LobbySchema, SeatedSchema, SeekSchema
from .seek import seek

blp = Blueprint("lobby", __name__, url_prefix="/api/v1/lobby", description="Lobby and quick play")


@blp.route("")
class Lobby(MethodView):
    @blp.arguments(LobbyQuerySchema(), location="query")
    @responds(200, LobbySchema)
    @problems(400, 422, 429)
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self, query: dict[str, Any]) -> Response:
        """Public tables with open seats, newest first (at most 100), filtered by preset,
        player count and turn clock."""
        return json_response({"tables": tables(query)})


@blp.route("/seek")
class Seek(MethodView):
    @doc(parameters=["IdempotencyKey"])
    @blp.arguments(SeekSchema(), example={"name": "ann", "players": 4, "fill_with_bots_after": 30})
    @responds(
        201, SeatedSchema, headers={**ETAG_HEADER, "Location": {"schema": {"type": "string"}}}
    )
    @problems(400, 401, 409, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any]) -> Response:
        """A seat at the oldest public seek table of this kind (the same preset, player
        count, `turn_seconds` and `rated`) with one free, or at a new one (whose seeker alone
        gets its table token); full tables deal by themselves. A table's open seats go to bots
        at the earliest time one of its seekers asked for. A retry with the same
        Idempotency-Key and body gets the same seat."""
        limit_address(PerAddress.JOIN)
        return seek(body)
