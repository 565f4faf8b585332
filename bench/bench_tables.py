"""``make bench-tables``: one person against three server bots, over HTTP.

Starts a private Redis and gunicorn (``deploy/gunicorn.conf.py``), then plays GAMES full
4-player ``standard`` games (13 rounds) with ``auto_deal``: seat 0 is a person (this client),
seats 1-3 are server bots of LEVEL. The person only asks for its legal moves and plays one (a
random one), so every request is counted: the floor is one request per action of the person
(the move; the legal moves could come from the previous answer's view). Reports requests per
game and per action, and p50/p99 of the person's move requests (each carries the bots' moves
that follow it). Numbers are printed, never asserted.

Environment: BENCH_GAMES (default 3), BENCH_LEVEL (default planner).
"""

from __future__ import annotations

import os
import random
import statistics
import time

import requests

from service.launch.redis_server import RedisServer
from tests.servers import start_gunicorn

GAMES = int(os.environ.get("BENCH_GAMES", "3"))
LEVEL = os.environ.get("BENCH_LEVEL", "planner")


def play_game(base: str, http: requests.Session, rng: random.Random) -> tuple[int, int, list]:
    """One game; (requests, person's actions, move latencies in ms)."""
    bots = [{"name": f"cpu{i}", "bot": LEVEL} for i in (1, 2, 3)]
    body = {"players": ["me", *bots], "auto_deal": True}
    created = http.post(f"{base}/api/v1/games", json=body).json()
    gid, auth = created["game_id"], {"Authorization": f"Bearer {created['seats'][0]['token']}"}
    count, actions, latencies, status = 1, 0, [], created["status"]
    while status != "game_over":
        legal = http.get(f"{base}/api/v1/games/{gid}/legal-moves", headers=auth).json()
        count += 1
        start = time.perf_counter()
        done = http.post(
            f"{base}/api/v1/games/{gid}/moves", json=rng.choice(legal["moves"]), headers=auth
        )
        latencies.append((time.perf_counter() - start) * 1000)
        assert done.status_code == 200, done.text
        count, actions, status = count + 1, actions + 1, done.json()["status"]
    return count, actions, latencies


def main() -> None:
    rng = random.Random(1)
    totals, actions, latencies = 0, 0, []
    with (
        RedisServer() as redis,
        start_gunicorn(redis.url, workers=2) as base,
        requests.Session() as http,
    ):
        for _ in range(GAMES):
            made, acted, times = play_game(base, http, rng)
            totals, actions, latencies = totals + made, actions + acted, latencies + times
    latencies.sort()
    p99 = latencies[max(int(len(latencies) * 0.99) - 1, 0)]
    print(f"{GAMES} games of 13 rounds, one person against three {LEVEL} bots (auto_deal)")
    print(
        f"requests per game: {totals / GAMES:.0f} for {actions / GAMES:.0f} actions of the "
        f"person ({totals / actions:.2f} per action; the floor is 1)"
    )
    print(
        f"move request with the bots' replies: p50 {statistics.median(latencies):.1f} ms  "
        f"p99 {p99:.1f} ms"
    )


if __name__ == "__main__":
    main()
