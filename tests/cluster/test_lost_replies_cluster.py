"""A write whose reply is lost on a cluster: Redis runs the script, then closes the connection
before the reply leaves (the reply outgrows the client output buffer limit, set tiny here). The
write must not be sent again, on a master with replicas or without: sent again, a
compare-and-set finds its own change and answers that another came first. A seek's claim goes
through the cluster client, which sends it again: it must count once however often it runs."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
import redis
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster, node_id
from service.frameworks.redis_py import Direct, Script
from service.store import keys
from service.store.connection import connect
from service.store.lobby import Lobby

# Runs, then answers more than the limit below lets a client be sent.
RUNS_THEN_OVERFLOWS = "redis.call('INCR', KEYS[1]) return string.rep('x', 200000)"
#: The output buffer limit setting, and what each value lets a normal client be sent.
LIMIT, TINY, UNBOUNDED = "client-output-buffer-limit", "normal 65536 0 0", "normal 0 0 0"


def on_primaries(client: RedisCluster) -> Callable[[str, str], object]:
    """``config_set`` on every master of the cluster."""
    return lambda name, value: client.config_set(name, value, target_nodes=RedisCluster.PRIMARIES)


def run_losing_its_reply(
    write: Callable[[], object], config_set: Callable[[str, str], object]
) -> None:
    """Run ``write`` under the tiny limit: it runs, and its connection is closed before a
    reply over the limit leaves (a broken connection to the caller)."""
    config_set(LIMIT, TINY)
    try:
        with pytest.raises(redis.ConnectionError):
            write()
    finally:
        config_set(LIMIT, UNBOUNDED)


def on_n(script: Script) -> Callable[[], object]:
    return lambda: script(keys=["{n}"], args=[])


@pytest.mark.parametrize("replicas", [0, 1])
def test_a_cluster_write_whose_reply_was_lost_runs_once(replicas: int) -> None:
    with LocalRedisCluster(masters=3, replicas=replicas) as cluster:
        client = connect(cluster.url, cluster=True)
        assert isinstance(client, RedisCluster)
        script = Script(Direct(client), RUNS_THEN_OVERFLOWS)
        client.set("{n}", 0)
        assert len(script(keys=["{n}"], args=[])) == 200000  # loaded, runs, answers
        run_losing_its_reply(on_n(script), on_primaries(client))
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
        run_losing_its_reply(on_n(script), on_primaries(client))
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
        run_losing_its_reply(on_n(script), target.config_set)
        asked = target.pipeline(transaction=False)
        asked.execute_command("ASKING").get("{n}")
        assert asked.execute()[1] == b"2"  # the lost one ran once
        for node in (source, target):
            node.close()
        client.close()


def test_a_seek_claim_whose_reply_was_lost_claims_one_seat_on_a_cluster() -> None:
    """The table's id is long enough that a claim's reply outgrows the limit. The cluster
    client sends the claim again after the broken connection (each reply lost too, until it
    gives up): each run must not claim a seat of its own (the count stays 2, not 3)."""
    with LocalRedisCluster(masters=3, replicas=0) as cluster:
        client = connect(cluster.url, cluster=True)
        lobby = Lobby(client, bucket_ttl=3600)
        table = "t" * 200000
        assert lobby.claim("b", table, 3, 1, claim_id="first")[1:] == (0, True)
        claim = partial(lobby.claim, "b", "fresh0000", 3, 2, claim_id="second")
        run_losing_its_reply(claim, on_primaries(client))
        assert client.hget(keys.seek_keys("b")[1], table) == b"2"
        assert claim()[1:] == (1, False)  # answered again once the reply gets through
        client.close()
