"""``/docs``: Swagger UI 5 on the service's OpenAPI 3.1 document, from files in the package.

The page, its start-up script and the vendored Swagger UI (``static/docs/``) are served by the
service itself: no CDN, nothing from other hosts, so the docs work offline. The page carries a
Content-Security-Policy without ``'unsafe-inline'``: the start-up code is a file, not inline.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, Response, send_from_directory

DOCS_DIR = Path(__file__).resolve().parent / "static" / "docs"
DOCS_PATH = "/docs"
# Swagger UI draws its icons as data: images; everything else comes from this origin.
DOCS_CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


def _secured(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = DOCS_CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def docs_page() -> Response:
    return _secured(send_from_directory(DOCS_DIR, "index.html"))


def docs_asset(filename: str) -> Response:
    return _secured(send_from_directory(DOCS_DIR, filename))


def init_app(app: Flask) -> None:
    """Serve the page at ``/docs`` and its files under ``/docs/static/``."""
    app.add_url_rule(DOCS_PATH, view_func=docs_page)
    app.add_url_rule(DOCS_PATH + "/static/<path:filename>", view_func=docs_asset)
