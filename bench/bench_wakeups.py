"""``make bench-wakeups``: what wake-ups cost each node of a 3-master Redis Cluster.

The same load is run twice on one local cluster (3 masters, no replicas): once served by the
checkout named by BENCH_AGAINST (e.g. a worktree of main, whose scripts PUBLISH on one global
channel) and once by this one (SPUBLISH on each game's channel). Each run: an API pool (2
workers, with the background worker) and a streams pool (gevent, 1 worker) with
REDIS_CLUSTER=1; BENCH_GAMES (30) bot games played to the end over HTTP, BENCH_CONCURRENCY (4)
at a time, each followed by one SSE reader from its creation on.

Reported per master, as the deltas over the run: the pub/sub messages the cluster bus carried
(``CLUSTER INFO`` ``cluster_stats_messages_publish_sent/received``, and the ``publishshard``
pair), and the PUBLISH and SPUBLISH calls run there (``INFO commandstats``, scripts' calls
included). Every reader must hold every entry once; the counts are printed, never compared.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import redis
import requests
from mexican_train_client import Client

from devstack.gunicorn import start_gunicorn
from devstack.redis_cluster import LocalRedisCluster
from service.tournament.runner import GameSpec, game_specs, play_http

ROOT = Path(__file__).resolve().parent.parent
AGAINST = os.environ.get("BENCH_AGAINST", "")
GAMES = int(os.environ.get("BENCH_GAMES", "30"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "4"))
BOTS = ("planner", "greedy", "random", "random")
BUS = (
    "cluster_stats_messages_publish_sent",
    "cluster_stats_messages_publish_received",
    "cluster_stats_messages_publishshard_sent",
    "cluster_stats_messages_publishshard_received",
)
CALLS = ("publish", "spublish")


def specs() -> list[GameSpec]:
    """One-round games of 2 to 4 bots, the same on every run."""
    return [
        game_specs(BOTS[: 2 + i % 3], 1, base_seed=29_000 + i, options={"rounds": 1})[0]
        for i in range(GAMES)
    ]


def read_stream(url: str, game_id: str, got: list[int]) -> None:
    """Every entry id of the game's SSE stream, which ends after the game's last entry."""
    events = f"{url}/api/v1/games/{game_id}/events"
    with requests.get(
        events, headers={"Accept": "text/event-stream"}, stream=True, timeout=60
    ) as r:
        got.extend(int(line[4:]) for line in r.iter_lines() if line.startswith(b"id: "))


class WatchedClient(Client):
    """The bots' client; each game it creates gets an SSE reader on the streams pool at once."""

    def __init__(self, api: str, streams: str, readers: dict[str, list[int]]) -> None:
        super().__init__(api, timeout=30.0)
        self.streams, self.readers = streams, readers
        self.threads: list[threading.Thread] = []

    def create_game(self, *args: Any, **kwargs: Any) -> Any:
        created = super().create_game(*args, **kwargs)
        got = self.readers[created["game_id"]] = []
        thread = threading.Thread(target=read_stream, args=(self.streams, created["game_id"], got))
        thread.start()
        self.threads.append(thread)
        return created


def play_watched(api: str, streams: str) -> dict[str, list[int]]:
    """Every game played to its end, CONCURRENCY at a time; what each game's reader got."""
    readers: dict[str, list[int]] = {}
    clients: list[WatchedClient] = []

    def one(spec: GameSpec) -> None:
        client = WatchedClient(api, streams, readers)
        clients.append(client)
        play_http(client, spec)

    with ThreadPoolExecutor(CONCURRENCY) as pool:
        list(pool.map(one, specs()))
    for client in clients:
        for thread in client.threads:
            thread.join(timeout=60)
        client.close()
    return readers


def check(api: str, readers: dict[str, list[int]]) -> None:
    """Every reader got versions 1..final of its game, each once."""
    assert len(readers) == GAMES, len(readers)
    for game_id, got in readers.items():
        final = requests.get(f"{api}/api/v1/games/{game_id}", timeout=30).json()["version"]
        assert got == list(range(1, final + 1)), (game_id, final, got[-5:])


def counters(node_url: str) -> dict[str, int]:
    client = redis.Redis.from_url(node_url)
    try:
        info = client.cluster("INFO")
        stats = client.info("commandstats")
    finally:
        client.close()
    found = {name: int(info.get(name, 0)) for name in BUS}
    found.update({c: int(stats.get(f"cmdstat_{c}", {}).get("calls", 0)) for c in CALLS})
    return found


def run(cluster: LocalRedisCluster, tree: Path) -> list[dict[str, int]]:
    """The load served from ``tree``; each master's counter deltas."""
    flush = cluster.client()
    flush.flushall()
    flush.close()
    masters = [n.url for n in cluster.nodes[: cluster.masters]]
    env = {"REDIS_CLUSTER": "1"}
    streams_env = {**env, "GUNICORN_POOL": "streams", "STREAM_WORKERS": "1"}
    with (
        start_gunicorn(cluster.url, workers=2, env=env, root=tree) as api,
        start_gunicorn(cluster.url, env=streams_env, root=tree, with_worker=False) as streams,
    ):
        before = [counters(url) for url in masters]
        readers = play_watched(api, streams)
        after = [counters(url) for url in masters]
        check(api, readers)
    print(f"{tree}: {GAMES} games, {len(readers)} readers got every entry once")
    return [{k: a[k] - b[k] for k in a} for b, a in zip(before, after, strict=True)]


def report(name: str, deltas: list[dict[str, int]]) -> None:
    print(f"\n{name}")
    head = ("master", "bus publish sent/recv", "bus shard sent/recv", "PUBLISH", "SPUBLISH")
    print(f"{head[0]:>6} {head[1]:>22} {head[2]:>20} {head[3]:>8} {head[4]:>8}")
    for i, d in enumerate(deltas):
        bus = f"{d[BUS[0]]}/{d[BUS[1]]}"
        shard = f"{d[BUS[2]]}/{d[BUS[3]]}"
        print(f"{i:>6} {bus:>22} {shard:>20} {d['publish']:>8} {d['spublish']:>8}")
    total = sum(d[BUS[1]] + d[BUS[3]] + d["publish"] + d["spublish"] for d in deltas)
    print(f"pub/sub messages handled by all masters (published there or received): {total}")


def main() -> None:
    with LocalRedisCluster(masters=3) as cluster:
        results = []
        if AGAINST:
            results.append((f"global PUBLISH ({AGAINST})", run(cluster, Path(AGAINST))))
        results.append((f"sharded SPUBLISH ({ROOT})", run(cluster, ROOT)))
    for name, deltas in results:
        report(name, deltas)


if __name__ == "__main__":
    main()
