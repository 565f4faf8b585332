"""Engine benchmark: random self-play in one process (``make bench-engine``).

One move = one ``legal_moves`` call plus one ``apply``. Deals are included in the timing (they are
part of a game) but only moves are counted. Prints one line per case, e.g.
``standard 4p: 23456 moves/s, 12.3 games/s``. Speed is reported here, never asserted in tests.

Time is this process's CPU time (``time.process_time``) by default: the engine is single-threaded,
so that is "one core", and it is not distorted when other work shares the machine. ``--wall``
uses wall-clock time instead.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from service.rules import PRESETS, apply, deal, legal_moves, new_game


def run_case(
    preset: str, n_players: int, seconds: float, seed: int = 1, clock: Any = time.process_time
) -> tuple[float, float]:
    """Play whole games until ``seconds`` have passed; return (moves/s, games/s)."""
    names = [f"p{i}" for i in range(n_players)]
    rng = random.Random(seed)
    choice = rng.choice
    moves = games = 0
    start = clock()
    elapsed = 0.0
    while elapsed < seconds:
        state = new_game(names, preset, None, seed=seed + games)
        while state.status != "game_over":
            deal(state)
            while state.status == "in_round":
                seat = state.turn
                assert seat is not None
                apply(state, seat, choice(legal_moves(state, seat)))
                moves += 1
        games += 1
        elapsed = clock() - start
    return moves / elapsed, games / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per case")
    parser.add_argument("--players", type=int, nargs="*", default=[4, 8])
    parser.add_argument("--presets", nargs="*", default=list(PRESETS))
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    args = parser.parse_args()
    for preset in args.presets:
        for n in args.players:
            clock = time.perf_counter if args.wall else time.process_time
            moves, games = run_case(preset, n, args.seconds, clock=clock)
            print(f"{preset} {n}p: {moves:.0f} moves/s, {games:.1f} games/s", flush=True)


if __name__ == "__main__":
    main()
