"""Bot strength and speed (``make bench-bots``): every level against every other, then HTTP.

In-process: for each ordered pair of levels (A, B), 4-player ``standard`` games (full 13 rounds,
seats shuffled per game) of one A against three Bs; the table gives A's win rate with its 95%
Wilson interval (parity is 25%). Each level's decision time is CPU time per real choice (forced
moves are not offered to bots), as median and 99th percentile: the engine is single-threaded, so
that is "one core", and it is not inflated by other work on the machine.

Games involving ``hard`` are slow (about 20 s each with one hard seat on a loaded 2-core machine,
three times that with three), so they have their own count (``--hard-games``), and a run can be
split: with ``--results FILE`` every game is appended to FILE as a JSON line and games already
there are skipped, and ``--minutes`` stops a run in time (the table covers all games in FILE).
Over HTTP: a private redis-server and gunicorn, the same games through the API with
``--concurrency`` games in flight, each checked to be move-for-move identical to its in-process
twin. Numbers are printed, never asserted (speed belongs here, not in tests).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from service.bots import registry
from service.bots.base import is_opening
from service.launch.redis_server import RedisServer
from service.tournament.runner import game_specs, play_local, run_http, run_local
from service.tournament.stats import aggregate, format_table, wilson

LEVELS = ("random", "greedy", "planner", "hard")
# Cheap pairs first, then the claims that matter most for hard, then three hard seats a game.
PRIORITY = [
    ("random", "random"), ("planner", "random"), ("greedy", "random"), ("random", "greedy"),
    ("random", "planner"), ("planner", "greedy"), ("greedy", "planner"),
    ("hard", "planner"), ("hard", "greedy"), ("hard", "random"),
    ("planner", "hard"), ("greedy", "hard"), ("random", "hard"),
]  # fmt: skip


class Timed:
    """Wraps each level's factory so every ``choose`` call adds its CPU time to ``times``."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.later: dict[str, list[float]] = defaultdict(list)  # after the opening turn
        self.factories = dict(registry.BOTS)

    def install(self) -> None:
        for name, factory in self.factories.items():
            registry.BOTS[name] = self._wrap(name, factory)

    def _wrap(self, name: str, factory: Callable[[int | None], Any]) -> Callable[[int | None], Any]:
        def make(seed: int | None) -> Any:
            bot = factory(seed)
            choose = bot.choose

            def timed(view: Any, moves: Any) -> Any:
                started = time.process_time()
                move = choose(view, moves)
                spent = time.process_time() - started
                self.times[name].append(spent)
                if not is_opening(view):
                    self.later[name].append(spent)
                return move

            bot.choose = timed
            return bot

        return make


def load(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def play_cells(args: argparse.Namespace, rows: list[dict[str, Any]], timed: Timed) -> None:
    """Play the games the table still lacks, appending each to ``rows`` (and the file)."""
    done = {(r["level"], r["against"], r["index"]) for r in rows}
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    pairs = [p for p in PRIORITY if p[0] in args.levels and p[1] in args.levels]
    for level, against in pairs:
        count = args.hard_games if "hard" in (level, against) else args.games
        for spec in game_specs((level, against, against, against), count, base_seed=args.seed):
            if (level, against, spec.index) in done:
                continue
            if deadline is not None and time.monotonic() > deadline:
                return
            before = {name: len(t) for name, t in timed.times.items()}
            later = {name: len(t) for name, t in timed.later.items()}
            result = play_local(spec)
            seat = result.bots.index(level)
            row = {
                "level": level,
                "against": against,
                "index": spec.index,
                "seed": spec.seed,
                "win": seat in result.winners,
                "total": result.totals[seat],
                "seconds": round(result.seconds, 2),
                "decisions": {n: t[before.get(n, 0) :] for n, t in timed.times.items()},
                "later": {n: t[later.get(n, 0) :] for n, t in timed.later.items()},
            }
            rows.append(row)
            if args.results is not None:
                with args.results.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")


def cell(rows: Iterable[dict[str, Any]], level: str, against: str) -> str:
    games = [r for r in rows if r["level"] == level and r["against"] == against]
    if not games:
        return "" if level == against else "-"
    wins = sum(r["win"] for r in games)
    lo, hi = wilson(wins, len(games))
    return f"{wins / len(games):.1%} ({lo:.0%}-{hi:.0%}, n={len(games)})"


def report(rows: list[dict[str, Any]], levels: list[str]) -> None:
    print("\n## win rate of one ROW bot against three COLUMN bots (95% Wilson interval, games)")
    width = 30
    print(" " * 9 + "".join(f"{c:<{width}}" for c in levels))
    for level in levels:
        cells = [cell(rows, level, a) for a in levels]
        print(f"{level:<9}" + "".join(f"{c:<{width}}" for c in cells))
    print("\n## CPU time per real decision (one core): all / after the opening turn")
    for key in ("decisions", "later"):
        times: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            for name, t in r.get(key, {}).items():
                times[name].extend(t)
        for name in levels:
            t = sorted(times.get(name, []))
            if t:
                p99 = t[min(len(t) - 1, int(len(t) * 0.99))]
                print(
                    f"{name:<9} {key:<9} {len(t):>7}  median {statistics.median(t) * 1000:8.2f} ms"
                    f"  p99 {p99 * 1000:8.1f} ms  max {t[-1] * 1000:8.1f} ms"
                )
    print(
        f"\n{len(rows)} games, {sum(r['seconds'] for r in rows) / 60:.1f} min of play", flush=True
    )


def bench_http(games: int, seed: int, concurrency: int, workers: int) -> None:
    from tests.servers import start_gunicorn

    lineup = ("planner", "greedy", "random", "random")
    specs = game_specs(lineup, games, base_seed=seed)
    with RedisServer() as redis_server, start_gunicorn(redis_server.url, workers=workers) as url:
        t0 = time.perf_counter()
        results = list(run_http(url, specs, concurrency=concurrency))
        dt = time.perf_counter() - t0
    failed = [r for r in results if isinstance(r, BaseException)]
    done = [r for r in results if not isinstance(r, BaseException)]
    twins = {r.index: r.digest for r in run_local(specs)}
    same = sum(1 for r in done if twins[r.index] == r.digest)
    moves = sum(r.moves for r in done)
    print(
        f"\n## HTTP: {', '.join(lineup)} ({games} games, gunicorn {workers} workers, "
        f"concurrency {concurrency})"
    )
    print(format_table(aggregate(done), len(done)))
    print(
        f"{dt:.1f} s: {len(done) / dt:.2f} games/s, {moves / dt:.0f} moves/s "
        f"(~3 requests per move); failed games: {len(failed)}; "
        f"identical to in-process: {same}/{len(done)}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=1000, help="games per pair without hard")
    parser.add_argument("--hard-games", type=int, default=1000, help="games per pair with hard")
    parser.add_argument("--levels", default=",".join(LEVELS), help="comma-separated levels")
    parser.add_argument("--results", type=Path, default=None, help="JSON lines: resume, append")
    parser.add_argument("--minutes", type=float, default=0, help="stop starting games after")
    parser.add_argument("--report-only", action="store_true", help="print the table of --results")
    parser.add_argument("--http-games", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()
    args.levels = args.levels.split(",")
    rows = load(args.results)
    if not args.report_only:
        timed = Timed()
        timed.install()
        play_cells(args, rows, timed)
    report(rows, args.levels)
    if not args.skip_http and not args.report_only:
        bench_http(args.http_games, args.seed, args.concurrency, args.workers)


if __name__ == "__main__":
    main()
