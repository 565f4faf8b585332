"""The players' loop's store tests (tests/store/), re-run unchanged on a 3-master Redis Cluster of
this module's own: lobby buckets, players and their ratings, webhook deliveries, presence,
stream slots and tickets, transfer tickets. Each keeps its keys in one slot per script (a seek
bucket, a player, the deliveries' queue, a game), which only a cluster checks. The session's
cluster is shared with its live server's background worker, which takes due deliveries and seeks
by the real time, the very entries these tests look for."""

from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster
from tests.store.test_hooks import *  # noqa: F403
from tests.store.test_lobby import *  # noqa: F403
from tests.store.test_players import *  # noqa: F403
from tests.store.test_presence import *  # noqa: F403
from tests.store.test_streams import *  # noqa: F403
from tests.store.test_tokens import *  # noqa: F403
from tests.store.test_transfers import *  # noqa: F403


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
