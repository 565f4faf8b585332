"""Pages a person opens (the web table at ``/``, the API docs at ``/docs``): files from the
package, each answer with the security headers every page carries.

Every page runs under a Content-Security-Policy without ``'unsafe-inline'`` (scripts are files,
never inline) that loads nothing from other hosts; ``no-referrer`` keeps invite links and tokens
in a page's address out of any Referer header.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, Response, send_from_directory

STATIC_DIR = Path(__file__).resolve().parent / "static"
# Images may be data: URLs (Swagger UI's icons); everything else comes from this origin.
PAGE_CSP = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)


def secured(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = PAGE_CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def page_file(directory: Path, filename: str) -> Response:
    """A file of ``directory`` (404 outside it), with the page headers."""
    return secured(send_from_directory(directory, filename))


def add_page(app: Flask, name: str, path: str, assets_path: str, directory: Path) -> None:
    """Serve ``directory``'s index.html at ``path`` and its other files under ``assets_path``."""

    def page() -> Response:
        return page_file(directory, "index.html")

    def asset(filename: str) -> Response:
        return page_file(directory, filename)

    app.add_url_rule(path, endpoint=f"{name}_page", view_func=page)
    app.add_url_rule(f"{assets_path}/<path:filename>", endpoint=f"{name}_asset", view_func=asset)
