"""Request and response bodies of the games resource (the game view, positions, scores)."""

from __future__ import annotations

from typing import Any

import marshmallow as ma

from service.rules import MAX_NAME_LENGTH, MAX_SEED, PRESETS, Status

from ..fields import ResponseSchema, StrictInt, out_tile

# A bound on the request's size, above every preset's player count: within it, the engine judges
# the count and its refusal (invalid_rules) says what the preset allows.
MAX_LISTED_PLAYERS = 20


class CreateGameSchema(ma.Schema):
    """Either ``players`` (with optional ``preset``, ``options``, ``seed``) or ``position``."""

    players = ma.fields.List(
        ma.fields.String(validate=ma.validate.Length(1, MAX_NAME_LENGTH)),
        validate=ma.validate.Length(1, MAX_LISTED_PLAYERS),
        metadata={"description": "player names, seat 0 first", "example": ["ann", "bo", "cy"]},
    )
    preset = ma.fields.String(
        validate=ma.validate.Length(1, 40),
        metadata={
            "description": f"{PRESETS[0]} (default), {', '.join(PRESETS[1:-1])} or {PRESETS[-1]}"
        },
    )
    options = ma.fields.Dict(
        keys=ma.fields.String(validate=ma.validate.Length(1, 64)),
        metadata={"description": "rule options overriding the preset (RULES.md)"},
    )
    seed = StrictInt(
        validate=ma.validate.Range(0, MAX_SEED),
        metadata={"description": "shuffle seed, for reproducible games"},
    )
    position = ma.fields.Dict(
        metadata={"description": "start from a `mexican-train-position/1` document instead"}
    )

    @ma.validates_schema
    def one_way(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "position" in data:
            extra = sorted(set(data) - {"position"})
            if extra:
                raise ma.ValidationError(
                    "a position carries its own players and rules", field_name=extra[0]
                )
        elif "players" not in data:
            raise ma.ValidationError("give players (or a position)", field_name="players")


class SeatTokenSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    token = ma.fields.String(required=True, metadata={"description": "secret: this seat only"})


class RulesSchema(ResponseSchema):
    preset = ma.fields.String(required=True)
    options = ma.fields.Dict(required=True, metadata={"description": "every option resolved"})


class CreatedGameSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    status = ma.fields.String(required=True)
    seats = ma.fields.List(ma.fields.Nested(SeatTokenSchema), required=True)
    host_token = ma.fields.String(
        required=True, metadata={"description": "secret: deals rounds, exports the position"}
    )
    rules = ma.fields.Nested(RulesSchema, required=True)


class PlayerSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    hand_size = ma.fields.Integer(required=True)
    score = ma.fields.Integer(required=True)
    marked = ma.fields.Boolean(required=True)


class TrainSchema(ResponseSchema):
    id = ma.fields.String(required=True, metadata={"description": 'seat number or "mexican"'})
    owner = ma.fields.Integer(required=True, allow_none=True)
    tiles = ma.fields.List(
        out_tile(), required=True, metadata={"description": "oriented from the engine outwards"}
    )
    open_end = ma.fields.Integer(required=True, allow_none=True)
    marked = ma.fields.Boolean(required=True)


class GameViewSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True, metadata={"description": "also the ETag"})
    status = ma.fields.String(
        required=True,
        validate=ma.validate.OneOf([status.value for status in Status]),
    )
    round = ma.fields.Integer(required=True, metadata={"description": "1-based"})
    engine = ma.fields.Integer(required=True, allow_none=True)
    turn = ma.fields.Integer(required=True, allow_none=True)
    players = ma.fields.List(ma.fields.Nested(PlayerSchema), required=True)
    trains = ma.fields.List(ma.fields.Nested(TrainSchema), required=True)
    open_doubles = ma.fields.List(ma.fields.String(), required=True)
    boneyard_size = ma.fields.Integer(required=True)
    rules = ma.fields.Nested(RulesSchema, required=True)
    hand = ma.fields.List(out_tile(), metadata={"description": "only for the caller's seat"})


class ActionResultSchema(GameViewSchema):
    events = ma.fields.List(
        ma.fields.Dict(),
        required=True,
        metadata={"description": "what the action did, as the caller may see it"},
    )


class MoveOutSchema(ResponseSchema):
    action = ma.fields.String(required=True)
    tile = out_tile()
    train = ma.fields.String()


class LegalMovesSchema(ResponseSchema):
    version = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    turn = ma.fields.Integer(required=True, allow_none=True)
    moves = ma.fields.List(ma.fields.Nested(MoveOutSchema), required=True)


class ScorePlayerSchema(ResponseSchema):
    seat = ma.fields.Integer(required=True)
    name = ma.fields.String(required=True)
    rounds = ma.fields.List(ma.fields.Integer(), required=True)
    total = ma.fields.Integer(required=True)
    zero_rounds = ma.fields.Integer(required=True)


class ScoreSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    status = ma.fields.String(required=True)
    round = ma.fields.Integer(required=True)
    players = ma.fields.List(ma.fields.Nested(ScorePlayerSchema), required=True)
    totals = ma.fields.List(ma.fields.Integer(), required=True)
    winners = ma.fields.List(ma.fields.Integer(), required=True, allow_none=True)


class PositionSchema(ResponseSchema):
    format = ma.fields.String(required=True, metadata={"example": "mexican-train-position/1"})
    players = ma.fields.List(ma.fields.String(), required=True)
    rules = ma.fields.Dict(required=True)
    round = ma.fields.Integer(required=True, metadata={"description": "0 before the first deal"})
    engine = ma.fields.Integer(
        required=True, allow_none=True, metadata={"description": "null before the first deal"}
    )
    turn = ma.fields.Integer(
        required=True, allow_none=True, metadata={"description": "null between rounds"}
    )
    opened = ma.fields.List(ma.fields.Boolean(), required=True)
    hands = ma.fields.List(ma.fields.List(out_tile()), required=True)
    boneyard = ma.fields.List(out_tile(), required=True)
    trains = ma.fields.Dict(required=True)
    marked = ma.fields.List(ma.fields.Boolean(), required=True)
    open_doubles = ma.fields.List(ma.fields.String(), required=True)
    scores = ma.fields.List(ma.fields.List(ma.fields.Integer()), required=True)


class EmptySchema(ma.Schema):
    """No body, or ``{}``."""
