"""Every use of flask-smorest's and webargs' private names, in one place.

The service customises both libraries where they offer no public hook: problem-details error
handlers and responses, an orjson body parser, documentation written without wrapping views,
and serving the spec sorted. Each such reach into a library's internals goes through this
module, and :func:`incompatibilities` (run by a test) says in plain words what an upgrade broke.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import flask
import flask_smorest
import flask_smorest.utils
import webargs.flaskparser
from flask import Flask
from webargs import core

F = TypeVar("F", bound=Callable[..., Any])

# Attribute where flask-smorest's decorators collect a view's OpenAPI documentation.
APIDOC_ATTRIBUTE = "_apidoc"
# Where an initialised Api is found in ``app.extensions`` (config prefix "" is the default Api).
EXTENSION = "flask-smorest"
# Endpoint of the view serving the OpenAPI JSON (the docs blueprint, config prefix "").
SPEC_ENDPOINT = "api-docs.openapi_json"


def apidoc(func: F) -> dict[str, Any]:
    """The view's documentation dict, copied onto it first (as flask-smorest's decorators do:
    a view must not share the dict of the function it was copied from)."""
    doc: dict[str, Any] = copy.deepcopy(getattr(func, APIDOC_ATTRIBUTE, {}))
    setattr(func, APIDOC_ATTRIBUTE, doc)
    return doc


def documents_body(schema: Any, *, example: Any = None, required: bool = True) -> Callable[[F], F]:
    """Document a JSON request body as ``Blueprint.arguments(schema)`` does, without parsing it
    (the view parses the body itself, once) and without wrapping the view."""
    entry: dict[str, Any] = {
        "in": "json",
        "required": required,
        "schema": resolve_schema_instance(schema),
    }
    if example is not None:
        entry["example"] = example

    def decorate(func: F) -> F:
        doc = apidoc(func).setdefault("arguments", {})
        doc.setdefault("parameters", []).append(entry)
        doc.setdefault("responses", {})[422] = "UNPROCESSABLE_ENTITY"
        return func

    return decorate


def resolve_schema_instance(schema: Any) -> Any:
    """A schema instance from a class, an instance or a registered name."""
    return flask_smorest.utils.resolve_schema_instance(schema)


def deepupdate(original: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``original`` recursively updated with ``update`` (flask-smorest's merge of manual docs)."""
    merged: dict[str, Any] = flask_smorest.utils.deepupdate(original, update)
    return merged


def prepare_response(response: dict[str, Any], spec: Any, content_type: str) -> None:
    """Move ``schema``/``example`` of a response under ``content[content_type]`` (OpenAPI 3)."""
    flask_smorest.utils.prepare_response(response, spec, content_type)


def api_of(app: Flask) -> Any:
    """The flask-smorest ``Api`` initialised on ``app``."""
    return app.extensions[EXTENSION]["apis"][""]["ext_obj"]


def serve_spec_with(app: Flask, view: Callable[[], flask.Response]) -> None:
    """Answer the spec URL with ``view`` instead of flask-smorest's own view."""
    app.view_functions[SPEC_ENDPOINT] = view


class HookedApi(flask_smorest.Api):  # type: ignore[misc]
    """flask-smorest's ``Api`` with public hooks where it only has private methods.

    Subclasses implement :meth:`register_error_handlers` (instead of the library's default
    JSON errors) and :meth:`register_responses` (the shared responses of the spec)."""

    def _register_error_handlers(self) -> None:
        self.register_error_handlers(self._app)

    def _register_responses(self) -> None:
        self.register_responses()

    def register_error_handlers(self, app: Flask) -> None:
        raise NotImplementedError

    def register_responses(self) -> None:
        raise NotImplementedError


class BodyParser(webargs.flaskparser.FlaskParser):
    """webargs' Flask parser with a public hook for reading a JSON body.

    Subclasses implement :meth:`decode_json`; a body that is not JSON raises ``error`` from it,
    which :meth:`invalid_json` turns into webargs' 400 ``Invalid JSON body.``."""

    def _raw_load_json(self, req: flask.Request) -> Any:
        if not webargs.flaskparser.is_json_request(req):
            return core.missing
        data = req.get_data(cache=True)
        if not data:
            return core.missing  # an empty body is no body
        return self.decode_json(data, req)

    def decode_json(self, data: bytes, req: flask.Request) -> Any:
        raise NotImplementedError

    def invalid_json(self, error: Exception, req: flask.Request) -> NoReturn:
        self._handle_invalid_json_error(error, req)  # type: ignore[arg-type]
        raise AssertionError("webargs returned from its invalid-JSON handler")  # pragma: no cover


# What this module relies on: (owner, attribute, parameter names or None for "exists").
_REQUIRED: tuple[tuple[object, str, tuple[str, ...] | None], ...] = (
    (flask_smorest.Api, "_register_error_handlers", ("self",)),
    (flask_smorest.Api, "_register_responses", ("self",)),
    (webargs.flaskparser.FlaskParser, "_raw_load_json", ("self", "req")),
    (webargs.flaskparser.FlaskParser, "_handle_invalid_json_error", ("self", "error", "req")),
    (webargs.flaskparser, "is_json_request", ("req",)),
    (flask_smorest.utils, "resolve_schema_instance", ("schema",)),
    (flask_smorest.utils, "deepupdate", ("original", "update")),
    (flask_smorest.utils, "prepare_response", ("response", "spec", "content_type")),
)


def incompatibilities() -> list[str]:
    """What the installed flask-smorest/webargs no longer provide as this module expects.

    Checks each private function and its parameters, and that a documented view, an initialised
    Api and its spec endpoint look as this module reads them. Empty when all is well."""
    problems: list[str] = []
    for owner, name, params in _REQUIRED:
        where = f"{getattr(owner, '__name__', owner)}.{name}"
        func = getattr(owner, name, None)
        if func is None:
            problems.append(f"{where} is gone")
        elif params is not None:
            found = tuple(inspect.signature(func).parameters)[: len(params)]
            if found != params:
                problems.append(f"{where} takes {found}, not {params}")
    problems += _runtime_incompatibilities()
    return problems


class _ProbeApi(HookedApi):
    """Records which hooks flask-smorest called while initialising."""

    def __init__(self, app: Flask) -> None:
        self.called: list[str] = []
        super().__init__(app)

    def register_error_handlers(self, app: Flask) -> None:
        self.called.append("register_error_handlers")

    def register_responses(self) -> None:
        self.called.append("register_responses")


def _runtime_incompatibilities() -> list[str]:
    problems: list[str] = []
    blp = flask_smorest.Blueprint("adapter_probe", __name__)

    @blp.doc(summary="probe")
    def view() -> None:  # pragma: no cover - never called
        return None

    if not isinstance(getattr(view, APIDOC_ATTRIBUTE, None), dict):
        problems.append(f"flask-smorest no longer keeps view docs in {APIDOC_ATTRIBUTE!r}")
    elif "manual_doc" not in getattr(view, APIDOC_ATTRIBUTE):
        problems.append("flask-smorest's Blueprint.doc no longer writes 'manual_doc'")
    app = Flask(__name__)
    app.config.update(API_TITLE="probe", API_VERSION="1", OPENAPI_VERSION="3.1.0")
    app.config.update(OPENAPI_URL_PREFIX="/", OPENAPI_JSON_PATH="openapi.json")
    api = _ProbeApi(app)
    for hook in ("register_error_handlers", "register_responses"):
        if hook not in api.called:
            problems.append(f"flask-smorest's Api no longer calls the private method behind {hook}")
    try:
        found = api_of(app)
    except (KeyError, TypeError):
        found = None
    if found is not api:
        problems.append(f"app.extensions[{EXTENSION!r}] no longer holds the Api as 'ext_obj'")
    if SPEC_ENDPOINT not in app.view_functions:
        problems.append(f"the spec is no longer served by endpoint {SPEC_ENDPOINT!r}")
    return problems
