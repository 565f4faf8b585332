"""How long ``hard``'s decisions take: ``python -m bench.hard_decisions``.

Plays the games of ``bench.hard_oracle`` (one hard seat against three planners; game ``g``
has the same deal, seat and seed there) with the shipped bot and times each of its decisions
after its opening turn with the thread's CPU clock. Prints their count, median, p90, p99 and
max, and their sum.

``--against OLD_TREE`` (e.g. ``git worktree add --detach /tmp/ab-old <commit>``) times the
same games with the bot of that checkout too, the two trees alternating ``--rounds`` times,
so that both meet the same load: this file runs there as a script, importing that tree's
``service``. A decision's CPU time moves by a median of 16% between two runs on a shared
machine (docs/bots.md), so compare sums and medians over rounds, not single decisions.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from service import rules
from service.bots.hard import HardBot
from service.bots.planner import PlannerBot
from service.rules import Status
from service.tournament.runner import BETWEEN_ROUNDS


def decision_times(game: int) -> list[float]:
    """CPU seconds of each later-turn decision of the hard seat in harness game ``game``."""
    rng = random.Random(10_000 + game)
    hard_seat = rng.randrange(4)
    hard, planner = HardBot(rng.getrandbits(63)), PlannerBot()
    state = rules.new_game([f"p{s}" for s in range(4)], "standard", None, 50_000 + game)
    times = []
    while state.status != Status.GAME_OVER:
        if state.status in BETWEEN_ROUNDS:
            rules.deal(state)
            continue
        seat = state.turn
        assert seat is not None
        moves = rules.legal_moves(state, seat)
        if len(moves) > 1:
            view = rules.seat_view(state, seat)
            if seat != hard_seat:
                move = planner.choose(view, moves)
            else:
                start = time.thread_time()
                move = hard.choose(view, moves)
                if not view.in_opening():
                    times.append(time.thread_time() - start)
        else:
            move = moves[0]
        rules.apply(state, seat, move)
    return times


def summary(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    at = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]  # noqa: E731
    return (
        f"{len(ms)} decisions: median {statistics.median(ms):.1f} ms, p90 {at(0.9):.1f}, "
        f"p99 {at(0.99):.1f}, max {ms[-1]:.1f}; {sum(ms) / 1000:.1f} s in all"
    )


def in_tree(tree: Path, games: int) -> str:
    """This file's summary, run in ``tree`` against that tree's bot."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(Path(__file__).resolve()), "--games", str(games)]
    out = subprocess.run(command, cwd=tree, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=6, help="harness games 0 to N-1")
    parser.add_argument("--against", type=Path, help="another checkout's root")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.against is None:
        print(summary([t for g in range(args.games) for t in decision_times(g)]), flush=True)
        return
    here = Path(__file__).resolve().parent.parent
    for _ in range(args.rounds):
        for name, tree in (("other", args.against.resolve()), ("this", here)):
            print(f"{name}: {in_tree(tree, args.games)}", flush=True)


if __name__ == "__main__":
    main()
