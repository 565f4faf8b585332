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


def keys_not_starting(prefix: str) -> list[str]:
    """Key patterns for every key that does not start with ``prefix`` (ACLs only allow)."""
    return [f"{prefix[:i]}[^{c}]*" for i, c in enumerate(prefix)]


def keys_not_ending(suffix: str) -> list[str]:
    """Key patterns for every key that does not end with ``suffix``."""
    n = len(suffix)
    return [f"*[^{suffix[n - 1 - i]}]{suffix[n - i :]}" for i in range(n)]


def user_without(
    server: RedisServer, admin: redis.Redis, *commands: str, keys: list[str] | None = None
) -> str:
    """The URL of a user ``app`` on ``server`` that may run every command but ``commands``, on
    ``keys`` (patterns; all by default); called again, it sets the user's rights anew. A write
    the service makes after its change is stored then fails, as when Redis goes away between
    the two."""
    admin.acl_setuser(
        "app", enabled=True, passwords=["+app-pw"], keys=keys or ["*"], reset_keys=True,
        channels=["*"], categories=["+@all"], commands=[f"-{c}" for c in commands],
    )  # fmt: skip
    return server.url.replace("redis://", "redis://app:app-pw@")
