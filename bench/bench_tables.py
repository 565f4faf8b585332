"""``make bench-tables``: requests per action over HTTP, for a person and for HTTP bots.

Starts a private Redis and gunicorn (``deploy/gunicorn.conf.py``), then:

1. plays GAMES full 4-player ``standard`` games (13 rounds) with ``auto_deal``: seat 0 is a
   person (this client), seats 1-3 are server bots of LEVEL. The person plays a random move
   from the ``legal_moves`` its answers carry, and when the bots' replies are not in the answer
   it waits for its turn on a long-poll of its seat's log (an entry that gives it the turn
   carries its moves). Every request is counted: the floor is one per action of the person.
2. plays GAMES 4-player games of the tournament's HTTP driver with four HTTP bots (greedy),
   each move and deal one request, and counts requests per action the same way.

Reports requests per action and p50/p99 of the person's move requests (each carries the bots'
moves that follow it). Numbers are printed, never asserted.

Environment: BENCH_GAMES (default 3), BENCH_LEVEL (default planner).
"""

from __future__ import annotations

import os
import random
import statistics
import time
from typing import Any

import requests
from mexican_train_client import Client

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service.bots.registry import make_bot
from service.tournament.runner import drive_http

GAMES = int(os.environ.get("BENCH_GAMES", "3"))
LEVEL = os.environ.get("BENCH_LEVEL", "planner")


def play_game(base: str, http: requests.Session, rng: random.Random) -> tuple[int, int, list]:
    """One game; (requests, person's actions, move latencies in ms)."""
    bots = [{"name": f"cpu{i}", "bot": LEVEL} for i in (1, 2, 3)]
    body = {"players": ["me", *bots], "auto_deal": True}
    created = http.post(f"{base}/api/v1/games", json=body).json()
    gid, auth = created["game_id"], {"Authorization": f"Bearer {created['seats'][0]['token']}"}
    answer = http.get(f"{base}/api/v1/games/{gid}", headers=auth).json()
    count, actions, latencies = 2, 0, []
    while answer["status"] != "game_over":
        if "legal_moves" not in answer:
            answer = wait_for_turn(base, http, gid, auth, answer)
            count += 1
            continue
        start = time.perf_counter()
        done = http.post(
            f"{base}/api/v1/games/{gid}/moves", json=rng.choice(answer["legal_moves"]), headers=auth
        )
        latencies.append((time.perf_counter() - start) * 1000)
        assert done.status_code == 200, done.text
        count, actions, answer = count + 1, actions + 1, done.json()
    return count, actions, latencies


def wait_for_turn(
    base: str, http: requests.Session, gid: str, auth: dict[str, str], last: dict[str, Any]
) -> dict[str, Any]:
    """The log after ``last`` as the seat sees it (a long-poll): the last entry's moves if it
    gives the seat its turn, and whether the game is over."""
    params = {"after": last["version"], "wait": 30}
    page = http.get(f"{base}/api/v1/games/{gid}/events", params=params, headers=auth).json()
    if not page["entries"]:
        return last
    entry = page["entries"][-1]
    over = any(e["type"] == "game_over" for e in entry["events"])
    answer = {"version": entry["version"], "status": "game_over" if over else "in_round"}
    if "legal_moves" in entry:
        answer["legal_moves"] = entry["legal_moves"]
    return answer


class Counting(Client):
    """The tournament driver's client, counting its requests."""

    sent = 0

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        self.sent += 1
        return super().request(method, path, **kwargs)


def http_bots(base: str) -> tuple[int, int]:
    """GAMES games of four HTTP bots through the tournament driver: (requests, actions)."""
    count = actions = 0
    for game in range(GAMES):
        with Counting(base) as client:
            created = client.create_game([f"b{i}" for i in range(4)], seed=game)

            def moved(_seat: int, _move: object) -> None:
                nonlocal actions
                actions += 1

            drive_http(client, created, [make_bot("greedy", s) for s in range(4)], moved)
            count += client.sent
            actions += created_rounds(client, created["game_id"])
    return count, actions


def created_rounds(client: Client, game_id: str) -> int:
    """The deals of a finished game (one action of the driver each)."""
    return int(client.score(game_id)["round"])


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
        bot_requests, bot_actions = http_bots(base)
    latencies.sort()
    p99 = latencies[max(int(len(latencies) * 0.99) - 1, 0)]
    print(f"{GAMES} games of 13 rounds, one person against three {LEVEL} bots (auto_deal)")
    print(
        f"requests per game: {totals / GAMES:.0f} for {actions / GAMES:.0f} actions of the "
        f"person ({totals / actions:.3f} per action; the floor is 1)"
    )
    print(
        f"move request with the bots' replies: p50 {statistics.median(latencies):.1f} ms  "
        f"p99 {p99:.1f} ms"
    )
    print(
        f"{GAMES} games of four HTTP bots (tournament driver): {bot_requests} requests for "
        f"{bot_actions} moves and deals ({bot_requests / bot_actions:.3f} per action)"
    )


if __name__ == "__main__":
    main()
