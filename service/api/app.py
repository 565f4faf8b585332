"""The Flask app factory: settings, Redis store, flask-smorest Api, blueprints, docs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from flask import Flask, Response, request
from werkzeug.exceptions import RequestEntityTooLarge

from service.store import GameStore, connect

from .config import load_settings
from .docs import HEADER_PARAMETERS
from .docs_page import init_app as init_docs_page
from .gameplay import Replay, replay_response
from .observability import init_app as init_observability
from .problems import ApiError, ProblemApi
from .store_access import STORE_EXTENSION

API_PREFIX = "/api/v1"
SPEC_PATH = "api/v1/openapi.json"
CORS_REQUEST_HEADERS = (
    "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, X-Request-ID"
)
CORS_EXPOSED_HEADERS = (
    "ETag, Location, Retry-After, Idempotent-Replayed, WWW-Authenticate, X-Request-ID"
)


def spec_json(api: ProblemApi) -> bytes:
    """The OpenAPI document, byte-for-byte what ``make spec`` writes (sorted keys)."""
    return orjson.dumps(api.spec.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the WSGI app. ``config`` overrides the environment (REDIS_URL, REDIS_CLUSTER,
    GAME_TTL_SECONDS, IDEMPOTENCY_TTL_SECONDS, MAX_BODY_BYTES, RATE_LIMIT_PER_MINUTE);
    ``STORE`` may pass a ready GameStore. No game state lives in the process: any worker
    serves any request."""
    settings = load_settings(config)
    # No catch-all /static route: each page serves its own files (see docs_page).
    app = Flask(__name__, static_folder=None)
    app.config.update(
        API_TITLE="Mexican Train",
        API_VERSION="1",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH=SPEC_PATH,
        MAX_CONTENT_LENGTH=settings["MAX_BODY_BYTES"],
        API_SPEC_OPTIONS=api_spec_options(),
    )
    app.config.update({k: v for k, v in settings.items() if k.isupper()})

    gs = settings.get("STORE")
    if gs is None:
        client = connect(settings["REDIS_URL"], cluster=settings["REDIS_CLUSTER"])
        gs = GameStore(
            client,
            game_ttl=settings["GAME_TTL_SECONDS"],
            idem_ttl=settings["IDEMPOTENCY_TTL_SECONDS"],
            rate_window=60 if settings["RATE_LIMIT_PER_MINUTE"] else 0,
        )
    app.extensions[STORE_EXTENSION] = gs

    api = ProblemApi(app)
    for name, param in HEADER_PARAMETERS.items():
        api.spec.components.parameter(name, "header", param)
    register_blueprints(api)
    app.register_error_handler(Replay, lambda replay: replay_response(replay.kept))
    api.spec.components.security_scheme(
        "bearer", {"type": "http", "scheme": "bearer", "description": "seat or host token"}
    )
    # Serve the spec exactly as `make spec` writes it (flask-smorest's own view does not sort).
    app.view_functions["api-docs.openapi_json"] = lambda: Response(
        spec_json(api), mimetype="application/json"
    )

    init_docs_page(app)

    @app.before_request
    def require_json_body() -> None:
        """A body that is not JSON is refused up front (415) rather than read as missing."""
        if request.method not in {"POST", "PUT", "PATCH"}:
            return
        if "chunked" in request.headers.get("Transfer-Encoding", "").lower():
            # No Content-Length to check: read the body (cached for the parser). Werkzeug
            # stops at MAX_CONTENT_LENGTH without an error, so a body that reaches it is
            # taken as longer, not silently cut.
            data = request.get_data(cache=True)
            limit = request.max_content_length
            if limit is not None and len(data) >= limit:
                raise RequestEntityTooLarge()
            has_body = bool(data)
        else:
            has_body = (request.content_length or 0) > 0
        if has_body and not request.is_json:
            raise ApiError(415, "unsupported_media_type", "Send the body as application/json.")

    @app.after_request
    def vary_by_token(response: Response) -> Response:
        """A game's responses depend on the bearer token (a seat sees its hand) while the ETag
        is the version alone: caches must key on Authorization too."""
        if request.path.startswith(API_PREFIX + "/games"):
            response.vary.add("Authorization")
        return response

    @app.after_request
    def cors(response: Response) -> Response:
        """Browser front ends on other origins may call the API. Any origin: credentials are
        bearer tokens the page sends itself, never cookies."""
        if not request.path.startswith(API_PREFIX) or "Origin" not in request.headers:
            return response
        response.headers["Access-Control-Allow-Origin"] = "*"
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            response.headers["Access-Control-Allow-Methods"] = response.headers.get(
                "Allow", "GET, POST, OPTIONS"
            )
            response.headers["Access-Control-Allow-Headers"] = CORS_REQUEST_HEADERS
            response.headers["Access-Control-Max-Age"] = "600"
        else:
            response.headers["Access-Control-Expose-Headers"] = CORS_EXPOSED_HEADERS
        return response

    # Request ids, one JSON log line per request, /metrics, ProxyFix (TRUSTED_PROXIES).
    init_observability(app)

    return app


def register_blueprints(api: ProblemApi) -> None:
    from .games.resources import blp as games_blp
    from .health.resources import blp as health_blp
    from .moves.resources import blp as moves_blp

    for blp in (games_blp, moves_blp, health_blp):
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
    }
