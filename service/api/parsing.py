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
import orjson

from .smorest_adapter import BodyParser


class OrjsonParser(BodyParser):
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
