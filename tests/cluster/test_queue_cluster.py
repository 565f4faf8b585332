"""The worker's queue tests, re-run on a 3-master cluster of this module's own: the session's
cluster is shared with the background worker of the cluster's live server (conftest.py), which
takes the very jobs these tests look for."""

import pytest
from redis.cluster import RedisCluster

from tests.worker.test_queue import *  # noqa: F403


@pytest.fixture(name="redis_client")
def _own_cluster_client(own_cluster_client: RedisCluster) -> RedisCluster:
    return own_cluster_client
