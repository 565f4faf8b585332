"""Shared fixtures: real servers only (a private redis-server per test session)."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
import redis

from service.launch.redis_server import RedisServer


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


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test marked ``no_cover`` runs without a coverage tracer. pytest-cov pauses its own
    tracer for it, but in an xdist worker another one is left running (sys.gettrace() shows it),
    so the test's thread is untraced here, innermost, and the tracer put back afterwards."""
    if item.get_closest_marker("no_cover") is None:
        yield
        return
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)
