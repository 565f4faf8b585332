"""Strict marshmallow fields shared by the resource schemas."""

from __future__ import annotations

import re
from typing import Any

import marshmallow as ma
from werkzeug.datastructures import MultiDict

from service.rules import MAX_PIP

_JSON_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


class StrictInt(ma.fields.Integer):
    """An integer that refuses strings, floats and booleans (JSON ``true`` is not 1)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        result: int = super()._deserialize(value, attr, data, **kwargs)
        return result


class StrictBool(ma.fields.Boolean):
    """JSON ``true`` or ``false`` only: marshmallow's Boolean also reads "yes", "false", 1 and 0,
    values of another type than the document gives (as StrictInt refuses ``true`` for 1)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


SENT_TWICE = "Sent more than once; send each query parameter once."


class OneValueQuery(ma.Schema):
    """A query string holding each of its parameters once: of ``?n=1&n=200`` webargs reads
    the first value and never checks the second, while a proxy or a cache in front may read
    the last, so such a request is refused rather than guessed at."""

    @ma.pre_load
    def one_value_each(self, data: Any, **_: Any) -> Any:
        # webargs hands a proxy of the request's MultiDict; ``data.data`` is that MultiDict.
        values = getattr(data, "data", None)
        if isinstance(values, MultiDict):
            repeated = {
                key: [SENT_TWICE]
                for key in (field.data_key or name for name, field in self.fields.items())
                if len(values.getlist(key)) > 1
            }
            if repeated:
                raise ma.ValidationError(repeated)
        return self.prepared(data)

    def prepared(self, data: Any) -> Any:
        return data


class BlankQuery(OneValueQuery):
    """A query string whose parameters sent without a value (``?limit=``, as API.md writes
    its queries and a search form sends a field left blank) are taken as left out: their
    defaults apply, and a filter filters nothing."""

    class Meta:
        unknown = ma.EXCLUDE

    def prepared(self, data: Any) -> dict[str, Any]:
        return {name: value for name, value in data.items() if value != ""}


class QueryInt(ma.fields.Integer):
    """A query integer in ASCII digits only, for every query parameter: ``int()`` would also
    take spaces and other scripts' digits."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        text = value if isinstance(value, str) else ""
        if not (text.isascii() and text.isdigit()):
            raise self.make_error("invalid")
        result: int = super()._deserialize(text, attr, data, **kwargs)
        return result


class QueryNumber(ma.fields.Float):
    """A query number written as JSON writes one (ASCII digits, a point, an exponent):
    ``float()`` would also take spaces, ``1_0`` and other scripts' digits."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> float:
        text = value if isinstance(value, str) else ""
        if not _JSON_NUMBER.fullmatch(text):
            raise self.make_error("invalid")
        result: float = super()._deserialize(text, attr, data, **kwargs)
        return result


def tile_field(**kwargs: Any) -> ma.fields.List[Any]:
    """``[a, b]``: two pip numbers (0 to ``MAX_PIP``, the largest set). Any order."""
    return ma.fields.List(
        StrictInt(validate=ma.validate.Range(0, MAX_PIP)),
        validate=ma.validate.Length(equal=2),
        metadata={"description": "a tile: two pip numbers, either order", "example": [12, 5]},
        **kwargs,
    )


def out_tile(**kwargs: Any) -> ComponentField:
    """A tile in an answer (the ``Tile`` component: two pip numbers)."""
    return component("Tile", **kwargs)


class ComponentField(ma.fields.Raw):
    """A value documented by the named schema of the document's components (one made from the
    engine's types, such as ``Event``), not by a marshmallow schema."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.component = name


def component(name: str, *, description: str | None = None, **kwargs: Any) -> ComponentField:
    metadata = {"description": description} if description else {}
    return ComponentField(name, metadata=metadata, **kwargs)


def component_ref(converter: Any, field: ma.fields.Field[Any], **kwargs: Any) -> dict[str, Any]:
    """apispec attribute function: a :class:`ComponentField` is a ``$ref`` to its component
    (not an ``allOf`` of one: code generators read that as a subtype, and drop the
    discriminator of a union)."""
    if isinstance(field, ComponentField):
        return {"$ref": f"#/components/schemas/{field.component}"}
    return {}


def one_of(values: Any, **kwargs: Any) -> ma.fields.String:
    """A string of a closed vocabulary (documented as an enum)."""
    return ma.fields.String(validate=ma.validate.OneOf([str(v) for v in values]), **kwargs)


class ResponseSchema(ma.Schema):
    """Documents a response body. Responses may grow fields: clients ignore unknown ones."""

    class Meta:
        unknown = ma.INCLUDE
