"""Strict marshmallow fields shared by the resource schemas."""

from __future__ import annotations

from typing import Any

import marshmallow as ma

from service.rules import MAX_PIP


class StrictInt(ma.fields.Integer):
    """An integer that refuses strings, floats and booleans (JSON ``true`` is not 1)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        result: int = super()._deserialize(value, attr, data, **kwargs)
        return result


def tile_field(**kwargs: Any) -> ma.fields.List[Any]:
    """``[a, b]``: two pip numbers (0 to ``MAX_PIP``, the largest set). Any order."""
    return ma.fields.List(
        StrictInt(validate=ma.validate.Range(0, MAX_PIP)),
        validate=ma.validate.Length(equal=2),
        metadata={"description": "a tile: two pip numbers, either order", "example": [12, 5]},
        **kwargs,
    )


def out_tile() -> ma.fields.List[Any]:
    return ma.fields.List(ma.fields.Integer(), metadata={"example": [12, 5]})


class ResponseSchema(ma.Schema):
    """Documents a response body. Responses may grow fields: clients ignore unknown ones."""

    class Meta:
        unknown = ma.INCLUDE
