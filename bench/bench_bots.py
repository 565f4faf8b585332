"""Bot strength and speed (``make bench-bots``): every level against every other, then HTTP.

In-process: for each ordered pair of levels (A, B), 4-player ``standard`` games (full 13 rounds,
seats shuffled per game) of one A against three Bs; the table gives A's win rate with its 95%
Wilson interval (parity is 25%). Each level's decision time is CPU time per real choice (forced
moves are not offered to bots), as median and 99th percentile: the engine is single-threaded, so
that is "one core", and it is not inflated by other work on the machine.

Games involving ``hard`` are slow (a few seconds each with one hard seat, three times that with
three), so they have their own count (``--hard-games``), and a run can be split: every game is
appended to ``--results`` (var/bench/bots.jsonl) as a JSON line with a digest of the code that
played it, games already there by the same code are skipped, and ``--minutes`` stops a run in
time. The table covers every game in the file played by this code; it is printed, written
between its markers in docs/bots.md, and plotted to docs/bots.png (``--no-docs``: neither).
Games are played on ``--jobs`` processes (2).
Over HTTP: a private redis-server and gunicorn, the same games through the API with
``--concurrency`` games in flight, each checked to be move-for-move identical to its in-process
twin. Numbers are printed, never asserted (speed belongs here, not in tests).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import multiprocessing as mp
import queue
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from devstack.redis_server import RedisServer
from service.bots import registry
from service.tournament.runner import GameSpec, game_specs, play_local, run_http, run_local
from service.tournament.stats import aggregate, format_table, wilson

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RESULTS = ROOT / "var" / "bench" / "bots.jsonl"
RULES = ROOT / "service" / "rules"
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
                if not view.in_opening():
                    self.later[name].append(spent)
                return move

            bot.choose = timed
            return bot

        return make


def code_version() -> str:
    """A digest of the code that decides a game (the bots and the engine): a result played by
    other code than this is no measure of it. Read as syntax trees without docstrings, so a
    comment or a reworded docstring keeps the results; the registry is left out, since it holds
    the figures measured here."""
    digest = hashlib.sha256()
    for path in sorted([*(ROOT / "service" / "bots").glob("*.py"), *RULES.glob("*.py")]):
        if path.name != "registry.py":
            digest.update(path.name.encode() + b"\0" + _code_of(path).encode())
    return digest.hexdigest()[:16]


def _code_of(path: Path) -> str:
    """``path``'s syntax tree with its docstrings taken out."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and _is_docstring(body[0]):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def load(path: Path | None) -> list[dict[str, Any]]:
    """The games of ``path`` played by this code (older ones are left in the file, unread)."""
    if path is None or not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    version = code_version()
    kept = [r for r in rows if r.get("code") == version]
    if len(kept) < len(rows):
        print(f"{len(rows) - len(kept)} games in {path} were played by other code: not counted")
    return kept


#: Each worker process of a run times its own bots (installed once per process), and labels
#: its games with the digest of the code it loaded (read once: the files may change mid-run).
_TIMED: Timed | None = None
_CODE = ""


def _start_worker() -> None:
    global _TIMED, _CODE
    _TIMED = Timed()
    _TIMED.install()
    _CODE = code_version()


def _play(job: tuple[str, str, GameSpec]) -> dict[str, Any]:
    """One game of ``level`` against three ``against``, as a row of the results file."""
    level, against, spec = job
    timed = _TIMED
    assert timed is not None
    before = {name: len(t) for name, t in timed.times.items()}
    later = {name: len(t) for name, t in timed.later.items()}
    result = play_local(spec)
    seat = result.bots.index(level)
    return {
        "code": _CODE,
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


def jobs(args: argparse.Namespace, rows: list[dict[str, Any]]) -> list[tuple[str, str, GameSpec]]:
    """The games the table still lacks, the cheap pairs first (``PRIORITY``)."""
    done = {(r["level"], r["against"], r["index"]) for r in rows}
    pairs = [p for p in PRIORITY if p[0] in args.levels and p[1] in args.levels]
    found = []
    for level, against in pairs:
        count = args.hard_games if "hard" in (level, against) else args.games
        for spec in game_specs((level, against, against, against), count, base_seed=args.seed):
            if (level, against, spec.index) not in done:
                found.append((level, against, spec))
    return found


def play_cells(args: argparse.Namespace, rows: list[dict[str, Any]]) -> None:
    """Play the games the table still lacks on ``--jobs`` processes, appending each to ``rows``
    (and the file) as it ends; no game starts after ``--minutes``. Games are handed out one at a
    time as processes free up: ``Pool.imap`` would take every job at once, deadline or not."""
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    todo = iter(jobs(args, rows))
    ended: queue.SimpleQueue[dict[str, Any] | BaseException] = queue.SimpleQueue()
    running = 0
    with mp.Pool(args.jobs, initializer=_start_worker) as pool:
        while True:
            while running < args.jobs and (deadline is None or time.monotonic() < deadline):
                job = next(todo, None)
                if job is None:
                    break
                pool.apply_async(_play, (job,), callback=ended.put, error_callback=ended.put)
                running += 1
            if running == 0:
                return
            row = ended.get()
            running -= 1
            if isinstance(row, BaseException):
                raise row
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


TABLE_BEGIN = "<!-- make bench-bots: table -->"
TABLE_END = "<!-- /make bench-bots: table -->"


def cells_of(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, int]]:
    """(wins, games) of each pairing that has games."""
    found: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        cell = found[(r["level"], r["against"])]
        cell[0] += bool(r["win"])
        cell[1] += 1
    return {pair: (wins, games) for pair, (wins, games) in found.items()}


def markdown_table(rows: list[dict[str, Any]], levels: list[str]) -> str:
    cells = cells_of(rows)
    lines = [
        "| one … against three → | " + " | ".join(f"`{c}`" for c in levels) + " |",
        "|---" * (len(levels) + 1) + "|",
    ]
    for level in levels:
        out = []
        for against in levels:
            if (level, against) not in cells:
                out.append("" if level == against else "\N{EN DASH}")
                continue
            wins, games = cells[(level, against)]
            lo, hi = wilson(wins, games)
            out.append(f"{wins / games:.1%} ({lo:.1%}\N{EN DASH}{hi:.1%}), {games:,}")
        lines.append(f"| `{level}` | " + " | ".join(out) + " |")
    return "\n".join(lines)


def decision_lines(rows: list[dict[str, Any]], levels: list[str]) -> list[str]:
    """CPU per later-turn decision (after the opening turn: the ones ``hard`` searches)."""
    times: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for name, t in r.get("later", {}).items():
            times[name].extend(t)
    found = []
    for name in levels:
        t = sorted(times.get(name, []))
        if t:
            p99 = t[min(len(t) - 1, int(len(t) * 0.99))]
            found.append(
                f"- `{name}`: {len(t):,} decisions after the opening turn, median "
                f"{statistics.median(t) * 1000:.2f} ms, p99 {p99 * 1000:.1f} ms, "
                f"max {t[-1] * 1000:.1f} ms of CPU"
            )
    return found


def write_docs(rows: list[dict[str, Any]], levels: list[str]) -> None:
    """The table (between its markers in docs/bots.md) and docs/bots.png, from every game in
    the results."""
    if not rows:
        return
    path = DOCS / "bots.md"
    text = path.read_text()
    before, rest = text.split(TABLE_BEGIN)
    _, after = rest.split(TABLE_END)
    block = [
        TABLE_BEGIN,
        "",
        markdown_table(rows, levels),
        "",
        "CPU time of one core per real choice:",
        "",
        *decision_lines(rows, levels),
        "",
        "![Win rates with their 95% Wilson intervals](bots.png)",
        "",
        TABLE_END,
    ]
    path.write_text(before + "\n".join(block) + after)
    plot(rows, levels, DOCS / "bots.png")


def plot(rows: list[dict[str, Any]], levels: list[str], out: Path) -> None:
    """Each pairing's win rate with its 95% Wilson interval, parity (25%) marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = cells_of(rows)
    pairs = [(a, b) for a in levels for b in levels if (a, b) in cells]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(pairs) + 1.4), dpi=120)
    colours = dict(zip(levels, plt.get_cmap("tab10").colors, strict=False))
    for y, (level, against) in enumerate(reversed(pairs)):
        wins, games = cells[(level, against)]
        rate = wins / games
        lo, hi = wilson(wins, games)
        ax.errorbar(
            rate * 100,
            y,
            xerr=[[(rate - lo) * 100], [(hi - rate) * 100]],
            fmt="o",
            color=colours[level],
            capsize=4,
        )
        ax.annotate(
            f"{rate:.1%}  (n={games:,})",
            (hi * 100, y),
            xytext=(6, -4),
            textcoords="offset points",
            fontsize=8,
        )
    ax.axvline(25, color="grey", linestyle="--", linewidth=1)
    ax.text(25.5, -0.45, "parity 25%", color="grey", fontsize=8)
    ax.set_yticks(range(len(pairs)))
    ax.set_yticklabels([f"{a} vs 3 {b}" for a, b in reversed(pairs)])
    ax.set_xlim(0, 112)
    ax.set_xlabel("win rate of the first bot, % (4-player standard, 13 rounds)")
    ax.set_title("make bench-bots: one bot against three, 95% Wilson intervals", fontsize=10)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def bench_http(games: int, seed: int, concurrency: int, workers: int) -> None:
    from devstack.gunicorn import start_gunicorn

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
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        help="JSON lines of every game played: a run resumes there and appends",
    )
    parser.add_argument("--minutes", type=float, default=0, help="stop starting games after")
    parser.add_argument("--report-only", action="store_true", help="print the table of --results")
    parser.add_argument("--jobs", type=int, default=2, help="processes playing games at once")
    parser.add_argument(
        "--no-docs", dest="docs", action="store_false", help="leave docs/bots.md and bots.png"
    )
    parser.add_argument("--http-games", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--seed", type=int, default=1_000_000)
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()
    args.levels = args.levels.split(",")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    rows = load(args.results)
    if not args.report_only:
        play_cells(args, rows)
    report(rows, args.levels)
    if args.docs:
        write_docs(rows, args.levels)
    if not args.skip_http and not args.report_only:
        bench_http(args.http_games, args.seed, args.concurrency, args.workers)


if __name__ == "__main__":
    main()
