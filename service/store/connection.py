"""One place that turns a URL into a redis-py client (single server or Redis Cluster)."""

from __future__ import annotations

from typing import TypeAlias

import redis
from redis.cluster import RedisCluster

RedisClient: TypeAlias = "redis.Redis | RedisCluster"


def connect(url: str, cluster: bool = False) -> redis.Redis | RedisCluster:
    """A client for ``url`` (``redis://``, ``rediss://`` or ``unix://``).

    ``cluster=True`` gives a :class:`RedisCluster` that discovers the other nodes from ``url``.
    Replies stay as bytes: the stored state is binary and decoding would cost on the hot path.
    Timeouts are short so a dead Redis fails a request (and ``/readyz``) instead of hanging it.
    """
    if cluster:
        return RedisCluster.from_url(url, socket_timeout=5, socket_connect_timeout=2)
    return redis.Redis.from_url(
        url, socket_timeout=5, socket_connect_timeout=2, health_check_interval=30
    )
