"""Bodies of the players resource: players, ratings, the leaderboard, webhooks."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import marshmallow as ma

from service.rules import MAX_NAME_LENGTH
from service.rules.options import valid_name
from service.store.hooks import HookEvent

from ..fields import BlankQuery, QueryInt, ResponseSchema, one_of
from ..webhook_urls import MAX_URL
from .records import PlayerKind

#: The most players a leaderboard page shows.
MAX_LEADERBOARD = 100


class Board(StrEnum):
    """Which leaderboard: people's or bots' (``?kind=``, echoed in the answer)."""

    PEOPLE = "people"
    BOTS = "bots"


def _name(value: str) -> None:
    if not valid_name(value):
        raise ma.ValidationError(f"a name is 1 to {MAX_NAME_LENGTH} printable characters")


class NewPlayerSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=_name)


class CreatedPlayerSchema(ResponseSchema):
    player_id = ma.fields.String(required=True)
    player_token = ma.fields.String(
        required=True, metadata={"description": "secret, given once: acts for this player"}
    )
    name = ma.fields.String(required=True)


class RatingSchema(ResponseSchema):
    mu = ma.fields.Float(required=True)
    sigma = ma.fields.Float(required=True)
    display = ma.fields.Float(required=True, metadata={"description": "mu - 3 sigma"})


class PlayerRecordSchema(ResponseSchema):
    player_id = ma.fields.String(required=True)
    name = ma.fields.String(required=True)
    kind = ma.fields.String(required=True, validate=ma.validate.OneOf(list(PlayerKind)))
    rating = ma.fields.Nested(RatingSchema, required=True)
    games = ma.fields.Integer(required=True, metadata={"description": "rated games played"})
    wins = ma.fields.Integer(required=True, metadata={"description": "rated games won"})


class LeaderboardQuerySchema(BlankQuery):
    kind = one_of(
        Board,
        load_default=Board.PEOPLE.value,
        metadata={"description": "people (default, also when empty) or bots"},
    )
    limit = QueryInt(
        load_default=50,
        validate=ma.validate.Range(1, MAX_LEADERBOARD),
        metadata={"description": f"1 to {MAX_LEADERBOARD}, default (also when empty) 50"},
    )


class LeaderboardSchema(ResponseSchema):
    kind = one_of(Board, required=True)
    players = ma.fields.List(ma.fields.Nested(PlayerRecordSchema), required=True)


def player_json(player: Any) -> dict[str, Any]:
    return {
        "player_id": player.player_id,
        "name": player.name,
        "kind": player.kind,
        "rating": {"mu": player.mu, "sigma": player.sigma, "display": player.display},
        "games": player.games,
        "wins": player.wins,
    }


class NewWebhookSchema(ma.Schema):
    url = ma.fields.String(
        required=True,
        validate=ma.validate.Length(1, MAX_URL),
        metadata={"description": "https (or http to a host the operator allows)"},
    )
    events = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(list(HookEvent))),
        load_default=lambda: list(HookEvent),
        validate=ma.validate.Length(1, len(HookEvent)),
        metadata={"description": "what to be told of (default: all)"},
    )


class CreatedWebhookSchema(ResponseSchema):
    webhook_id = ma.fields.String(required=True)
    secret = ma.fields.String(
        required=True,
        metadata={"description": "secret, given once: the Standard Webhooks signing key"},
    )


class WebhookSchema(ResponseSchema):
    webhook_id = ma.fields.String(required=True)
    url = ma.fields.String(required=True)
    events = ma.fields.List(
        ma.fields.String(validate=ma.validate.OneOf(list(HookEvent))), required=True
    )


class WebhooksSchema(ResponseSchema):
    webhooks = ma.fields.List(ma.fields.Nested(WebhookSchema), required=True)
