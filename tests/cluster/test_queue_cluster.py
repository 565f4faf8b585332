"""The worker's queue tests, re-run on a 3-master cluster of this module's own: the session's
cluster is shared with the background worker of the cluster's live server (conftest.py), which
takes the very jobs these tests look for."""

from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster
from tests.worker.test_queue import *  # noqa: F403


@pytest.fixture(scope="module")
def _own_cluster() -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(masters=3) as cluster:
        yield cluster


@pytest.fixture(name="redis_client")
def _own_cluster_client(_own_cluster: LocalRedisCluster) -> Iterator[RedisCluster]:
    client = _own_cluster.client()
    client.flushall()
    yield client
    client.close()
