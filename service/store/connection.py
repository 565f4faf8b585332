"""One place that turns a URL into a redis-py client (single server or Redis Cluster).

The limits are chosen so that a Redis that hangs (a stopped process, a network that drops
packets) costs a request at most ``pool_timeout + socket_timeout`` (0.75 s by default) before it
becomes a 503, instead of holding a worker thread or greenlet until the kernel gives up:

- ``socket_timeout`` bounds every read and write. A healthy Redis answers in well under a
  millisecond, so 0.5 s is only reached by a stuck server (or one blocked by a slow disk).
- ``connect_timeout`` bounds the TCP handshake (a host that vanished without a reset).
- The pool is a :class:`redis.BlockingConnectionPool` of ``pool_size`` connections per process:
  under a gevent worker thousands of greenlets may share one process, and an unbounded pool would
  open one connection each. A request that finds every connection busy waits ``pool_timeout``
  for one, then fails.
- A pooled connection that Redis closed (a restart, ``CLIENT KILL``) is reconnected on
  checkout, and a command that meets a broken connection is sent once more on a fresh one
  (:data:`~service.frameworks.redis_py.RETRY`); a timeout is never retried, since that would
  double the time a request can hang. So every worker heals by itself once Redis accepts
  connections again.
- The same holds for a cluster client (redis-py retries there by default up to ten times with
  back-off): an error makes it re-read the topology, so the request after a failover finds the
  promoted replica.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, TypeAlias

import redis
from redis.cluster import RedisCluster

from service.frameworks.redis_py import RETRY, LeanPool

RedisClient: TypeAlias = "redis.Redis | RedisCluster"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    """Timeouts (seconds) and pool size of one process's Redis client."""

    socket_timeout: float = 0.5
    connect_timeout: float = 0.25
    pool_size: int = 16
    pool_timeout: float = 0.25
    health_check_interval: int = 30
    prefill: bool = False  # open every pooled connection at once (single server only)
    client_name: str | None = None


def connect(url: str, cluster: bool = False, limits: Limits | None = None) -> RedisClient:
    """A client for ``url`` (``redis://``, ``rediss://`` or ``unix://``).

    ``cluster=True`` gives a :class:`RedisCluster` that discovers the other nodes from ``url``.
    Replies stay as bytes: the stored state is binary and decoding would cost on the hot path.
    """
    lim = limits or Limits()
    if cluster:
        return RedisCluster.from_url(
            url,
            socket_timeout=lim.socket_timeout,
            socket_connect_timeout=lim.connect_timeout,
            connection_pool_class=redis.BlockingConnectionPool,
            max_connections=lim.pool_size,
            timeout=lim.pool_timeout,
            retry=RETRY,
            client_name=lim.client_name,
        )
    pool = LeanPool.from_url(
        url,
        max_connections=lim.pool_size,
        timeout=lim.pool_timeout,
        socket_timeout=lim.socket_timeout,
        socket_connect_timeout=lim.connect_timeout,
        health_check_interval=lim.health_check_interval,
        retry=RETRY,
        client_name=lim.client_name,
    )
    if lim.prefill:
        prefill(pool, lim.pool_size)
    return redis.Redis(connection_pool=pool)


def prefill(pool: redis.ConnectionPool, n: int) -> None:
    """Open ``n`` connections now and leave them in the pool. A Redis that does not answer yet
    is no reason to fail a start: the pool then opens them when needed, as it does anyway."""
    held: list[Any] = []
    try:
        for _ in range(n):
            held.append(pool.get_connection())
    except redis.RedisError as exc:
        log.warning("redis pool not prefilled (%d of %d open): %s", len(held), n, exc)
    finally:
        for conn in held:
            pool.release(conn)
