"""Cluster fixtures: the shared fixture names, served by a local 3-master Redis Cluster.

Tests in this folder that reuse other folders' test functions get these instead of the single
redis-server ones (pytest picks the closest conftest), so the same assertions run on a cluster.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster

from tests.cluster.local_cluster import LocalRedisCluster


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(masters=3) as cluster:
        yield cluster


@pytest.fixture()
def redis_client(redis_cluster: LocalRedisCluster) -> Iterator[RedisCluster]:
    """A cluster client on flushed primaries: each test starts from an empty cluster."""
    client = redis_cluster.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(scope="session")
def live_server(redis_cluster: LocalRedisCluster) -> Iterator[str]:
    """gunicorn (2 workers) with REDIS_CLUSTER=1 and REDIS_URL naming one node only."""
    from tests.servers import start_gunicorn

    with start_gunicorn(redis_cluster.url, workers=2, env={"REDIS_CLUSTER": "1"}) as base_url:
        yield base_url
