"""A write whose reply is lost on a cluster: Redis runs the script, then closes the connection
before the reply leaves (the reply outgrows the client output buffer limit, set tiny here). The
write must not be sent again, on a master with replicas or without: sent again, a
compare-and-set finds its own change and answers that another came first."""

from __future__ import annotations

import pytest
import redis
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster
from service.frameworks.redis_py import Direct, Script
from service.store.connection import connect

# Runs, then answers more than the limit below lets a client be sent.
RUNS_THEN_OVERFLOWS = "redis.call('INCR', KEYS[1]) return string.rep('x', 200000)"


@pytest.mark.parametrize("replicas", [0, 1])
def test_a_cluster_write_whose_reply_was_lost_runs_once(replicas: int) -> None:
    with LocalRedisCluster(masters=3, replicas=replicas) as cluster:
        client = connect(cluster.url, cluster=True)
        assert isinstance(client, RedisCluster)
        script = Script(Direct(client), RUNS_THEN_OVERFLOWS)
        client.set("{n}", 0)
        assert len(script(keys=["{n}"], args=[])) == 200000  # loaded, runs, answers
        client.config_set(
            "client-output-buffer-limit", "normal 65536 0 0", target_nodes=RedisCluster.PRIMARIES
        )
        with pytest.raises(redis.ConnectionError):
            script(keys=["{n}"], args=[])
        client.config_set(
            "client-output-buffer-limit", "normal 0 0 0", target_nodes=RedisCluster.PRIMARIES
        )
        assert client.get("{n}") == b"2"  # the lost one ran once
        client.close()
