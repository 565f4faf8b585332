"""``make bench-sweep``: what one sweep for lost hand-overs (service/worker/sweep.py) costs, on
one Redis and on a local 3-master cluster.

Each due set is filled as a stored change fills it: GAMES live games, of which a quarter are
owed nothing (not in any set), most owe a turn clock due later, and OVERDUE are owed a change
for longer than the grace yet queued (a busy queue: the sweep must read them and find each in
a stream). Prints the median and the worst of ROUNDS sweeps, in wall time and in the sweeping
thread's CPU.

Environment: BENCH_SWEEP_GAMES (default 10000,100000), BENCH_SWEEP_OVERDUE (default 0,500).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

import redis
from redis.cluster import RedisCluster

from devstack.redis_cluster import LocalRedisCluster
from devstack.redis_server import RedisServer
from service.store import keys
from service.store.due import DueSets
from service.store.tokens import new_game_id
from service.store.work import WorkQueue
from service.worker.sweep import GRACE_MS, sweeper

GAMES = [int(n) for n in os.environ.get("BENCH_SWEEP_GAMES", "10000,100000").split(",")]
OVERDUE = [int(n) for n in os.environ.get("BENCH_SWEEP_OVERDUE", "0,500").split(",")]
ROUNDS = 20
NOW = 10**12


def fill(client: redis.Redis | RedisCluster, games: int, overdue: int) -> None:
    sharded = isinstance(client, RedisCluster)
    queue = WorkQueue(client)
    queue.ensure_group()
    pipe = client.pipeline(transaction=False)
    for n in range(games * 3 // 4):
        gid = new_game_id()
        late = n < overdue
        due = NOW - GRACE_MS - 1_000 if late else NOW + 60_000 + n
        pipe.zadd(keys.due_key(gid, sharded), {gid: due})
        if late:
            pipe.xadd(keys.WORK_JOBS, {"g": gid})
    pipe.execute()


def measure(sweep: Callable[[int], list[str]]) -> tuple[list[float], list[float]]:
    wall, cpu = [], []
    for _ in range(ROUNDS):
        t, c = time.perf_counter(), time.thread_time()
        assert sweep(NOW) == []
        wall.append(time.perf_counter() - t)
        cpu.append(time.thread_time() - c)
    return wall, cpu


def report(where: str, client: redis.Redis | RedisCluster, games: int, overdue: int) -> None:
    client.flushall()
    fill(client, games, overdue)
    wall, cpu = measure(sweeper(DueSets(client), WorkQueue(client)))
    print(
        f"{where:8} {games:>7} live games, {overdue:>4} overdue and queued: "
        f"wall median {statistics.median(wall) * 1000:7.1f} ms (max {max(wall) * 1000:7.1f}), "
        f"CPU median {statistics.median(cpu) * 1000:7.1f} ms"
    )


def main() -> None:
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        for games in GAMES:
            for overdue in OVERDUE:
                report("redis", client, games, overdue)
    with LocalRedisCluster() as cluster:
        client = cluster.client()
        for games in GAMES:
            for overdue in OVERDUE:
                report("cluster", client, games, overdue)


if __name__ == "__main__":
    main()
