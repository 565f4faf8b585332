"""``python -m service.tournament play ...``: run a tournament and print a results table per bot."""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mexican_train_client import Client, ClientError, RetryPolicy
from tqdm import tqdm

from service.bots.registry import BOTS, is_known, make_bot
from service.rules import Preset
from service.tournament.runner import GameSpec, game_specs, run_http, run_local, server_level
from service.tournament.stats import GameResult, aggregate, format_table


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m service.tournament", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play complete games between bots and print the results")
    play.add_argument("--server", default="http://127.0.0.1:8000", help="base URL of the service")
    play.add_argument("--games", type=int, default=200)
    play.add_argument(
        "--bots",
        default="planner,greedy,random,random",
        help=f"comma-separated, one per seat: {', '.join(sorted(BOTS))} or package.module:Factory"
        " (played here), or server:<level> (a server bot seat)",
    )
    play.add_argument("--concurrency", type=int, default=16, help="games in flight (HTTP mode)")
    play.add_argument("--preset", default=Preset.STANDARD.value)
    play.add_argument(
        "--options", default=None, help="rule options as JSON, e.g. '{\"rounds\": 3}'"
    )
    play.add_argument("--rounds", type=int, default=None, help="shortcut for options.rounds")
    play.add_argument("--seed", type=int, default=0, help="game i uses seed SEED+i")
    play.add_argument("--fixed-seats", action="store_true", help="do not shuffle seats per game")
    play.add_argument("--json", dest="json_file", default=None, help="write the summary as JSON")
    play.add_argument("--csv", dest="csv_file", default=None, help="write one row per game")
    play.add_argument("--local", action="store_true", help="play in-process on the engine")
    play.add_argument("--quiet", action="store_true", help="no progress bar")
    return parser


def summary(results: Sequence[GameResult], args: argparse.Namespace) -> dict[str, Any]:
    stats = aggregate(results)
    return {
        "games": len(results),
        "mode": "local" if args.local else "http",
        "preset": args.preset,
        "seed": args.seed,
        "bots": {name: s.to_json() for name, s in sorted(stats.items())},
    }


def write_csv(path: str, results: Sequence[GameResult]) -> None:
    with Path(path).open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["game", "seed", "bots", "totals", "winners", "rounds", "moves", "digest"])
        for r in sorted(results, key=lambda r: r.index):
            w.writerow(
                [
                    r.index,
                    r.seed,
                    ";".join(r.bots),
                    ";".join(map(str, r.totals)),
                    ";".join(r.bots[s] + f"@{s}" for s in r.winners),
                    ";".join(",".join(map(str, rs)) for rs in r.rounds),
                    r.moves,
                    r.digest,
                ]
            )


def cmd_play(args: argparse.Namespace) -> int:
    bots = [b.strip() for b in args.bots.split(",") if b.strip()]
    refusal = _check_bots(bots)
    if refusal:
        print(refusal)
        return 2
    options: dict[str, Any] = json.loads(args.options) if args.options else {}
    if args.rounds is not None:
        options["rounds"] = args.rounds
    specs = game_specs(
        bots,
        args.games,
        base_seed=args.seed,
        preset=args.preset,
        options=options,
        shuffle_seats=not args.fixed_seats,
    )
    if not args.local and (refusal := _check_server(args.server)):
        print(refusal)
        return 2
    started = time.perf_counter()
    results, errors = _play(specs, args)
    elapsed = time.perf_counter() - started
    _report(results, errors, elapsed, (len(bots), len(specs)), args)
    return 1 if errors else 0


def _check_bots(bots: Sequence[str]) -> str | None:
    """Why the named bots cannot play (unknown, or failing to load), or None."""
    names = [server_level(b) or b for b in bots]
    unknown = [b for b, name in zip(bots, names, strict=True) if not is_known(name)]
    if unknown:
        return f"unknown bot(s): {', '.join(unknown)}; known: {', '.join(sorted(BOTS))}"
    try:
        for name in set(names):
            make_bot(name, 0)
    except (ImportError, AttributeError, TypeError, ValueError) as err:
        return f"cannot load bot: {err!r}"
    return None


def _check_server(server: str) -> str | None:
    try:
        with Client(server, retry=RetryPolicy(attempts=2)) as probe:
            probe.healthz()
    except ClientError as err:
        return f"cannot reach {server}: {err} (start it with `make run`, or use --local)"
    return None


def _play(
    specs: Sequence[GameSpec], args: argparse.Namespace
) -> tuple[list[GameResult], list[BaseException]]:
    """Every game, with a progress bar; a game that fails over HTTP is kept as its error."""
    bar = tqdm(total=len(specs), unit="game", disable=args.quiet, file=sys.stderr)
    results: list[GameResult] = []
    errors: list[BaseException] = []
    if args.local:
        results.extend(run_local(specs, progress=lambda: bar.update(1)))
    else:
        for item in run_http(
            args.server, specs, concurrency=args.concurrency, progress=lambda: bar.update(1)
        ):
            if isinstance(item, GameResult):
                results.append(item)
            else:
                errors.append(item)
    bar.close()
    return results, errors


def _report(
    results: list[GameResult],
    errors: list[BaseException],
    elapsed: float,
    size: tuple[int, int],
    args: argparse.Namespace,
) -> None:
    """The results table on stdout, and the JSON summary and CSV rows when asked."""
    players, games = size
    stats = aggregate(results)
    mode = "in-process" if args.local else f"HTTP {args.server}"
    last_seed = args.seed + games - 1
    print(f"{args.preset}, {players} players, {mode}, seeds {args.seed}..{last_seed}")
    print(format_table(stats, len(results)))
    moves = sum(r.moves for r in results)
    print(f"{elapsed:.1f} s, {len(results) / elapsed:.2f} games/s, {moves / elapsed:.0f} moves/s")
    if errors:
        print(f"{len(errors)} game(s) failed; first error: {errors[0]!r}")
    if args.json_file:
        doc = summary(results, args)
        doc["seconds"] = round(elapsed, 3)
        doc["errors"] = len(errors)
        Path(args.json_file).write_text(json.dumps(doc, indent=2) + "\n")
    if args.csv_file:
        write_csv(args.csv_file, results)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "play":
        return cmd_play(args)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
