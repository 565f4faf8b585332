"""Bodies of the seats resource."""

from __future__ import annotations

from typing import Any

import marshmallow as ma

from service.bots.registry import BOTS
from service.rules import MAX_NAME_LENGTH
from service.rules.options import valid_name

from ..fields import ResponseSchema, StrictBool, one_of
from ..games.schemas import ActionResultSchema

MAX_INVITE_LENGTH = 64


def _name(value: str) -> None:
    if not valid_name(value):
        raise ma.ValidationError(f"a name is 1 to {MAX_NAME_LENGTH} printable characters")


class JoinSchema(ma.Schema):
    invite = ma.fields.String(
        required=True,
        validate=ma.validate.Length(1, MAX_INVITE_LENGTH),
        metadata={"description": "the open seat's invite code"},
    )
    name = ma.fields.String(
        required=True, validate=_name, metadata={"description": "the joining player's name"}
    )
    player_token = ma.fields.String(
        metadata={"description": "a durable player's token: the seat is then that player's"}
    )


class JoinedSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    token = ma.fields.String(required=True, metadata={"description": "secret: this seat only"})


class SeatChangeSchema(ma.Schema):
    """``{"bot": <level>}`` hands the seat to a bot; ``{"open": true}`` reopens it."""

    bot = ma.fields.String(
        validate=ma.validate.OneOf(list(BOTS), error="unknown bot level; the levels are {choices}")
    )
    open = StrictBool(validate=ma.validate.Equal(True))

    @ma.validates_schema
    def one_change(self, data: dict[str, Any], **kwargs: Any) -> None:
        if len(data) != 1:
            raise ma.ValidationError('give {"bot": <level>} or {"open": true}', "_schema")


class SeatChangedSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    bot = one_of(BOTS, required=True, allow_none=True)
    open = ma.fields.Boolean(required=True)
    invite = ma.fields.String(
        required=True, allow_none=True, metadata={"description": "the reopened seat's new invite"}
    )
    invite_url = ma.fields.String(required=True, allow_none=True)


class SeatChangeResultSchema(ActionResultSchema):
    changed = ma.fields.Nested(SeatChangedSchema, required=True)


class LevelSchema(ResponseSchema):
    name = one_of(BOTS, required=True)
    description = ma.fields.String(required=True)
    strength = ma.fields.Float(
        required=True,
        allow_none=True,
        metadata={
            "description": "win rate in 4-player standard games against three random bots "
            "(null: not measured)"
        },
    )
    strength_games = ma.fields.Integer(required=True, metadata={"description": "games measured"})
    strength_interval = ma.fields.List(
        ma.fields.Float(),
        required=True,
        allow_none=True,
        validate=ma.validate.Length(equal=2),
        metadata={
            "description": "the 95% Wilson interval of `strength`, [low, high] (null: not measured)"
        },
    )
    player_id = ma.fields.String(
        required=True, metadata={"description": "the player this level plays rated games as"}
    )
