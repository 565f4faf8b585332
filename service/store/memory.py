"""Redis memory as the service sees it: used bytes and ``maxmemory`` of every master.

Sampled with ``INFO memory`` at most once per ``every`` seconds per process, whatever the request
rate: creating a game and a ``/metrics`` scrape both read the last sample. Under ``noeviction``
Redis refuses every write past ``maxmemory``, moves included; refusing new games a little earlier
(``full()``) keeps that headroom for the games already being played.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis
from redis.cluster import RedisCluster


@dataclass(frozen=True)
class MemoryUsage:
    node: str
    used: int
    limit: int  # maxmemory; 0: no limit

    @property
    def fraction(self) -> float:
        return self.used / self.limit if self.limit else 0.0


def _usage(node: str, info: Mapping[str, Any]) -> MemoryUsage:
    return MemoryUsage(node, int(info.get("used_memory", 0)), int(info.get("maxmemory", 0)))


def _node_name(client: redis.Redis) -> str:
    kwargs = client.connection_pool.connection_kwargs
    path = kwargs.get("path")
    return str(path) if path else f"{kwargs.get('host')}:{kwargs.get('port')}"


class MemoryWatch:
    """The last memory sample of every master, refreshed when older than ``every`` seconds."""

    def __init__(self, client: redis.Redis | RedisCluster, every: float = 5.0) -> None:
        self.client = client
        self.every = every
        self._lock = threading.Lock()
        self._sampled_at = -math.inf
        self._last: tuple[MemoryUsage, ...] = ()

    def usage(self) -> tuple[MemoryUsage, ...]:
        """The latest sample; one caller refreshes it, concurrent callers get the previous one."""
        now = time.monotonic()
        with self._lock:
            if now - self._sampled_at < self.every:
                return self._last
            self._sampled_at = now
        self._last = self._sample()
        return self._last

    def full(self, percent: int) -> bool:
        """Whether any master uses ``percent`` % of its maxmemory or more (never without one)."""
        return percent > 0 and any(u.fraction * 100 >= percent for u in self.usage())

    def _sample(self) -> tuple[MemoryUsage, ...]:
        if isinstance(self.client, RedisCluster):
            infos = self.client.info("memory", target_nodes=RedisCluster.PRIMARIES)
            if "used_memory" in infos:  # a cluster of one master answers for itself alone
                return (_usage("primary", infos),)
            return tuple(_usage(str(name), info) for name, info in sorted(infos.items()))
        return (_usage(_node_name(self.client), self.client.info("memory")),)
