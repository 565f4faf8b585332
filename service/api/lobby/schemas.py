"""Bodies of the lobby: its listing, and quick play (seek)."""

from __future__ import annotations

import marshmallow as ma

from service.rules import MAX_PLAYERS_ANY, MIN_PLAYERS, PRESETS, Preset
from service.seating import MAX_TURN_SECONDS

from ..fields import BlankQuery, QueryInt, ResponseSchema, StrictBool, StrictInt
from ..games.schemas import RulesSchema
from ..players.schemas import _name

#: The longest a seek table waits for people before bots fill it.
MAX_FILL_SECONDS = 3600
#: The most tables a lobby listing shows.
MAX_LISTED = 100


#: A filter given with no value (``?preset=``) filters nothing, as if it were left out.
ANY = "empty or absent: any"


class LobbyQuerySchema(BlankQuery):
    preset = ma.fields.String(
        validate=ma.validate.OneOf(PRESETS), metadata={"description": f"the rules' preset ({ANY})"}
    )
    players = QueryInt(
        validate=ma.validate.Range(MIN_PLAYERS, MAX_PLAYERS_ANY),
        metadata={"description": f"the number of seats ({ANY})"},
    )
    turn_seconds = QueryInt(
        validate=ma.validate.Range(0, MAX_TURN_SECONDS),
        metadata={"description": f"the turn clock, 0 for none ({ANY})"},
    )


class LobbyTableSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    players = ma.fields.List(
        ma.fields.String(), required=True, metadata={"description": "names of the filled seats"}
    )
    open_seats = ma.fields.Integer(required=True)
    rules = ma.fields.Nested(RulesSchema, required=True)
    turn_seconds = ma.fields.Integer(required=True)
    rated = ma.fields.Boolean(required=True)
    created_at = ma.fields.String(required=True, metadata={"description": "RFC 3339"})


class LobbySchema(ResponseSchema):
    tables = ma.fields.List(ma.fields.Nested(LobbyTableSchema), required=True)


class SeekSchema(ma.Schema):
    name = ma.fields.String(required=True, validate=_name)
    preset = ma.fields.String(
        load_default=Preset.STANDARD.value, validate=ma.validate.OneOf(PRESETS)
    )
    players = StrictInt(required=True, validate=ma.validate.Range(MIN_PLAYERS, MAX_PLAYERS_ANY))
    turn_seconds = StrictInt(load_default=0, validate=ma.validate.Range(0, MAX_TURN_SECONDS))
    rated = StrictBool(load_default=False)
    fill_with_bots_after = StrictInt(
        load_default=None,
        allow_none=True,
        validate=ma.validate.Range(0, MAX_FILL_SECONDS),
        metadata={"description": "seconds after which open seats go to planner bots (null: never)"},
    )
    player_token = ma.fields.String(metadata={"description": "a durable player's token"})


class SeatedSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    seat = ma.fields.Integer(required=True)
    token = ma.fields.String(required=True, metadata={"description": "secret: this seat only"})
    version = ma.fields.Integer(
        required=True, metadata={"description": "the game's version once seated, as its ETag"}
    )
    table_token = ma.fields.String(
        metadata={"description": "only to the seek that made the table: runs it"}
    )
