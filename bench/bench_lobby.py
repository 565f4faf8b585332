"""``make bench-lobby``: quick play under a crowd. CLIENTS seekers, split over two instances on
one Redis, seek 4-player tables at once, with bots filling open seats after FILL seconds.

Checks that every client is seated exactly once, no table has more than 4 seats, and every
game starts (is dealt); prints the median and p99 from a seek's request to its answer (seated),
and how long until every table was dealt.

Environment: BENCH_LOBBY_CLIENTS (default 200), BENCH_LOBBY_FILL (default 2 s).
"""

from __future__ import annotations

import collections
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer

CLIENTS = int(os.environ.get("BENCH_LOBBY_CLIENTS", "200"))
FILL = int(os.environ.get("BENCH_LOBBY_FILL", "2"))
SEATS = 4


def seek(base: str, name: str) -> tuple[float, dict[str, Any]]:
    body = {"name": name, "players": SEATS, "fill_with_bots_after": FILL}
    start = time.perf_counter()
    r = requests.post(f"{base}/api/v1/lobby/seek", json=body, timeout=60)
    took = time.perf_counter() - start
    if r.status_code != 201:
        raise RuntimeError(f"seek answered {r.status_code}: {r.text}")
    seated: dict[str, Any] = r.json()
    return took, seated


def wait_dealt(base: str, games: list[str], timeout: float) -> float:
    start, left = time.monotonic(), set(games)
    while left and time.monotonic() - start < timeout:
        for gid in list(left):
            view = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
            if view["status"] != "waiting_deal":
                left.discard(gid)
        time.sleep(0.1)
    if left:
        raise RuntimeError(f"{len(left)} games never started")
    return time.monotonic() - start


def main() -> None:
    env = {"LOG_LEVEL": "warning", "STREAMS_PER_ADDRESS": "0"}
    with (
        RedisServer() as redis,
        start_gunicorn(redis.url, workers=2, env=env) as one,
        start_gunicorn(redis.url, workers=2, env=env, with_worker=False) as two,
    ):
        bases = [one, two]
        began = time.monotonic()
        with ThreadPoolExecutor(CLIENTS) as pool:
            results = list(pool.map(lambda i: seek(bases[i % 2], f"c{i}"), range(CLIENTS)))
        seated_in = time.monotonic() - began
        places = [(s["game_id"], s["seat"]) for _, s in results]
        tables = collections.Counter(gid for gid, _ in places)
        assert len(set(places)) == CLIENTS, "a seat was given twice"
        assert max(tables.values()) <= SEATS, "a table was overfilled"
        started = wait_dealt(one, list(tables), FILL + 60)
    times = sorted(took for took, _ in results)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    full = sum(1 for n in tables.values() if n == SEATS)
    print(
        f"{CLIENTS} seekers over 2 instances: all seated once, at {len(tables)} tables "
        f"({full} full of people, the rest filled by bots after {FILL} s); no table over {SEATS}"
    )
    print(
        f"seek -> seated: median {statistics.median(times) * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms; every seek answered within {seated_in:.2f} s"
    )
    print(f"every game dealt {started:.2f} s after the last seek was answered")


if __name__ == "__main__":
    main()
