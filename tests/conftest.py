"""Shared fixtures: real servers only (a private redis-server per test session)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from service.store.redis_server import RedisServer


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port, for the whole session (per xdist worker)."""
    with RedisServer() as server:
        yield server


@pytest.fixture()
def redis_client(redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A client on a flushed database: each test starts from an empty Redis."""
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def live_server(redis_server: RedisServer) -> Iterator[str]:
    """Base URL of a real gunicorn (2 workers) serving the API on the session's redis-server."""
    from tests.servers import start_gunicorn

    with start_gunicorn(redis_server.url, workers=2) as base_url:
        yield base_url
