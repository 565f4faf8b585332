"""The due sets' tests (tests/store/test_due.py), re-run on a 3-master Redis Cluster of this
module's own: a game's due set is written by the game's own scripts, so it must hash to the
game's slot (a script that touches two slots is refused), and the sweep reads every slot's."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster, node_id
from service.store import GameStore
from service.store import keys as K
from service.store.due import DueSets
from service.store.tokens import hash_token, new_token
from service.store.work import STREAMS, WorkQueue
from service.worker.sweep import sweeper
from tests.store.test_due import *  # noqa: F403


@pytest.fixture(name="redis_client")
def _own_cluster_client(own_cluster_client: RedisCluster) -> RedisCluster:
    return own_cluster_client


def test_each_slot_has_a_due_set_of_its_own() -> None:
    names = [K.due_slot_key(slot) for slot in range(16384)]
    assert len(set(names)) == 16384
    assert all(K.slot_of(name) == slot for slot, name in enumerate(names))


def test_games_on_every_master_are_found(redis_client: RedisCluster) -> None:
    games, dues = GameStore(redis_client), DueSets(redis_client)
    made = {
        games.create(b"s", new_token(), [hash_token(new_token())], [b"r"], due=1) for _ in range(40)
    }
    nodes = {redis_client.get_node_from_key(K.game_key(gid)).name for gid in made}
    assert len(nodes) == 3
    assert {game for game, _ in dues.overdue(5, 100)} == made


def test_a_slot_being_resharded_does_not_stop_the_sweep(
    own_cluster: LocalRedisCluster, redis_client: RedisCluster
) -> None:
    """Mid-reshard, a slot's set may be out of the script's reach (its key moved, or never
    made); Redis refused the whole read then, and the sweep failed every time until the
    reshard was over."""
    games, dues = GameStore(redis_client), DueSets(redis_client)
    made = {
        games.create(b"s", new_token(), [hash_token(new_token())], [b"r"], due=1) for _ in range(9)
    }
    source, target = (redis.Redis.from_url(node.url) for node in own_cluster.nodes[:2])
    slot = 0  # the first master's, no game's here (its set was never made)
    try:
        target.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", node_id(source))
        source.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", node_id(target))
        assert {game for game, _ in dues.overdue(5, 100)} == made
    finally:
        for node in (source, target):
            node.execute_command("CLUSTER SETSLOT", slot, "STABLE")
            node.close()


def test_a_sweep_reads_the_streams_once_however_many_games_it_checks(
    redis_client: RedisCluster,
) -> None:
    """A backlog: 1,500 games owed a change for a while, every one of them queued. The sweep
    checked them 500 a script, and each script read both streams whole: a backlog of n jobs
    cost n * n / 500 entries read, on the queue's master, every sweep."""
    queue = WorkQueue(redis_client)
    queue.ensure_group()
    owed = [f"backlog{n:04d}" for n in range(1_500)]
    pipe = redis_client.pipeline(transaction=False)
    for game in owed:
        pipe.zadd(K.due_key(game, True), {game: 1})
        pipe.xadd(K.WORK_JOBS, {"g": game})
    pipe.execute()
    node = redis_client.get_node_from_key(K.WORK_JOBS)
    redis_client.config_resetstat(target_nodes=node)
    assert sweeper(DueSets(redis_client), queue, grace_ms=0)(10) == []
    stats: Any = redis_client.info("commandstats", target_nodes=node)
    assert stats.get("cmdstat_xrange", {}).get("calls", 0) <= len(STREAMS)


def test_a_master_down_does_not_stop_the_sweep_of_the_others() -> None:
    """One master stops (the cluster serves on without it: full coverage is not required).
    Its games wait for it; the read of its sets failed the whole sweep, every time, and the
    games of the masters still up were never swept."""
    with LocalRedisCluster(masters=3) as cluster:
        client = cluster.client()
        games, dues = GameStore(client), DueSets(client)
        made = {
            games.create(b"s", new_token(), [hash_token(new_token())], [b"r"], due=1)
            for _ in range(30)
        }
        down = cluster.nodes[2]
        on_down = {
            gid for gid in made if client.get_node_from_key(K.game_key(gid)).port == down.port
        }
        assert on_down and on_down != made
        down.stop()
        assert {game for game, _ in dues.overdue(5, 100)} == made - on_down
        client.close()


def test_a_master_of_several_slot_ranges_is_scanned_once() -> None:
    """A master that holds more than one range of slots (after a reshard: here the first slot
    handed to the second master): the backfill's scan of its keys is one pass over the node, not
    one per range, and each game is found once."""
    with LocalRedisCluster(masters=3) as cluster:
        nodes = [redis.Redis.from_url(node.url) for node in cluster.nodes]
        target = node_id(nodes[1])
        for node in (nodes[1], nodes[0], nodes[2]):  # before any key is stored
            node.execute_command("CLUSTER SETSLOT", 0, "NODE", target)
        nodes[1].execute_command("CLUSTER BUMPEPOCH")
        client = cluster.client()
        ranges: Any = client.cluster_slots()
        assert len(ranges) == 4, ranges
        games, dues = GameStore(client), DueSets(client)
        made = {
            games.create(b"s", new_token(), [hash_token(new_token())], [b"r"], due=None)
            for _ in range(30)
        }
        found = [game for batch in dues.unlisted(batch=10) for game in batch]
        assert sorted(found) == sorted(made)
        for node in nodes:
            node.close()
        client.close()
