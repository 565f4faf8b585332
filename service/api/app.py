"""The Flask app factory: settings, Redis store, flask-smorest Api, blueprints, docs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson
from flask import Flask, Response, request
from werkzeug.exceptions import RequestEntityTooLarge

from service.frameworks.flask_app import (
    ApiResponse,
    CoroutineCheck,
    NoSessions,
    header_value,
    is_json_type,
)
from service.frameworks.gunicorn_input import BODY_ERRORS
from service.frameworks.smorest import serve_spec_with
from service.store import GameStore, IdempotentReplay, connect
from service.store.connection import Limits

from . import owed
from .caching import apply_policy
from .codes import Problem
from .config import DEFAULTS, SETTINGS_KEY, Settings, load_settings
from .docs import HEADER_PARAMETERS, with_response_headers
from .docs_page import init_app as init_docs_page
from .etag import ETAG, IF_MATCH, IF_NONE_MATCH
from .fields import component_ref
from .idempotency import HEADER as IDEMPOTENCY_KEY
from .idempotency import REPLAYED_HEADER, handle_replay
from .limits import POLICY_HEADER, STATE_HEADER
from .limits import write_headers as write_rate_limit_headers
from .observability import REQUEST_ID_HEADER, configure_service_log
from .observability import init_app as init_observability
from .problems import ApiError, ProblemApi
from .store_access import STORE_EXTENSION
from .table_page import init_app as init_table_page
from .webhook_docs import webhooks_doc

API_PREFIX = "/api/v1"
GAMES_PREFIX = API_PREFIX + "/games"
SPEC_PATH = "api/v1/openapi.json"
CORS_REQUEST_HEADERS = ", ".join(
    ("Authorization", "Content-Type", IF_MATCH, IF_NONE_MATCH, IDEMPOTENCY_KEY, REQUEST_ID_HEADER)
)
CORS_EXPOSED_HEADERS = ", ".join(
    (
        ETAG,
        "Location",
        "Link",
        "Retry-After",
        POLICY_HEADER,
        STATE_HEADER,
        REPLAYED_HEADER,
        "WWW-Authenticate",
        REQUEST_ID_HEADER,
    )
)
CORS_MAX_AGE_SECONDS = "600"
MUTATING_METHODS = frozenset({"POST", "PUT", "PATCH"})


class ServiceFlask(Flask):
    """Flask with the app's response class and no sessions, remembering which callables are
    coroutine functions.

    Flask asks ``inspect.iscoroutinefunction`` for every hook and view on every request (about
    ten times per request here); the answer depends on the code object alone, so it is kept."""

    response_class = ApiResponse
    session_interface = NoSessions()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._is_coroutine = CoroutineCheck()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        return self.async_to_sync(func) if self._is_coroutine(func) else func


def spec_json(api: ProblemApi) -> bytes:
    """The OpenAPI document, byte-for-byte what ``make spec`` writes (sorted keys)."""
    spec = with_response_headers(api.spec.to_dict())
    return orjson.dumps(spec, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the WSGI app. ``config`` overrides the environment (see :mod:`.config`);
    ``STORE`` may pass a ready GameStore. No game state lives in the process: any worker
    serves any request."""
    settings = load_settings(config)
    # Before the store is built: it logs a pool it could not open.
    configure_service_log(settings.log_level)
    # No catch-all /static route: each page serves its own files (see pages).
    app = ServiceFlask(__name__, static_folder=None)
    app.config.update(
        API_TITLE="Mexican Train",
        API_VERSION="1",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH=SPEC_PATH,
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        API_SPEC_OPTIONS=api_spec_options(),
    )
    # Flask's own settings pass through; the service's are in the one typed Settings value.
    extra = {k: v for k, v in (config or {}).items() if k.isupper() and k not in DEFAULTS}
    extra.pop("STORE", None)
    app.config.update(extra)
    app.config[SETTINGS_KEY] = settings
    app.extensions[STORE_EXTENSION] = settings.store or build_store(settings)
    owed.give_up_after(settings.owed_give_up_seconds)
    init_api(app)
    init_docs_page(app)
    init_table_page(app)
    app.before_request(require_json_body)
    app.after_request(finish_response)
    # Request ids, one JSON log line per request, /metrics, ProxyFix (TRUSTED_PROXIES).
    init_observability(app, settings)
    return app


def build_store(settings: Settings) -> GameStore:
    client = connect(
        settings.redis_url, cluster=settings.redis_cluster, limits=redis_limits(settings)
    )
    return GameStore(
        client,
        game_ttl=settings.game_ttl_seconds,
        undealt_ttl=settings.undealt_ttl_seconds,
        idem_ttl=settings.idempotency_ttl_seconds,
        rate_window=60 if settings.rate_limit_per_minute else 0,
        memory_every=settings.redis_memory_sample_seconds,
    )


def init_api(app: Flask) -> ProblemApi:
    """The flask-smorest Api: blueprints, shared spec components, the replay handler, and the
    spec served exactly as ``make spec`` writes it (flask-smorest's own view does not sort)."""
    api = ProblemApi(app)
    for name, param in HEADER_PARAMETERS.items():
        api.spec.components.parameter(name, "header", param)
    for name, schema in typed_components().items():
        api.spec.components.schema(name, schema)
    api.ma_plugin.converter.add_attribute_function(component_ref)
    register_blueprints(api)
    app.register_error_handler(IdempotentReplay, handle_replay)
    api.spec.components.security_scheme(
        "bearer",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "a game's seat, table or host token, or a player's token",
        },
    )
    serve_spec_with(app, lambda: Response(spec_json(api), mimetype="application/json"))
    return api


def require_json_body() -> None:
    """A body that is not JSON is refused up front (415) rather than read as missing.

    Read from the WSGI environ: werkzeug's properties (``is_json`` parses the media type,
    ``headers`` translates each name) cost more than the checks themselves on every request."""
    environ = request.environ
    if environ["REQUEST_METHOD"] not in MUTATING_METHODS:
        return
    if "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
        # No Content-Length to check: read the body (cached for the parser). Werkzeug
        # stops at MAX_CONTENT_LENGTH without an error, so a body that reaches it is
        # taken as longer, not silently cut.
        try:
            data = request.get_data(cache=True)
        except BODY_ERRORS:
            raise ApiError(Problem.MALFORMED_REQUEST, "The chunked body is malformed.") from None
        limit = request.max_content_length
        if limit is not None and len(data) >= limit:
            raise RequestEntityTooLarge()
        has_body = bool(data)
    else:
        has_body = (request.content_length or 0) > 0
    if has_body and not is_json_type(environ.get("CONTENT_TYPE", "")):
        raise ApiError(Problem.UNSUPPORTED_MEDIA_TYPE, "Send the body as application/json.")


def finish_response(response: Response) -> Response:
    """The headers an answer takes from the request it answers: cache policy, rate limits,
    Vary, CORS; ``nosniff`` on every answer, problems included; no Content-Type on a 204.
    One hook that reads the WSGI environ once: each hook and each proxied look-up is paid on
    every request."""
    # A JSON answer echoes names players chose: a browser must never sniff it as HTML or a
    # script, whatever its Content-Type.
    response.headers["X-Content-Type-Options"] = "nosniff"
    if response.status_code == 204:
        # No content (RFC 9110 §15.3.5), so no type of it: Flask gives every answer one.
        response.headers.pop("Content-Type", None)
    environ = request.environ
    apply_policy(response, environ)
    write_rate_limit_headers(response)
    path = environ.get("PATH_INFO", "")
    if path.startswith(GAMES_PREFIX):
        vary_by_token(response)
    if "HTTP_ORIGIN" in environ and path.startswith(API_PREFIX):
        cors(response, environ)
    return response


def vary_by_token(response: Response) -> None:
    """A game's responses depend on the bearer token (a seat sees its hand) while the ETag
    is the version alone: caches must key on Authorization too."""
    # Set directly: ``response.vary.add`` parses and rebuilds the header every time.
    vary = header_value(response.headers, "vary")
    if vary is None:
        response.headers.add("Vary", "Authorization")
    elif "authorization" not in (v.strip().lower() for v in vary.split(",")):
        response.headers["Vary"] = f"{vary}, Authorization"


def cors(response: Response, environ: Mapping[str, Any]) -> None:
    """Browser front ends on other origins may call the API. Any origin: credentials are
    bearer tokens the page sends itself, never cookies."""
    response.headers["Access-Control-Allow-Origin"] = "*"
    if environ["REQUEST_METHOD"] == "OPTIONS" and "HTTP_ACCESS_CONTROL_REQUEST_METHOD" in environ:
        response.headers["Access-Control-Allow-Methods"] = response.headers.get(
            "Allow", "GET, POST, OPTIONS"
        )
        response.headers["Access-Control-Allow-Headers"] = CORS_REQUEST_HEADERS
        response.headers["Access-Control-Max-Age"] = CORS_MAX_AGE_SECONDS
    else:
        response.headers["Access-Control-Expose-Headers"] = CORS_EXPOSED_HEADERS


def redis_limits(settings: Settings) -> Limits:
    return Limits(
        socket_timeout=settings.redis_socket_timeout_ms / 1000,
        connect_timeout=settings.redis_connect_timeout_ms / 1000,
        pool_size=settings.redis_pool_size,
        pool_timeout=settings.redis_pool_timeout_ms / 1000,
        prefill=settings.redis_pool_prefill,
        client_name=settings.redis_client_name,
    )


def typed_components() -> dict[str, dict[str, Any]]:
    """The document's schemas made from the engine's types (events, options, tiles)."""
    from .gamelog.schemas import COMPONENTS as EVENT_COMPONENTS
    from .games.schemas import COMPONENTS as GAME_COMPONENTS

    return {**GAME_COMPONENTS, **EVENT_COMPONENTS}


def register_blueprints(api: ProblemApi) -> None:
    from .gamelog.resources import blp as events_blp
    from .games.resources import blp as games_blp
    from .health.resources import blp as health_blp
    from .lobby.resources import blp as lobby_blp
    from .moves.resources import blp as moves_blp
    from .players.resources import blp as players_blp
    from .samples.resources import blp as samples_blp
    from .seats.resources import blp as seats_blp
    from .transfers.resources import blp as transfers_blp

    blueprints = (
        *(games_blp, moves_blp, events_blp, seats_blp, samples_blp),
        *(players_blp, lobby_blp, transfers_blp),
    )
    for blp in (*blueprints, health_blp):
        api.register_blueprint(blp)


def api_spec_options() -> dict[str, Any]:
    return {
        "info": {
            "description": (
                "HTTP/JSON service for Mexican Train dominoes. Errors are RFC 9457 problem "
                "details (`application/problem+json`) with a stable `code`. Game responses "
                'carry the game version as a strong ETag (`"<version>"`); send it back in '
                "`If-Match` to act only on the state you saw, and an `Idempotency-Key` to make "
                "retries safe."
            ),
        },
        "servers": [{"url": "/"}],
        "webhooks": webhooks_doc(),
    }
