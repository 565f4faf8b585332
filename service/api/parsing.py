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

from service.frameworks.smorest import BodyParser

from .codes import Problem
from .problems import ApiError


def json_body() -> Any:
    """The request's JSON body, read with orjson (``{}`` when there is none): for views that
    parse their body themselves, once (a move is parsed by the engine: ``Move.from_json``)."""
    data = flask.request.get_data(cache=True)
    if not data:
        return {}
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ApiError(Problem.MALFORMED_JSON, "The request body is not valid JSON.") from None


class OrjsonParser(BodyParser):
    """webargs' parser reading JSON with orjson."""

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
