"""``ShardedPubSub`` (service/frameworks/redis_py.py) against redis-py's own pub/sub: after a
lost connection, redis-py renews every sharded subscription with one SSUBSCRIBE, which a cluster
node refuses when the channels hash to different slots; the shortcut renews them slot by slot,
and both channels are subscribed again."""

from __future__ import annotations

import time

import pytest
import redis
from redis.client import PubSub
from redis.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import ClusterCrossSlotError

from devstack.redis_cluster import LocalRedisCluster, shard_channels
from service.frameworks.redis_py import RETRY, ShardedPubSub


def two_channels_on_node_0(client: RedisCluster, port: int) -> list[bytes]:
    """Two wake-up channels of different slots, both owned by the node on ``port``."""
    found: list[bytes] = []
    for n in range(10_000):
        channel = f"mt:{{g{n}}}:wakeup".encode()
        owner = client.get_node_from_key(channel)
        if int(owner.port) == port and all(key_slot(c) != key_slot(channel) for c in found):
            found.append(channel)
            if len(found) == 2:
                return found
    raise AssertionError("no two slots of node 0 found")


def reconnected(pubsub: PubSub, node: redis.Redis) -> None:
    """Cut the subscriber's connection from the server side, then read: redis-py reconnects
    and renews the subscriptions it holds."""
    node.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pubsub.get_message(timeout=0.1)
        if pubsub.connection is not None and pubsub.connection.is_connected:
            pubsub.get_message(timeout=0.5)  # the renewal's replies
            return


@pytest.mark.parametrize("kind", [PubSub, ShardedPubSub])
def test_sharded_subscriptions_after_a_reconnection(
    redis_cluster: LocalRedisCluster, redis_client: RedisCluster, kind: type[PubSub]
) -> None:
    server = redis_cluster.nodes[0]
    channels = two_channels_on_node_0(redis_client, server.port)
    node = redis.Redis.from_url(server.url, retry=RETRY)  # as the subscriber's: reconnects once
    pubsub = kind(node.connection_pool)
    for channel in channels:  # one slot per command, as the subscriber sends them
        pubsub.ssubscribe(channel)
    for _ in channels:
        assert pubsub.get_message(timeout=2)["type"] == "ssubscribe"
    assert shard_channels(server) >= set(channels)
    try:
        reconnected(pubsub, node)
    except redis.ResponseError as refused:  # redis-py's own renewal
        assert kind is PubSub and isinstance(refused, ClusterCrossSlotError)
        return
    finally:
        renewed = shard_channels(server)
        pubsub.close()
        node.close()
    assert kind is ShardedPubSub, "redis-py renewed them too: the shortcut is not needed"
    assert renewed >= set(channels)
