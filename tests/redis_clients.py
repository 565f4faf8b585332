"""Clients for the tests' own redis-servers."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import redis

from devstack.redis_server import RedisServer


@contextlib.contextmanager
def flushed_client(server: RedisServer) -> Iterator[redis.Redis]:
    """A client on ``server`` emptied first: each test starts from an empty Redis."""
    client = redis.Redis.from_url(server.url)
    client.flushall()
    yield client
    client.close()
