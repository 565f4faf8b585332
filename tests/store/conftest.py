"""The store's tests run on a redis-server of their own: the session's is shared with the
background worker of any live server the session started (tests/conftest.py), and that worker
takes due webhook deliveries, seeks and clocks by the real time, the very entries these tests
look for."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from devstack.redis_server import RedisServer
from tests.redis_clients import flushed_client


@pytest.fixture(scope="package")
def store_redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture()
def redis_client(store_redis_server: RedisServer) -> Iterator[redis.Redis]:
    with flushed_client(store_redis_server) as client:
        yield client
