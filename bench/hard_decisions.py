"""How long ``hard``'s decisions take: ``python -m bench.hard_decisions``.

Plays the harness games (one hard seat against three planners, 4-player ``standard``; game
``g`` fixes the deal, the hard seat and the bot's seed, and ``bench.hard_oracle`` plays the
same games through :func:`play_harness`) with the shipped bot, and times each of its decisions
after its opening turn with the thread's CPU clock. Prints their count, median, p90, p99 and
max, and their sum. The file imports nothing of ``bench``, so it runs in an older checkout.

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
from collections.abc import Callable
from pathlib import Path

from service import rules
from service.bots.hard import HardBot
from service.bots.planner import PlannerBot
from service.rules import GameState, Move, Status, View
from service.tournament.runner import BETWEEN_ROUNDS

#: The hard seat's choice: the true state (for the benches that cheat), its view, the moves.
HardChoice = Callable[[GameState, View, list[Move]], Move]


def harness_seats(game: int) -> tuple[int, int]:
    """Harness game ``game``'s hard seat and the hard bot's seed."""
    rng = random.Random(10_000 + game)
    return rng.randrange(4), rng.getrandbits(63)


def play_harness(game: int, hard_seat: int, choose: HardChoice) -> GameState:
    """Harness game ``game`` to its end: ``choose`` for ``hard_seat``'s real choices, the
    planner for the other seats; the final state."""
    planner = PlannerBot()
    state = rules.new_game([f"p{s}" for s in range(4)], "standard", None, 50_000 + game)
    while state.status != Status.GAME_OVER:
        if state.status in BETWEEN_ROUNDS:
            rules.deal(state)
            continue
        seat = state.turn
        assert seat is not None
        moves = rules.legal_moves(state, seat)
        if len(moves) > 1:
            view = rules.seat_view(state, seat)
            chooser = choose if seat == hard_seat else lambda _, v, m: planner.choose(v, m)
            rules.apply(state, seat, chooser(state, view, moves))
        else:
            rules.apply(state, seat, moves[0])
    return state


def decision_times(game: int) -> list[float]:
    """CPU seconds of each later-turn decision of the hard seat in harness game ``game``."""
    hard_seat, seed = harness_seats(game)
    hard, times = HardBot(seed), []

    def timed(_: GameState, view: View, moves: list[Move]) -> Move:
        start = time.thread_time()
        move = hard.choose(view, moves)
        if not view.in_opening():
            times.append(time.thread_time() - start)
        return move

    play_harness(game, hard_seat, timed)
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
