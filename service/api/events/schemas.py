"""Query and bodies of the events resource."""

from __future__ import annotations

import marshmallow as ma

from ..fields import ResponseSchema, StrictInt

#: The longest a long-poll may wait, in seconds.
MAX_WAIT_SECONDS = 60


class EventsQuerySchema(ma.Schema):
    after = ma.fields.Integer(
        load_default=0,
        validate=ma.validate.Range(min=0),
        metadata={"description": "only entries with a greater version"},
    )
    wait = ma.fields.Float(
        load_default=0,
        validate=ma.validate.Range(0, MAX_WAIT_SECONDS),
        metadata={"description": "JSON only: seconds to hold the request while nothing is new"},
    )
    access_token = ma.fields.String(
        metadata={"description": "the bearer token, for clients that cannot send headers"}
    )


class EntrySchema(ResponseSchema):
    version = StrictInt(required=True)
    at = ma.fields.String(required=True, metadata={"description": "RFC 3339, UTC"})
    seat = ma.fields.Integer(required=True, allow_none=True)
    by = ma.fields.String(
        required=True,
        validate=ma.validate.OneOf(["player", "host", "bot", "clock", "auto"]),
    )
    action = ma.fields.Dict(required=True)
    events = ma.fields.List(ma.fields.Dict(), required=True)


class EventsPageSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    entries = ma.fields.List(ma.fields.Nested(EntrySchema), required=True)


class HistoryEntrySchema(EntrySchema):
    position = ma.fields.Dict(metadata={"description": "deal entries: the position after it"})


class HistorySchema(ResponseSchema):
    format = ma.fields.String(required=True, metadata={"example": "mexican-train-history/1"})
    game_id = ma.fields.String(required=True)
    players = ma.fields.List(ma.fields.String(), required=True)
    rules = ma.fields.Dict(required=True)
    seed = ma.fields.Integer(required=True)
    entries = ma.fields.List(ma.fields.Nested(HistoryEntrySchema), required=True)
