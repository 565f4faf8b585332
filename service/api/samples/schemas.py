"""The query and the response of the samples resource."""

from __future__ import annotations

import marshmallow as ma

from service.rules import MAX_SEED

from ..fields import OneValueQuery, QueryInt, ResponseSchema
from ..games.schemas import PositionSchema

MAX_SAMPLES = 100


class SamplesQuerySchema(OneValueQuery):
    class Meta:
        unknown = ma.EXCLUDE  # other query parameters (cache busters) are ignored

    n = QueryInt(
        load_default=1,
        validate=ma.validate.Range(1, MAX_SAMPLES),
        metadata={"description": f"how many samples, 1 to {MAX_SAMPLES}"},
    )
    seed = QueryInt(
        validate=ma.validate.Range(0, MAX_SEED),
        metadata={"description": "the same seed gives the same samples (of the same view)"},
    )


class SamplesSchema(ResponseSchema):
    game_id = ma.fields.String(required=True)
    version = ma.fields.Integer(required=True)
    seat = ma.fields.Integer(required=True)
    samples = ma.fields.List(
        ma.fields.Nested(PositionSchema),
        required=True,
        metadata={"description": "positions `POST /api/v1/games` accepts"},
    )
