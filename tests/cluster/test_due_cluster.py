"""The due sets' tests (tests/store/test_due.py), re-run on a 3-master Redis Cluster of this
module's own: a game's due set is written by the game's own scripts, so it must hash to the
game's slot (a script that touches two slots is refused), and the sweep reads every slot's."""

from __future__ import annotations

import pytest
import redis
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster, node_id
from service.store import GameStore
from service.store import keys as K
from service.store.due import DueSets
from service.store.tokens import hash_token, new_token
from tests.store.test_due import *  # noqa: F403


@pytest.fixture(name="redis_client")
def _own_cluster_client(own_cluster_client: RedisCluster) -> RedisCluster:
    return own_cluster_client


def test_each_slot_has_a_due_set_of_its_own() -> None:
    names = K.due_slot_keys()
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
