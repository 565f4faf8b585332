"""``make bench-api``: the API under load on this machine, against a trivial baseline.

1. Starts a private redis-server and gunicorn (``deploy/gunicorn.conf.py``) serving the API.
2. CLIENTS processes each play 4-player games to the end (one round, so games do finish)
   through HTTP: legal-moves, then a random listed move with If-Match. Prints moves/s,
   requests/s and p50/p99 latency.
3. The same number of processes hit a baseline gunicorn app doing one Redis GET + one SET of a
   document the size of a stored game state; prints its requests/s and our ratio to it. The
   two alternate in BENCH_SLICES slice pairs so that load from elsewhere on the machine hits
   both alike; the ratio is printed over the whole run and as the median of the pairs' ratios.
4. Prints MEMORY USAGE summed over every key of one 4-player game mid-round.

Environment: BENCH_SECONDS (default 48, both sides), BENCH_SLICES (default 6), BENCH_CLIENTS
(default 8), WEB_CONCURRENCY (gunicorn workers), BENCH_AGAINST (another checkout, e.g. a
``git worktree`` of an older commit: its API runs as a third side of every slice pair, so
before and after are measured in the same minutes).
"""

from __future__ import annotations

import contextlib
import http.client
import multiprocessing as mp
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service import rules
from service.store import GameStore

SECONDS = float(os.environ.get("BENCH_SECONDS", "48"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))  # enough to keep every worker busy
# API and baseline alternate in slices, so a busy neighbour on the machine hits both alike; the
# median of the slice pairs' ratios is the figure a single slow slice cannot move.
SLICES = int(os.environ.get("BENCH_SLICES", "6"))
AGAINST = os.environ.get("BENCH_AGAINST")
ROUNDS = 1


class Client:
    """A deliberately light HTTP client (http.client + orjson): the load generator shares the
    machine's cores with the servers, so the less it spends, the more the numbers say about
    the servers. Both runs use it alike; gunicorn's sync workers close every connection."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.lat: list[float] = []

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        data = orjson.dumps(body) if body is not None else None
        hdrs = {"Content-Type": "application/json", **(headers or {})} if data else headers or {}
        t = time.perf_counter()
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
        self.lat.append(time.perf_counter() - t)
        return resp.status, orjson.loads(raw)


def play_games(base: str, seconds: float, seed: int, out: Any) -> None:
    """One client: games back to back until time is up; reports latencies and counts."""
    rng = random.Random(seed)
    c = Client(base)
    moves = games = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        _, created = c.call(
            "POST",
            "/api/v1/games",
            {"players": ["a", "b", "c", "d"], "options": {"rounds": ROUNDS}},
        )
        url = f"/api/v1/games/{created['game_id']}"
        host = {"Authorization": f"Bearer {created['host_token']}"}
        seats = [{"Authorization": f"Bearer {t['token']}"} for t in created["seats"]]
        _, view = c.call("POST", url + "/deal", headers=host)
        while time.monotonic() < end:
            if view["status"] == "game_over":
                games += 1
                break
            if view["status"] != "in_round":
                _, view = c.call("POST", url + "/deal", headers=host)
                continue
            auth = seats[view["turn"]]
            _, listed = c.call("GET", url + "/legal-moves", headers=auth)
            status, view = c.call(
                "POST",
                url + "/moves",
                rng.choice(listed["moves"]),
                {**auth, "If-Match": f'"{view["version"]}"'},
            )
            if status != 200:
                raise RuntimeError(f"move refused: {status} {view}")
            moves += 1
    out.put({"lat": c.lat, "moves": moves, "games": games})


def hit_baseline(base: str, seconds: float, seed: int, out: Any) -> None:
    c = Client(base)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        status, _ = c.call("POST", f"/bench/k{seed}")
        if status != 200:
            raise RuntimeError(f"baseline answered {status}")
    out.put({"lat": c.lat, "moves": 0, "games": 0})


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(port: int) -> float:
    """User + system CPU of every process serving ``port`` (gunicorn master and workers, those
    that exited included).

    Measured in CPU time rather than wall time, it stays meaningful on a busy machine."""
    marker = f"BIND=127.0.0.1:{port}".encode()
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if marker not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # utime, stime, and cutime, cstime: the CPU of children reaped, so that a worker
            # gunicorn recycled (max_requests) mid-slice still counts.
            total += sum(int(x) for x in fields[11:15])
        except OSError:
            continue
    return total / CLOCK_TICKS


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


def summarize(results: list[Any], elapsed: float, cpu: float) -> dict[str, Any]:
    lat = sorted(x for r in results for x in r["lat"])
    return {
        "requests": len(lat),
        "rps": len(lat) / elapsed,
        "moves_s": sum(r["moves"] for r in results) / elapsed,
        "games": sum(r["games"] for r in results),
        "p50": statistics.median(lat) * 1000,
        "p99": lat[int(len(lat) * 0.99)] * 1000,
        "cpu_us": cpu / len(lat) * 1e6,
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
    with RedisServer() as rs, contextlib.ExitStack() as servers:
        env = {"DOC_BYTES": str(doc)}
        sides = {
            "api": (play_games, servers.enter_context(start_gunicorn(rs.url))),
            "base": (
                hit_baseline,
                servers.enter_context(
                    start_gunicorn(rs.url, app="bench.baseline_app:app", env=env)
                ),
            ),
        }
        if AGAINST:
            other = servers.enter_context(start_gunicorn(rs.url, root=Path(AGAINST)))
            sides["against"] = (play_games, other)
        runs, pairs = alternate(sides)
        mem, nkeys = game_memory(sides["api"][1], rs.url, idempotent=False)
        mem_idem, nkeys_idem = game_memory(sides["api"][1], rs.url, idempotent=True)
    report(runs, pairs, doc)
    print(f"memory:   {mem} bytes over {nkeys} key(s) for one 4-player game mid-round")
    print(
        f"          {mem_idem} bytes over {nkeys_idem} keys when every move sent an "
        "Idempotency-Key (responses kept 24 h)"
    )


Side = tuple[Callable[[str, float, int, Any], None], str]


def alternate(sides: dict[str, Side]) -> tuple[dict[str, dict[str, Any]], dict[str, list[float]]]:
    """SLICES rounds, each giving every side one slice in turn; each side's summary, and per
    API side the ratios of its slices to the baseline's slice of the same round."""
    runs: dict[str, tuple[list[Any], float, float]] = {name: ([], 0.0, 0.0) for name in sides}
    pairs: dict[str, list[float]] = {name: [] for name in sides if name != "base"}
    for i in range(SLICES):
        rates = {}
        for name, (target, url) in sides.items():
            port = int(url.rsplit(":", 1)[1])
            cpu0 = cpu_seconds(port)
            res, took = run_slice(target, url, SECONDS / SLICES / 2, i)
            cpu = cpu_seconds(port) - cpu0
            prev = runs[name]
            runs[name] = (prev[0] + res, prev[1] + took, prev[2] + cpu)
            rates[name] = sum(len(r["lat"]) for r in res) / took
        for name in pairs:
            pairs[name].append(rates[name] / rates["base"])
    return {name: summarize(*run) for name, run in runs.items()}, pairs


def report(runs: dict[str, dict[str, Any]], pairs: dict[str, list[float]], doc: int) -> None:
    baseline = runs["base"]
    for name in pairs:
        ours = runs[name]
        label = "API" if name == "api" else f"API of {AGAINST}"
        print(
            f"{label}: {ours['moves_s']:8.0f} moves/s  {ours['rps']:8.0f} req/s  "
            f"p50 {ours['p50']:.2f} ms  p99 {ours['p99']:.2f} ms  "
            f"({ours['games']} games finished, {ours['requests']} requests)"
        )
    print(
        f"baseline: {baseline['rps']:8.0f} req/s  p50 {baseline['p50']:.2f} ms  "
        f"p99 {baseline['p99']:.2f} ms  (Flask + one Redis GET and SET of {doc} bytes)"
    )
    for name, ratios in pairs.items():
        ours = runs[name]
        label = "ratio" if name == "api" else "ratio of the other tree"
        print(
            f"{label}: {ours['rps'] / baseline['rps']:.2f} of the baseline's request rate; "
            f"median of {SLICES} slice pairs {statistics.median(ratios):.2f} "
            f"(range {min(ratios):.2f}-{max(ratios):.2f})"
        )
        print(
            f"  server CPU per request: API {ours['cpu_us']:.0f} us, baseline "
            f"{baseline['cpu_us']:.0f} us -> ratio {baseline['cpu_us'] / ours['cpu_us']:.2f} "
            "(insensitive to other load)"
        )


if __name__ == "__main__":
    main()
