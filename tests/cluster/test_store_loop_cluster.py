"""The players' loop's store tests (tests/store/), re-run unchanged on a 3-master Redis Cluster of
this module's own: lobby buckets, players and their ratings, webhook deliveries, presence,
stream slots and tickets, transfer tickets. Each keeps its keys in one slot per script (a seek
bucket, a player, the deliveries' queue, a game), which only a cluster checks. The session's
cluster is shared with its live server's background worker, which takes due deliveries and seeks
by the real time, the very entries these tests look for."""

import pytest
from redis.cluster import RedisCluster

from tests.store.test_hooks import *  # noqa: F403
from tests.store.test_lobby import *  # noqa: F403
from tests.store.test_players import *  # noqa: F403
from tests.store.test_presence import *  # noqa: F403
from tests.store.test_streams import *  # noqa: F403
from tests.store.test_tokens import *  # noqa: F403
from tests.store.test_transfers import *  # noqa: F403


@pytest.fixture(name="redis_client")
def _own_cluster_client(own_cluster_client: RedisCluster) -> RedisCluster:
    return own_cluster_client
