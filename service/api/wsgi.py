"""WSGI entry point for gunicorn (``service.api.wsgi:app``); settings come from the environment."""

from __future__ import annotations

from .app import create_app

app = create_app()
