"""``make bench-api``: the API under load on this machine, against a trivial baseline.

1. Starts a private redis-server and gunicorn (``deploy/gunicorn.conf.py``) serving the API.
2. CLIENTS processes each play 4-player games to the end (one round, so games do finish)
   through HTTP: legal-moves, then a random listed move with If-Match. Prints moves/s,
   requests/s and p50/p99 latency.
3. The same number of processes hit a baseline gunicorn app doing one Redis GET + one SET of a
   document the size of a stored game state; prints its requests/s and our ratio to it. The
   two alternate in short slices so that load from elsewhere on the machine hits both alike.
4. Prints MEMORY USAGE summed over every key of one 4-player game mid-round.

Environment: BENCH_SECONDS (default 24, both sides), BENCH_CLIENTS (default 4),
WEB_CONCURRENCY (gunicorn workers).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import statistics
import time
from typing import Any

import redis
import requests

from service import rules
from service.store import GameStore
from service.store.redis_server import RedisServer
from tests.servers import start_gunicorn

SECONDS = float(os.environ.get("BENCH_SECONDS", "24"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
SLICES = 3  # API and baseline alternate, so a busy neighbour on the machine hits both alike
ROUNDS = 1


def play_games(base: str, seconds: float, seed: int, out: Any) -> None:
    """One client: games back to back until time is up; reports latencies and counts."""
    rng = random.Random(seed)
    s = requests.Session()
    lat: list[float] = []
    moves = games = 0

    def timed(method: str, url: str, **kw: Any) -> requests.Response:
        t = time.perf_counter()
        r = s.request(method, url, **kw)
        lat.append(time.perf_counter() - t)
        return r

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        created = timed(
            "POST",
            base + "/api/v1/games",
            json={"players": ["a", "b", "c", "d"], "options": {"rounds": ROUNDS}},
        ).json()
        url = f"{base}/api/v1/games/{created['game_id']}"
        host = {"Authorization": f"Bearer {created['host_token']}"}
        seats = [{"Authorization": f"Bearer {t['token']}"} for t in created["seats"]]
        view = timed("POST", url + "/deal", headers=host).json()
        while time.monotonic() < end:
            if view["status"] == "game_over":
                games += 1
                break
            if view["status"] != "in_round":
                view = timed("POST", url + "/deal", headers=host).json()
                continue
            auth = seats[view["turn"]]
            listed = timed("GET", url + "/legal-moves", headers=auth).json()["moves"]
            r = timed(
                "POST",
                url + "/moves",
                json=rng.choice(listed),
                headers={**auth, "If-Match": f'"{view["version"]}"'},
            )
            if r.status_code != 200:
                raise RuntimeError(f"move refused: {r.status_code} {r.text}")
            view = r.json()
            moves += 1
    out.put({"lat": lat, "moves": moves, "games": games})


def hit_baseline(base: str, seconds: float, seed: int, out: Any) -> None:
    s = requests.Session()
    lat: list[float] = []
    key = f"k{seed}"
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        r = s.post(f"{base}/bench/{key}")
        lat.append(time.perf_counter() - t)
        r.raise_for_status()
    out.put({"lat": lat, "moves": 0, "games": 0})


def run_slice(target: Any, base: str, seconds: float, seed: int) -> tuple[list[Any], float]:
    q: Any = mp.Queue()
    procs = [
        mp.Process(target=target, args=(base, seconds, seed * 100 + i, q)) for i in range(CLIENTS)
    ]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    results = [q.get() for _ in procs]
    for p in procs:
        p.join()
    return results, time.perf_counter() - t0


def summarize(results: list[Any], elapsed: float) -> dict[str, Any]:
    lat = sorted(x for r in results for x in r["lat"])
    return {
        "requests": len(lat),
        "rps": len(lat) / elapsed,
        "moves_s": sum(r["moves"] for r in results) / elapsed,
        "games": sum(r["games"] for r in results),
        "p50": statistics.median(lat) * 1000,
        "p99": lat[int(len(lat) * 0.99)] * 1000,
    }


def state_size() -> int:
    """Bytes of a stored 4-player double-12 state a few moves into a round."""
    state = rules.new_game(["a", "b", "c", "d"], seed=1)
    rules.deal(state)
    rng = random.Random(1)
    for _ in range(12):
        if state.status != "in_round" or state.turn is None:
            break
        rules.apply(state, state.turn, rng.choice(rules.legal_moves(state, state.turn)))
    return len(rules.dumps(state))


def game_memory(base: str, redis_url: str, idempotent: bool) -> tuple[int, int]:
    """(bytes, keys) of one 4-player game after its deal and 12 moves."""
    s = requests.Session()
    created = s.post(base + "/api/v1/games", json={"players": ["a", "b", "c", "d"]}).json()
    url = f"{base}/api/v1/games/{created['game_id']}"
    view = s.post(url + "/deal", headers={"Authorization": f"Bearer {created['host_token']}"})
    turn = view.json()["turn"]
    for i in range(12):
        auth = {"Authorization": f"Bearer {created['seats'][turn]['token']}"}
        if idempotent:
            auth["Idempotency-Key"] = f'"move-{i}"'
        move = s.get(url + "/legal-moves", headers=auth).json()["moves"][0]
        turn = s.post(url + "/moves", json=move, headers=auth).json()["turn"]
    client = redis.Redis.from_url(redis_url)
    keys = GameStore(client).game_keys(created["game_id"])
    return sum(int(client.memory_usage(k) or 0) for k in keys), len(keys)


def main() -> None:
    doc = state_size()
    print(
        f"clients: {CLIENTS} processes; {SECONDS:.0f} s in {SLICES} alternating slices per side; "
        f"stored state: {doc} bytes; games of {ROUNDS} round(s), 4 players"
    )
    with RedisServer() as rs:
        env = {"DOC_BYTES": str(doc)}
        with (
            start_gunicorn(rs.url) as api,
            start_gunicorn(rs.url, app="tests.bench.baseline_app:app", env=env) as base,
        ):
            runs: dict[str, tuple[list[Any], float]] = {"api": ([], 0.0), "base": ([], 0.0)}
            for i in range(SLICES):
                for name, target, url in (("api", play_games, api), ("base", hit_baseline, base)):
                    res, took = run_slice(target, url, SECONDS / SLICES / 2, i)
                    runs[name] = (runs[name][0] + res, runs[name][1] + took)
            ours, baseline = summarize(*runs["api"]), summarize(*runs["base"])
            mem, nkeys = game_memory(api, rs.url, idempotent=False)
            mem_idem, nkeys_idem = game_memory(api, rs.url, idempotent=True)
    print(
        f"API:      {ours['moves_s']:8.0f} moves/s  {ours['rps']:8.0f} req/s  "
        f"p50 {ours['p50']:.2f} ms  p99 {ours['p99']:.2f} ms  "
        f"({ours['games']} games finished, {ours['requests']} requests)"
    )
    print(
        f"baseline: {baseline['rps']:8.0f} req/s  p50 {baseline['p50']:.2f} ms  "
        f"p99 {baseline['p99']:.2f} ms  (Flask + one Redis GET and SET of {doc} bytes)"
    )
    print(f"ratio:    {ours['rps'] / baseline['rps']:.2f} of the baseline's request rate")
    print(f"memory:   {mem} bytes over {nkeys} key(s) for one 4-player game mid-round")
    print(
        f"          {mem_idem} bytes over {nkeys_idem} keys when every move sent an "
        "Idempotency-Key (responses kept 24 h)"
    )


if __name__ == "__main__":
    main()
