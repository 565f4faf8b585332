"""``/``: the web table, where people create, join and play games in the browser.

Plain JavaScript modules and a stylesheet from ``static/table/`` (no build step, nothing from
other hosts). The page uses only the public API, as any other front end would; game ids,
invites and tokens travel in the address's fragment, which browsers never send to a server.
"""

from __future__ import annotations

from flask import Flask

from .pages import STATIC_DIR, add_page

TABLE_DIR = STATIC_DIR / "table"


def init_app(app: Flask) -> None:
    """Serve the page at ``/`` and its files under ``/table/``."""
    add_page(app, "table", "/", "/table", TABLE_DIR)
