"""The store's own tests (tests/api/test_store.py), re-run unchanged on a 3-master Redis Cluster,
plus what only a cluster can show: a game's keys share one slot, and games spread over nodes."""

from __future__ import annotations

from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster
from service.store import Change, GameStore, connect
from service.store import keys as K
from service.store.tokens import hash_token, new_token
from tests.api.test_store import *  # noqa: F403  (the same tests, with this folder's fixtures)


def test_connect_discovers_every_node_from_one_url(redis_cluster: LocalRedisCluster) -> None:
    client = connect(redis_cluster.urls[1], cluster=True)
    assert isinstance(client, RedisCluster)
    ports = sorted(int(n.port) for n in client.get_primaries())
    assert ports == sorted(n.port for n in redis_cluster.nodes)
    client.close()


def test_game_keys_share_a_slot_and_games_spread(redis_client: RedisCluster) -> None:
    gs = GameStore(redis_client, game_ttl=100, idem_ttl=100)
    nodes = set()
    for _ in range(30):
        tok = new_token()
        gid = gs.create(b"s", new_token(), [hash_token(tok)], [b"r1"])
        gs.save(gid, 1, Change(b"s2", [b"r2"]), kept=None, token=tok, idempotency_key=None)
        slot = redis_client.keyslot(K.game_key(gid))
        assert redis_client.keyslot(K.idem_key(gid, tok, "any-key")) == slot
        assert redis_client.keyslot(K.log_key(gid)) == slot
        nodes.add(redis_client.get_node_from_key(K.game_key(gid)).port)
    assert len(nodes) == 3, "30 random games should land on all 3 masters"
