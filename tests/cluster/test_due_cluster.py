"""The due sets' tests (tests/store/test_due.py), re-run on a 3-master Redis Cluster of this
module's own: a game's due set is written by the game's own scripts, so it must hash to the
game's slot (a script that touches two slots is refused), and the sweep reads every slot's."""

from __future__ import annotations

import pytest
from redis.cluster import RedisCluster

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
