"""Which gunicorn worker class and count? ``python -m bench.bench_workers``.

Runs the real app on a private redis-server under each configuration and drives it with ``wrk``
(C, so the load generator takes little of the machine's CPU): a mix of the two requests a bot
makes most (its seat view and legal-moves, each a Redis read + state decode + view build) over
200 dealt games, plus a third of POSTs that the engine refuses (409: parse, load, judge, no
write). Prints requests/s and the CPU time gunicorn (master + workers) spent per request: on a
shared, noisy machine throughput swings with the neighbours' load, CPU per request less. Each
configuration runs BENCH_ROUNDS times, interleaved with the others; medians are shown.

Environment: BENCH_SECONDS (default 10 per run), BENCH_ROUNDS (default 2), BENCH_CONNECTIONS
(default 32).
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer

SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
CONNECTIONS = int(os.environ.get("BENCH_CONNECTIONS", "32"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
GAMES = 200

# (label, workers, threads, extra env)
CONFIGS: list[tuple[str, int, int, dict[str, str]]] = [
    ("sync -w 2", 2, 1, {}),
    ("sync -w 4", 4, 1, {}),
    ("sync -w 8", 8, 1, {}),
    ("gthread -w 2 --threads 4", 2, 4, {}),
    ("gthread -w 4 --threads 2", 4, 2, {}),
    ("sync -w 4, request log on", 4, 1, {"LOG_LEVEL": "info"}),
]

LUA = """
local games = {%s}
local n = 0
request = function()
  n = n + 1
  local g = games[(n %% #games) + 1]
  local kind = n %% 3
  local headers = {["Authorization"] = "Bearer " .. g[2]}
  if kind == 0 then
    return wrk.format("GET", "/api/v1/games/" .. g[1], headers)
  elseif kind == 1 then
    return wrk.format("GET", "/api/v1/games/" .. g[1] .. "/legal-moves", headers)
  end
  headers["Content-Type"] = "application/json"
  return wrk.format("POST", "/api/v1/games/" .. g[1] .. "/moves", headers,
                    '{"action": "end_turn"}')
end
"""


def make_games(base: str) -> list[tuple[str, str]]:
    """Dealt 4-player games; for each, the token of the seat NOT on turn (its POSTs get 409)."""
    out = []
    with requests.Session() as s:
        for i in range(GAMES):
            created = s.post(
                base + "/api/v1/games", json={"players": ["a", "b", "c", "d"], "seed": i}
            ).json()
            gid = created["game_id"]
            dealt = s.post(
                f"{base}/api/v1/games/{gid}/deal",
                headers={"Authorization": f"Bearer {created['host_token']}"},
            ).json()
            idle = (int(dealt["turn"]) + 1) % 4
            out.append((gid, created["seats"][idle]["token"]))
    return out


def parse(output: str) -> tuple[float, str, str, int]:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"\s50%\s+(\S+)", output).group(1)  # type: ignore[union-attr]
    p99 = re.search(r"\s99%\s+(\S+)", output).group(1)  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return rps, p50, p99, int(non2xx.group(1)) if non2xx else 0


def main() -> None:
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("needs wrk (apt-get install wrk)")
    with RedisServer() as redis, tempfile.TemporaryDirectory() as tmp:
        with start_gunicorn(redis.url, workers=2) as base:
            games = make_games(base)
        script = Path(tmp) / "mix.lua"
        rows = ",".join(f'{{"{g}", "{t}"}}' for g, t in games)
        script.write_text(LUA % rows)
        print(f"{GAMES} games, {CONNECTIONS} connections, {SECONDS}s x {ROUNDS} runs")
        results: dict[str, list[tuple[float, str, str, float]]] = {}
        for _ in range(ROUNDS):
            for label, workers, threads, env in CONFIGS:
                results.setdefault(label, []).append(
                    run_one(
                        wrk, script, redis.url, workers, {"GUNICORN_THREADS": str(threads), **env}
                    )
                )
        print(f"{'configuration':30} {'req/s median (min-max)':>24} {'CPU ms/req median':>18}")
        for label, runs in results.items():
            rates = sorted(r[0] for r in runs)
            cpus = sorted(r[3] for r in runs)
            spread = f"{statistics.median(rates):.0f} ({rates[0]:.0f}-{rates[-1]:.0f})"
            print(f"{label:30} {spread:>24} {statistics.median(cpus):18.2f}")


def _tree_cpu() -> float:
    """CPU seconds used so far by this process's descendants that are alive (from /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parent[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        kids = [p for p, pp in parent.items() if pp == pid]
        total += sum(cpu[k] for k in kids)
        todo += kids
    return total


def run_one(
    wrk: str, script: Path, redis_url: str, workers: int, env: dict[str, str]
) -> tuple[float, str, str, float]:
    """One configuration: (req/s, p50, p99, gunicorn CPU ms per request).

    gunicorn's CPU (master and workers, read from /proc) is taken just before wrk starts and
    just after it ends, so start-up imports are not counted and wrk is not running."""
    with start_gunicorn(redis_url, workers=workers, env=env) as base:
        before = _tree_cpu()
        proc = subprocess.Popen(
            [wrk, "-t2", f"-c{CONNECTIONS}", f"-d{SECONDS}s", "--latency", "-s", str(script), base],
            stdout=subprocess.PIPE,
            text=True,
        )
        out, _ = proc.communicate()
        used = _tree_cpu() - before
    rps, p50, p99, _ = parse(out)
    return rps, p50, p99, 1000.0 * used / (rps * SECONDS)


if __name__ == "__main__":
    main()
