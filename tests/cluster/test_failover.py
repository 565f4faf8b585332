"""Redis Cluster failover under load: 3 masters with a replica each; a master is killed (SIGKILL)
while 30 bot games run through ``make run``'s stack (nginx, API and streams pools,
REDIS_CLUSTER=1), each watched by an SSE reader. The replica is promoted, every game finishes
with versions = 1 + acknowledged actions, every reader gets every entry once, /readyz is 503
while a master is missing and ready again after, every worker answers normally within a second
of the promotion, and the seconds each shard could not be written are reported."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
import requests
from redis.cluster import RedisCluster

from devstack.redis_cluster import SLOTS, LocalRedisCluster
from devstack.stack import run_stack
from service.store import NO_TOKEN, Change, GameStore, connect
from service.store import keys as K
from service.store.tokens import hash_token, new_token
from tests.faults.load import Journal, play_during, specs, total_actions, wait_for
from tests.faults.watched import WatchedJournal, check_readers

pytestmark = pytest.mark.slow

VICTIM = 1  # index of the master killed (not node 0, which REDIS_URL names)
HEALED = 1.0  # every worker answers normally within this long after the promotion


@pytest.fixture()
def replicated() -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(masters=3, replicas=1) as cluster:
        yield cluster


@pytest.fixture()
def replicated_client(replicated: LocalRedisCluster) -> Iterator[RedisCluster]:
    """The service's cluster client (``connect``) on the replicated cluster."""
    client = connect(replicated.url, cluster=True)
    assert isinstance(client, RedisCluster)
    yield client
    client.close()


@dataclass
class ShardProbe:
    """Writes one key of a shard every 50 ms and sums the time between a failed write and the
    next successful one: the seconds this shard could not be written."""

    url: str
    key: str
    down: float = 0.0
    failures: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        client = RedisCluster.from_url(self.url, socket_timeout=0.5, socket_connect_timeout=0.25)
        failed_at: float | None = None
        while not self.stop.is_set():
            try:
                client.set(self.key, b"x")
                if failed_at is not None:
                    self.down += time.monotonic() - failed_at
                    failed_at = None
            except (redis.RedisError, OSError):
                self.failures += 1
                failed_at = failed_at or time.monotonic()
            time.sleep(0.05)
        client.close()


def key_on_shard(start: int, end: int) -> str:
    """A key (with a hash tag, like the service's) whose slot is in ``[start, end)``."""
    for n in range(100_000):
        key = K.game_key(f"probe{n:07d}")
        if start <= redis.cluster.key_slot(key.encode()) < end:
            return key
    raise AssertionError("no key found")


def wait_promoted(cluster: LocalRedisCluster, victim_port: int, timeout: float = 30) -> float:
    """When a surviving node sees all slots served again by live masters."""
    survivor = redis.Redis.from_url(cluster.urls[0])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = survivor.cluster("INFO")
        masters = [int(n[2][1]) for n in survivor.cluster("SLOTS")]  # [start, end, master...]
        if info.get("cluster_state") == "ok" and victim_port not in masters:
            survivor.close()
            return time.monotonic()
        time.sleep(0.05)
    raise AssertionError("the replica was not promoted")


def test_killed_master_fails_over_and_every_game_finishes(
    replicated: LocalRedisCluster, tmp_path: Path
) -> None:
    victim = replicated.nodes[VICTIM]
    bounds = [SLOTS * i // 3 for i in range(4)]
    probes = [ShardProbe(replicated.url, key_on_shard(bounds[i], bounds[i + 1])) for i in range(3)]
    threads = [threading.Thread(target=p.run) for p in probes]
    games = specs(30, base_seed=60_000)
    total = total_actions(games)
    moments: dict[str, float] = {}
    ready: list[tuple[float, int]] = []
    env = {"REDIS_CLUSTER": "1"}
    with run_stack(replicated.url, tmp_path, env) as url:

        def kill_a_master(journal: Journal) -> None:
            wait_for(journal, total // 3)
            assert victim.proc is not None
            victim.proc.kill()
            moments["killed"] = time.monotonic()
            watcher = threading.Thread(
                target=lambda: moments.update(promoted=wait_promoted(replicated, victim.port))
            )
            watcher.start()
            while watcher.is_alive() or time.monotonic() < moments["killed"] + 15:
                r = requests.get(url + "/readyz", timeout=10)
                ready.append((time.monotonic(), r.status_code))
                if r.status_code == 200 and "promoted" in moments:
                    break
                time.sleep(0.2)
            watcher.join()
            moments["applied"] = journal.applied

        for t in threads:
            t.start()
        try:
            journal = WatchedJournal(url)
            played, _ = play_during(url, games, kill_a_master, concurrency=4, journal=journal)
        finally:
            for p in probes:
                p.stop.set()
            for t in threads:
                t.join()

    killed, promoted = moments["killed"], moments["promoted"]
    assert moments["applied"] < total, "games were still being played after the failover"
    assert len(played) == len(games)
    check_readers(journal, played)
    late = [a.sent + a.seconds for a in journal.answers if a.sent >= promoted and a.status >= 500]
    healed = max(late, default=promoted) - promoted
    failures = [a for a in journal.answers if a.status >= 500]
    assert all((a.status, a.code) == (503, "storage_unavailable") for a in failures), failures[:5]
    # /readyz: not ready while a master is missing, ready again once the replica took over.
    assert any(s == 503 for t, s in ready if killed < t < promoted), ready
    assert ready[-1][1] == 200, ready
    down = [round(p.down, 2) for p in probes]
    print(
        f"\nfailover: replica promoted {promoted - killed:.2f} s after the kill; seconds each "
        f"shard could not be written: {down} (shard {VICTIM} lost its master); "
        f"{len(failures)} 503s of {len(journal.answers)} answers; {len(played)} games finished; "
        f"ready again {ready[-1][0] - killed:.2f} s after the kill; the last 503 "
        f"{healed:.3f} s after the promotion; {len(journal.readers)} readers got every entry once"
    )
    assert healed <= HEALED
    assert probes[VICTIM].down > 0, "the probe saw no outage"
    assert all(p.down < 1.0 for i, p in enumerate(probes) if i != VICTIM), down


def test_an_acknowledged_write_is_on_a_replica(replicated_client: RedisCluster) -> None:
    """Replication is asynchronous: the compare-and-set waits (WAIT) until a replica has the
    change before the store returns, so a master killed next cannot take it away."""
    client = replicated_client
    gs = GameStore(client)
    gid = gs.create(b"s1", new_token(), [hash_token(new_token())], [b"r1"])
    key = K.game_key(gid)
    master_node = client.get_node_from_key(key)
    replica_node = client.get_node_from_key(key, replica=True)
    master = redis.Redis(host=master_node.host, port=master_node.port)
    replica = redis.Redis(host=replica_node.host, port=replica_node.port)
    replica.execute_command("READONLY")

    def waits() -> int:
        return int(master.info("commandstats").get("cmdstat_wait", {}).get("calls", 0))

    assert gs.save(gid, 1, Change(b"s", [b"r"])) == 2  # loads the script on that master
    before = waits()
    for version in range(2, 22):
        assert gs.save(gid, version, Change(b"s", [b"r"])) == version + 1
        assert replica.hget(key, "v") == str(version + 1).encode()
    assert waits() == before + 20


def test_a_write_to_a_dead_master_fails_then_finds_the_promoted_replica(
    replicated: LocalRedisCluster, replicated_client: RedisCluster
) -> None:
    client = replicated_client
    gs = GameStore(client)
    victim = replicated.nodes[VICTIM]
    gid = next(
        g
        for g in (gs.create(b"s1", new_token(), [NO_TOKEN], [b"r1"]) for _ in range(200))
        if client.get_node_from_key(K.game_key(g)).port == victim.port
    )
    victim.proc.kill()
    victim.proc.wait()
    with pytest.raises((redis.ConnectionError, redis.TimeoutError)):
        gs.save(gid, 1, Change(b"s2", [b"r2"]))
    wait_promoted(replicated, victim.port)
    deadline = time.monotonic() + 15
    while True:  # the slot map is refreshed by the failed write (and again until promoted)
        try:
            assert gs.save(gid, 1, Change(b"s2", [b"r2"])) == 2
            break
        except (redis.ConnectionError, redis.TimeoutError):
            assert time.monotonic() < deadline, "the promoted replica was never found"
            time.sleep(0.2)
    assert gs.load(gid).version == 2


def test_a_write_sent_to_a_master_without_the_slot_follows_moved(
    replicated_client: RedisCluster,
) -> None:
    client = replicated_client
    gs = GameStore(client)
    gid = gs.create(b"s1", new_token(), [NO_TOKEN], [b"r1"])
    slot = client.keyslot(K.game_key(gid))
    right = client.nodes_manager.slots_cache[slot]
    wrong = next(n for n in client.get_primaries() if n.port != right[0].port)
    # A stale slot map: the master named first no longer serves this slot (answers MOVED).
    client.nodes_manager.slots_cache[slot] = [wrong, *right[1:]]
    assert gs.save(gid, 1, Change(b"s2", [b"r2"])) == 2
    assert gs.load(gid).version == 2  # applied once, where the slot lives
    assert client.get_node_from_key(K.game_key(gid)).port == right[0].port
