"""A write whose reply is lost on a cluster: Redis runs the script, then closes the connection
before the reply leaves (the reply outgrows the client output buffer limit, set tiny here). The
write must not be sent again, on a master with replicas or without: sent again, a
compare-and-set finds its own change and answers that another came first."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster, node_id
from service.frameworks.redis_py import Direct, Script
from service.store.connection import connect

# Runs, then answers more than the limit below lets a client be sent.
RUNS_THEN_OVERFLOWS = "redis.call('INCR', KEYS[1]) return string.rep('x', 200000)"
#: The output buffer limit setting, and what each value lets a normal client be sent.
LIMIT, TINY, UNBOUNDED = "client-output-buffer-limit", "normal 65536 0 0", "normal 0 0 0"


def on_primaries(client: RedisCluster) -> Callable[[str, str], object]:
    """``config_set`` on every master of the cluster."""
    return lambda name, value: client.config_set(name, value, target_nodes=RedisCluster.PRIMARIES)


def run_losing_its_reply(script: Script, config_set: Callable[[str, str], object]) -> None:
    """Run ``script`` on ``{n}`` under the tiny limit: it runs, and its connection is closed
    before the reply leaves (a broken connection to the caller)."""
    config_set(LIMIT, TINY)
    try:
        with pytest.raises(redis.ConnectionError):
            script(keys=["{n}"], args=[])
    finally:
        config_set(LIMIT, UNBOUNDED)


@pytest.mark.parametrize("replicas", [0, 1])
def test_a_cluster_write_whose_reply_was_lost_runs_once(replicas: int) -> None:
    with LocalRedisCluster(masters=3, replicas=replicas) as cluster:
        client = connect(cluster.url, cluster=True)
        assert isinstance(client, RedisCluster)
        script = Script(Direct(client), RUNS_THEN_OVERFLOWS)
        client.set("{n}", 0)
        assert len(script(keys=["{n}"], args=[])) == 200000  # loaded, runs, answers
        run_losing_its_reply(script, on_primaries(client))
        assert client.get("{n}") == b"2"  # the lost one ran once
        client.close()


def test_a_write_that_follows_moved_is_not_sent_again_once_its_reply_was_lost() -> None:
    """A stale slot map sends the write to a master without its slot (MOVED: not run there);
    followed to the slot's master, it runs and its reply is lost. Sent again there, it would
    run twice."""
    with LocalRedisCluster(masters=3, replicas=0) as cluster:
        client = connect(cluster.url, cluster=True)
        assert isinstance(client, RedisCluster)
        script = Script(Direct(client), RUNS_THEN_OVERFLOWS)
        client.set("{n}", 0)
        assert len(script(keys=["{n}"], args=[])) == 200000  # loaded, runs, answers
        slot = client.keyslot("{n}")
        right = client.nodes_manager.slots_cache[slot]
        wrong = next(n for n in client.get_primaries() if n.port != right[0].port)
        client.nodes_manager.slots_cache[slot] = [wrong, *right[1:]]
        run_losing_its_reply(script, on_primaries(client))
        assert client.get("{n}") == b"2"  # the lost one ran once
        assert client.get_node_from_key("{n}").port == right[0].port  # the slot map was read again
        client.close()


def test_a_write_that_follows_ask_is_not_sent_again_once_its_reply_was_lost() -> None:
    """Mid-reshard, a key not yet on the slot's master is written on the node the slot moves
    to (ASK: ASKING there, then the write); its reply lost, it runs there once."""
    with LocalRedisCluster(masters=3, replicas=0) as cluster:
        client = connect(cluster.url, cluster=True)
        assert isinstance(client, RedisCluster)
        script = Script(Direct(client), RUNS_THEN_OVERFLOWS)
        slot = client.keyslot("{n}")
        source_node = client.get_node_from_key("{n}")
        target_node = next(n for n in client.get_primaries() if n.port != source_node.port)
        source, target = (redis.Redis(host=n.host, port=n.port) for n in (source_node, target_node))
        target.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", node_id(source))
        source.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", node_id(target))
        assert len(script(keys=["{n}"], args=[])) == 200000  # asked to the target, runs there
        run_losing_its_reply(script, target.config_set)
        asked = target.pipeline(transaction=False)
        asked.execute_command("ASKING").get("{n}")
        assert asked.execute()[1] == b"2"  # the lost one ran once
        for node in (source, target):
            node.close()
        client.close()
