"""``POST /players``, ``GET /players/{id}``, ``GET /leaderboard``: durable anonymous players
with a rating (openskill's Plackett-Luce, updated once per rated game)."""

from __future__ import annotations

from typing import Any

from flask import Response, url_for
from flask.views import MethodView

from ..caching import CachePolicy, cache_policy
from ..docs import SEAT_OR_HOST, doc, problems, responds
from ..idempotency import MIN_CREATE_KEY, request_idempotency_key
from ..limits import PerAddress, limit_address
from ..parsing import Blueprint
from ..transaction import answered_once, check_create, keep_answer
from ..web import json_response
from .records import (
    HookEvent,
    PlayerKind,
    calling_player,
    create_player,
    find_player,
    leaderboard,
    register_webhook,
    remove_webhook,
    webhooks,
)
from .schemas import (
    Board,
    CreatedPlayerSchema,
    CreatedWebhookSchema,
    LeaderboardQuerySchema,
    LeaderboardSchema,
    NewPlayerSchema,
    NewWebhookSchema,
    PlayerRecordSchema,
    WebhooksSchema,
    player_json,
)

blp = Blueprint("players", __name__, url_prefix="/api/v1", description="Players and ratings")

KINDS = {Board.PEOPLE: PlayerKind.PERSON, Board.BOTS: PlayerKind.BOT}


@blp.route("/players")
class Players(MethodView):
    @doc(parameters=["IdempotencyKey"])
    @blp.arguments(NewPlayerSchema(), example={"name": "ann"})
    @responds(201, CreatedPlayerSchema, headers={"Location": {"schema": {"type": "string"}}})
    @problems(400, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any]) -> Response:
        """A new durable anonymous player (no password, no e-mail): keep its token. With an
        Idempotency-Key (at least 22 characters: the answer holds the token) the answer is kept
        sealed, and a retry with the same key and body gets the same player."""
        limit_address(PerAddress.CREATE)  # a player never expires: it is a creation, as a game is
        key = request_idempotency_key(MIN_CREATE_KEY)
        check_create(key)
        player, token = create_player(body["name"])
        created = {"player_id": player.player_id, "player_token": token, "name": player.name}
        where = url_for("players.OnePlayer", player_id=player.player_id)
        response = json_response(created, 201, headers={"Location": where})
        # A concurrent request with the same key kept its player first: that one is the answer.
        keep_answer(key, response)
        return response


@blp.route("/players/<string:player_id>")
class OnePlayer(MethodView):
    @responds(200, PlayerRecordSchema)
    @problems(404, 429)
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self, player_id: str) -> Response:
        """A player's rating and counts of rated games."""
        return json_response(player_json(find_player(player_id)))


@blp.route("/leaderboard")
class Leaderboard(MethodView):
    @doc()
    @blp.arguments(LeaderboardQuerySchema(), location="query")
    @responds(200, LeaderboardSchema)
    @problems(400, 422, 429)
    @cache_policy(CachePolicy.REVALIDATE)
    def get(self, query: dict[str, Any]) -> Response:
        """Players with at least 5 rated games by displayed rating (mu - 3 sigma); people and
        bots apart."""
        kind = KINDS[query["kind"]]
        players = [player_json(p) for p in leaderboard(kind, query["limit"])]
        return json_response({"kind": query["kind"], "players": players})


@blp.route("/players/<string:player_id>/webhooks")
class Webhooks(MethodView):
    @doc(security=SEAT_OR_HOST, parameters=["IdempotencyKey"])
    @blp.arguments(
        NewWebhookSchema(), example={"url": "https://bot.example/turns", "events": ["your_turn"]}
    )
    @responds(201, CreatedWebhookSchema)
    @problems(400, 401, 403, 409, 413, 415, 422, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def post(self, body: dict[str, Any], player_id: str) -> Response:
        """Be told, with a signed POST (Standard Webhooks), when it is one of the player's
        seats' turn, when its game ends, or when a rematch is made; the player token only.
        With an Idempotency-Key the answer is kept (sealed: it holds the secret) for the
        player's token, and a retry with the same key and body gets the same webhook."""
        player = calling_player(player_id)
        events = [HookEvent(e) for e in dict.fromkeys(body["events"])]

        def registered() -> Response:
            hook = register_webhook(player, body["url"], events)
            return json_response({"webhook_id": hook.hook_id, "secret": hook.secret}, 201)

        return answered_once(registered)

    @doc(security=SEAT_OR_HOST)
    @responds(200, WebhooksSchema)
    @problems(401, 403, 429)
    @cache_policy(CachePolicy.PRIVATE)
    def get(self, player_id: str) -> Response:
        """The player's webhooks (their secrets are not shown again)."""
        found = webhooks(calling_player(player_id))
        listed = [{"webhook_id": h.hook_id, "url": h.url, "events": list(h.events)} for h in found]
        return json_response({"webhooks": listed})


@blp.route("/players/<string:player_id>/webhooks/<string:webhook_id>")
class OneWebhook(MethodView):
    @doc(security=SEAT_OR_HOST)
    @responds(204, description="removed: nothing more is sent to it")
    @problems(401, 403, 404, 429)
    def delete(self, player_id: str, webhook_id: str) -> Response:
        """Remove a webhook; deliveries still queued for it are dropped."""
        remove_webhook(calling_player(player_id), webhook_id)
        return Response(status=204)
