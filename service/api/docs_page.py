"""``/docs``: Swagger UI 5 on the service's OpenAPI 3.1 document, from files in the package.

The page, its start-up script and the vendored Swagger UI (``static/docs/``) are served by the
service itself: no CDN, nothing from other hosts, so the docs work offline. The start-up code is
a file, not inline, so the page runs under the strict policy of :mod:`.pages`.
"""

from __future__ import annotations

from flask import Flask

from .pages import STATIC_DIR, add_page

DOCS_DIR = STATIC_DIR / "docs"
DOCS_PATH = "/docs"


def init_app(app: Flask) -> None:
    """Serve the page at ``/docs`` and its files under ``/docs/static/``."""
    add_page(app, "docs", DOCS_PATH, DOCS_PATH + "/static", DOCS_DIR)
