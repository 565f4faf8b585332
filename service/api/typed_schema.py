"""JSON Schemas of the OpenAPI document derived from the engine's own types.

The events (``service/rules/events.py``, one ``TypedDict`` each) and the resolved options
(the ``Rules`` dataclass) are typed in the engine; their schemas are made from those types
rather than written a second time, so a field added there is declared in the document too.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, Union, get_args, get_origin

from service.rules import MAX_PIP

#: A tile as every answer shows it: two pip numbers.
TILE: dict[str, Any] = {
    "type": "array",
    "items": {"type": "integer", "minimum": 0, "maximum": MAX_PIP},
    "minItems": 2,
    "maxItems": 2,
    "example": [12, 5],
}
_SCALARS: dict[Any, dict[str, Any]] = {
    int: {"type": "integer"},
    bool: {"type": "boolean"},
    str: {"type": "string"},
    float: {"type": "number"},
}


def of_type(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one annotation: scalars, ``StrEnum`` classes, ``Literal``, ``list``
    and optional (``X | None``) values."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is NotRequired:
        return of_type(args[0])
    if origin is Literal:
        return {"type": "string", "enum": [str(value) for value in args]}
    if origin in (Union, types.UnionType):
        present = [arg for arg in args if arg is not type(None)]
        (only,) = present
        inner = of_type(only)
        if "type" in inner and "enum" not in inner:
            return {**inner, "type": [inner["type"], "null"]}
        return {"oneOf": [inner, {"type": "null"}]}
    if origin is list:
        return {"type": "array", "items": of_type(args[0])}
    if isinstance(hint, type) and issubclass(hint, enum.StrEnum):
        return {"type": "string", "enum": [member.value for member in hint]}
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    raise TypeError(f"no JSON Schema for {hint!r}")


def of_typed_dict(cls: type, fields: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """An object schema of a ``TypedDict``; ``fields`` gives the schema of named fields where
    the type alone says too little (a ``list[int]`` that is a tile)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    properties = {name: fields.get(name) or of_type(hint) for name, hint in hints.items()}
    required = [name for name, hint in hints.items() if get_origin(hint) is not NotRequired]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if cls.__doc__:  # reStructuredText literals become Markdown ones (OpenAPI's markup)
        schema["description"] = " ".join(cls.__doc__.split()).replace("``", "`")
    return schema


def of_dataclass(cls: type, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """An object schema of a dataclass's fields, every one required."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls) if f.name not in leave_out]
    return {
        "type": "object",
        "properties": {name: of_type(hints[name]) for name in names},
        "required": names,
    }
