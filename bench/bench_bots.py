"""Bot tournaments benchmark (``make bench-bots``): strength in-process, throughput over HTTP.

In-process: long 4-player ``standard`` tournaments (full 13-round games, seats shuffled per game)
print each bot's win rate with its 95% Wilson interval. Over HTTP: a private redis-server and
gunicorn are started, the same games are played through the API with ``--concurrency`` games in
flight, and every HTTP game is checked to be move-for-move identical to its in-process twin.
Numbers are printed, never asserted (speed belongs here, not in tests).
"""

from __future__ import annotations

import argparse
import time

from service.launch.redis_server import RedisServer
from service.tournament.runner import game_specs, run_http, run_local
from service.tournament.stats import aggregate, format_table

LINEUPS = [
    ("planner", "random", "random", "random"),
    ("greedy", "random", "random", "random"),
    ("planner", "greedy", "greedy", "greedy"),
    ("planner", "greedy", "random", "random"),
]


def bench_local(games: int, seed: int) -> None:
    for lineup in LINEUPS:
        specs = game_specs(lineup, games, base_seed=seed)
        t0 = time.perf_counter()
        results = list(run_local(specs))
        dt = time.perf_counter() - t0
        moves = sum(r.moves for r in results)
        print(f"\n## in-process: {', '.join(lineup)} ({games} games, standard, 4 players)")
        print(format_table(aggregate(results), len(results)))
        print(f"{dt:.1f} s: {games / dt:.1f} games/s, {moves / dt:.0f} moves/s", flush=True)


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
    parser.add_argument("--games", type=int, default=1000, help="games per in-process lineup")
    parser.add_argument("--http-games", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()
    bench_local(args.games, args.seed)
    if not args.skip_http:
        bench_http(args.http_games, args.seed, args.concurrency, args.workers)


if __name__ == "__main__":
    main()
