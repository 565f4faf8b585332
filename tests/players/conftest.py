"""A real stack for the players' loop: Redis, gunicorn (2 workers) and the background worker."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer

ENV = {
    "MIN_TURN_SECONDS": "1",
    "LOG_LEVEL": "warning",
    "REMATCH_SECONDS": "3",
    "REMATCH_CLAIM_SECONDS": "2",
    "PRESENCE_SECONDS": "2",
    # Streams hold a thread each here (one pool; `make run` gives them a gevent pool of their own).
    "GUNICORN_THREADS": "8",
    "WEBHOOK_ALLOW_HOSTS": "127.0.0.1",
    "WEBHOOK_RETRY_MS": "200",
}


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(redis_server: RedisServer) -> Iterator[str]:
    with start_gunicorn(redis_server.url, workers=2, env=ENV) as base:
        yield base
