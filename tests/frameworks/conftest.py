"""The API tests' app and client (a real app on the session's redis-server)."""

from tests.api.conftest import app, client

__all__ = ["app", "client"]
