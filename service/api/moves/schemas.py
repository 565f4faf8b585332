"""Request bodies of the moves resource, as the OpenAPI document shows them.

These schemas document; they parse nothing. A move body is parsed once, by the engine
(``Move.from_json``), which the views call (see ``resources.py``)."""

from __future__ import annotations

import marshmallow as ma

from service.rules import Action

from ..fields import tile_field

TRAIN = ma.fields.String(
    required=True,
    validate=ma.validate.Length(1, 16),
    metadata={"description": 'owner seat as a string ("0", "1", ...) or "mexican"', "example": "0"},
)


class PlaySchema(ma.Schema):
    tile = tile_field(required=True)
    train = TRAIN


class MoveSchema(ma.Schema):
    """A move object exactly as legal-moves lists it."""

    action = ma.fields.String(
        required=True, validate=ma.validate.OneOf([action.value for action in Action])
    )
    tile = tile_field()
    train = ma.fields.String(validate=ma.validate.Length(1, 16))
