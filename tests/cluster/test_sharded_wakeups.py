"""Wake-ups on Redis Cluster are sharded: each game's channel lives in the game's slot, so a
change is heard on the game's shard only, and a process's subscription to a game stands on the
node that owns it, following the slot when it is resharded and the shard when its master fails
over. Streams over HTTP get every entry once meanwhile."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from queue import Queue

import pytest
import redis
import requests
from redis.cluster import RedisCluster

from devstack.gunicorn import start_gunicorn
from devstack.redis_cluster import LocalRedisCluster, move_slot, shard_channels
from service.store import NO_TOKEN, Change, GameStore
from service.store import keys as K
from service.store.subscriber import WakeupSubscriber
from service.store.tokens import new_token
from service.store.wakeup import Wakeup, parse_wakeup
from tests.cluster.test_failover import wait_promoted
from tests.live.helpers import SSE, create, play_turn, sse_entries, view

SETTLE = 60.0  # the most any wait for the cluster or a subscription may take


def until(done: Callable[[], bool], what: str, every: float = 0.1) -> None:
    deadline = time.monotonic() + SETTLE
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(every)


def wait_agreed(cluster: LocalRedisCluster, victim_port: int) -> None:
    """Until every live node's CLUSTER SLOTS names a live master for every slot. A client's
    refresh asks whichever node comes first, and gossip reaches the nodes one at a time, so
    one that still names the killed master would send the test to a closed port."""

    def agreed() -> bool:
        for node in cluster.nodes:
            if node.port == victim_port or node.proc is None or node.proc.poll() is not None:
                continue
            client = redis.Redis.from_url(node.url)
            try:
                if any(int(s[2][1]) == victim_port for s in client.cluster("SLOTS")):
                    return False
            finally:
                client.close()
        return True

    until(agreed, "the nodes never agreed on the promoted master")


def node_index(cluster: LocalRedisCluster, client: RedisCluster, key: str) -> int:
    port = int(client.get_node_from_key(key).port)
    return next(i for i, n in enumerate(cluster.nodes) if n.port == port)


class Listening:
    """A store's wake-up subscriptions, with what they heard and which stood, as queues."""

    def __init__(self, gs: GameStore) -> None:
        self.heard: Queue[Wakeup | None] = Queue()
        self.standing: Queue[list[str]] = Queue()
        self.subscriber: WakeupSubscriber = gs.wakeups(
            lambda data: self.heard.put(parse_wakeup(data)), self.standing.put
        )

    def next_wakeup(self) -> Wakeup | None:
        return self.heard.get(timeout=SETTLE)


def publish_counters(cluster: LocalRedisCluster) -> list[dict[str, int]]:
    """Each master's cluster-bus counters of pub/sub messages (CLUSTER INFO)."""
    found = []
    for node in cluster.nodes[: cluster.masters]:
        client = redis.Redis.from_url(node.url)
        info = client.cluster("INFO")
        client.close()
        found.append({k: int(v) for k, v in info.items() if "publish" in k})
    return found


def test_a_wake_up_is_heard_on_the_games_shard_only(
    redis_cluster: LocalRedisCluster, redis_client: RedisCluster
) -> None:
    gs = GameStore(redis_client)
    gid = gs.create(b"s1", new_token(), [NO_TOKEN], [b"r1"])
    owner = node_index(redis_cluster, redis_client, K.game_key(gid))
    listening = Listening(gs)
    listening.subscriber.follow(gid)
    try:
        assert listening.standing.get(timeout=SETTLE) == [gid]
        channel = K.wakeup_channel(gid).encode()
        numsub = [
            dict(redis.Redis.from_url(n.url).execute_command("PUBSUB SHARDNUMSUB", channel))
            for n in redis_cluster.nodes
        ]
        assert [n[channel] for n in numsub] == [int(i == owner) for i in range(3)]
        before = publish_counters(redis_cluster)
        for version in range(1, 21):
            gs.save(gid, version, Change(b"s", [b"r"]))
            assert listening.next_wakeup() == Wakeup(gid, version + 1, [b"r"])
        after = publish_counters(redis_cluster)
    finally:
        listening.subscriber.unfollow(gid)
    # No replicas here: a shard message has no other node to go to, where PUBLISH would have
    # sent each of the 20 to both other masters over the cluster bus.
    for node_before, node_after in zip(before, after, strict=True):
        assert node_after == node_before, (before, after)


@pytest.fixture()
def replicated() -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(masters=3, replicas=1) as cluster:
        yield cluster


def test_subscriptions_follow_a_resharded_slot_and_a_failed_over_master(
    replicated: LocalRedisCluster,
) -> None:
    client = RedisCluster.from_url(replicated.url)
    gs = GameStore(client)
    gid = gs.create(b"s1", new_token(), [NO_TOKEN], [b"r1"])
    key, channel = K.game_key(gid), K.wakeup_channel(gid).encode()
    listening = Listening(gs)
    listening.subscriber.follow(gid)
    assert listening.standing.get(timeout=SETTLE) == [gid]
    source = node_index(replicated, client, key)
    target = 2 if source == 1 else 1  # not node 0: wait_promoted asks node 0
    move_slot(replicated, client.keyslot(key), source, target)
    # The old owner dropped the channel (sunsubscribe): the subscription is renewed on the new
    # one. A slot map read before every node agreed still names the old owner, which refuses
    # it (MOVED); the hub's ticker then places it again each second, as this loop does.
    ticker(listening)
    assert listening.standing.get() == [gid]
    assert channel in shard_channels(replicated.nodes[target])
    assert channel not in shard_channels(replicated.nodes[source])
    assert gs.save(gid, 1, Change(b"s", [b"moved"])) == 2
    assert listening.next_wakeup() == Wakeup(gid, 2, [b"moved"])

    victim = replicated.nodes[target]
    victim.proc.kill()
    victim.proc.wait()
    wait_promoted(replicated, victim.port)
    wait_agreed(replicated, victim.port)
    ticker(listening)
    assert listening.standing.get() == [gid]
    client.nodes_manager.initialize()
    promoted = node_index(replicated, client, key)
    assert promoted >= replicated.masters  # the replica now serves the slot
    assert channel in shard_channels(replicated.nodes[promoted])
    until(lambda: _saved(gs, gid), "the promoted master never took the change")
    assert listening.next_wakeup() == Wakeup(gid, 3, [b"failed over"])
    listening.subscriber.unfollow(gid)
    client.close()


def ticker(listening: Listening) -> None:
    """What the hub's ticker does each second, until a subscription stands."""
    deadline = time.monotonic() + SETTLE
    while listening.standing.empty():
        assert time.monotonic() < deadline, "never subscribed on the slot's owner"
        listening.subscriber.repair()
        time.sleep(0.2)


def _saved(gs: GameStore, gid: str) -> bool:
    try:
        return gs.save(gid, 2, Change(b"s", [b"failed over"])) == 3
    except (redis.ConnectionError, redis.TimeoutError):
        return False


def watch(base: str, gid: str, seen: list[int]) -> None:
    url = f"{base}/api/v1/games/{gid}/events"
    with requests.get(url, headers={"Accept": SSE}, stream=True, timeout=(5, 90)) as r:
        seen.extend(e["version"] for e in sse_entries(r))  # it ends after the game's last


def test_a_stream_gets_every_entry_once_across_resharding_and_failover(
    replicated: LocalRedisCluster,
) -> None:
    """A game played over HTTP while an SSE stream (the streams pool, gevent) follows it: its
    slot is moved to another master, then that master is killed and its replica promoted. The
    stream's subscription stands on each new owner in turn, and it gets versions 1..N once."""
    client = RedisCluster.from_url(replicated.url)
    env = {"REDIS_CLUSTER": "1"}
    streams_env = {**env, "GUNICORN_POOL": "streams", "STREAM_WORKERS": "1"}
    with (
        start_gunicorn(replicated.url, workers=1, env=env, with_worker=False) as api,
        start_gunicorn(replicated.url, env=streams_env, with_worker=False) as streams,
    ):
        created = create(api, players=["ann", "bo"], auto_deal=True, options={"rounds": 1})
        gid = created["game_id"]
        tokens = [seat["token"] for seat in created["seats"]]
        key, channel = K.game_key(gid), K.wakeup_channel(gid).encode()
        seen: list[int] = []
        watcher = threading.Thread(target=watch, args=(streams, gid, seen), daemon=True)
        watcher.start()
        owner = node_index(replicated, client, key)
        until(lambda: channel in shard_channels(replicated.nodes[owner]), "never subscribed")
        rng = random.Random(29)
        play(api, gid, tokens, rng, moves=5)
        target = 2 if owner == 1 else 1  # not node 0: wait_promoted asks node 0
        move_slot(replicated, client.keyslot(key), owner, target)
        until(lambda: channel in shard_channels(replicated.nodes[target]), "not on the new owner")
        play(api, gid, tokens, rng, moves=5)
        victim = replicated.nodes[target]
        victim.proc.kill()
        victim.proc.wait()
        wait_promoted(replicated, victim.port)
        wait_agreed(replicated, victim.port)
        client.nodes_manager.initialize()
        promoted = replicated.nodes[node_index(replicated, client, key)]
        until(lambda: channel in shard_channels(promoted), "not on the promoted replica")
        last = play(api, gid, tokens, rng, moves=10_000)
        watcher.join(SETTLE)
    assert not watcher.is_alive(), seen
    assert seen == list(range(1, last + 1))
    client.close()


def play(base: str, gid: str, tokens: list[str], rng: random.Random, moves: int) -> int:
    """Up to ``moves`` moves (retried through the failover's 503s); the version reached."""
    for _ in range(moves):
        game = view(base, gid)
        if game["status"] == "game_over":
            return int(game["version"])
        token = tokens[game["turn"]]
        until(lambda token=token: _moved(base, gid, token, rng), "no move was taken")
    return int(view(base, gid)["version"])


def _moved(base: str, gid: str, token: str, rng: random.Random) -> bool:
    try:
        return play_turn(base, gid, token, rng) is not None
    except (AssertionError, requests.RequestException):
        return False
