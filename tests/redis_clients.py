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


def user_without(server: RedisServer, admin: redis.Redis, *commands: str) -> str:
    """The URL of a user ``app`` on ``server`` that may run every command but ``commands``
    (``admin.acl_setuser("app", commands=["+xadd"])`` gives one back): a write the service makes
    after its change is stored then fails as when Redis goes away between the two."""
    admin.acl_setuser(
        "app", enabled=True, passwords=["+app-pw"], keys=["*"], channels=["*"],
        categories=["+@all"], commands=[f"-{c}" for c in commands],
    )  # fmt: skip
    return server.url.replace("redis://", "redis://app:app-pw@")
