"""Request bodies are parsed with orjson: faster, and strict where the stdlib is not.

The stdlib parser accepts ``NaN``/``Infinity``, raises ValueError (not a JSON error) on an
integer of more than 4300 digits and RecursionError on deeply nested arrays; each of those
would surface as a 500. orjson refuses them all with a JSONDecodeError, which webargs turns
into the 400 ``malformed_json`` problem.
"""

from __future__ import annotations

from typing import Any

import flask
import flask_smorest
import marshmallow as ma
import orjson

from .remembered import Remembered
from .smorest_adapter import BodyParser

# Bodies of at most this size are remembered once valid, and at most this many of them.
REMEMBERED_BODY_BYTES = 256
REMEMBERED_BODIES = 2048


class PlainBodySchema(ma.Schema):
    """A body schema whose result depends on the body's bytes alone and holds JSON values only.

    Such a body, once valid, is answered from memory the next time the same bytes come: games
    send the same few move bodies again and again, and validating one through webargs and
    marshmallow cost about a tenth of a move request."""


class OrjsonParser(BodyParser):
    """webargs' parser reading JSON with orjson, remembering valid :class:`PlainBodySchema`
    bodies."""

    def __init__(self) -> None:
        super().__init__()
        self._valid: Remembered[tuple[int, bytes], bytes] = Remembered(REMEMBERED_BODIES)

    def parse(self, argmap: Any, req: Any = None, *, location: str | None = None, **kw: Any) -> Any:
        if location != "json" or not isinstance(argmap, PlainBodySchema) or kw.get("validate"):
            return super().parse(argmap, req, location=location, **kw)
        data = (req or flask.request).get_data(cache=True)
        key = (id(argmap), data)  # body schemas are instances made once, at import
        known = self._valid.get(key)
        if known is not None:
            return orjson.loads(known)  # fresh objects: a view may change what it is given
        parsed = super().parse(argmap, req, location=location, **kw)
        if len(data) <= REMEMBERED_BODY_BYTES:
            self._valid.put(key, orjson.dumps(parsed))
        return parsed

    def decode_json(self, data: bytes, req: flask.Request) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            # Handled here: webargs reads an error with an empty ``doc`` (orjson gives one for
            # invalid UTF-8) as "no body".
            self.invalid_json(exc, req)


class Blueprint(flask_smorest.Blueprint):  # type: ignore[misc]
    """flask-smorest's Blueprint, parsing bodies with :class:`OrjsonParser`."""

    ARGUMENTS_PARSER = OrjsonParser()
