"""What the hidden tiles are worth to ``hard``: the same games, its determinizations swapped.

``python -m bench.hard_oracle --games 200`` plays one ``hard`` seat against three planners
(4-player ``standard``, full games, in-process on ``--jobs`` processes), each game once per
variant on the same deal, the same hard seat and the same bot seed:

- ``uniform``: the bot as shipped (hidden tiles dealt uniformly over the unseen ones);
- ``hands``: every determinization holds the true hands, the boneyard's order reshuffled;
- ``oracle``: every determinization is the true state, draw order included;
- ``budget``: the bot as shipped with another budget of roll-out moves (``--budget``).

``hands`` and ``oracle`` cheat: they bound what better inference about the hidden tiles
could give a bot that searches as ``hard`` does. Prints each variant's wins (Wilson 95%), its
mean total against the others' mean, and the games won by only one side of each pair against
``uniform``. A benchmark, never a test: it measures strength, and takes minutes.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import statistics
from dataclasses import dataclass
from enum import StrEnum

from bench.hard_decisions import harness_seats, play_harness
from service.bots.hard import MOVES, HardBot
from service.rules import GameState, Move, View
from service.tournament.stats import wilson


class Variant(StrEnum):
    UNIFORM = "uniform"
    HANDS = "hands"
    ORACLE = "oracle"
    BUDGET = "budget"


class Seeing(HardBot):
    """``hard`` whose determinizations are built from the true state it is handed, or with
    another budget."""

    def __init__(self, seed: int, variant: Variant, budget: int) -> None:
        super().__init__(seed, moves=budget if variant is Variant.BUDGET else MOVES)
        self.variant = variant
        self.truth: GameState | None = None

    def world(self, view: View) -> GameState:
        if self.variant in (Variant.UNIFORM, Variant.BUDGET) or self.truth is None:
            return super().world(view)
        world = self.truth.copy()
        if self.variant is Variant.HANDS:
            random.Random(self.rng.next()).shuffle(world.boneyard)
        return world


@dataclass(frozen=True)
class Outcome:
    game: int
    variant: Variant
    won: bool
    margin: float  # the hard seat's total minus the others' mean: lower is better


def play(game: int, variant: Variant, budget: int = MOVES) -> Outcome:
    """Game ``game`` with the hard seat's determinizations as ``variant`` says (``budget``: the
    ``budget`` variant's roll-out moves)."""
    hard_seat, seed = harness_seats(game)
    hard = Seeing(seed, variant, budget)

    def choose(state: GameState, view: View, moves: list[Move]) -> Move:
        hard.truth = state
        return hard.choose(view, moves)

    state = play_harness(game, hard_seat, choose)
    totals = state.totals()
    others = [t for s, t in enumerate(totals) if s != hard_seat]
    won = hard_seat in (state.winners or [])
    return Outcome(game, variant, won, totals[hard_seat] - sum(others) / len(others))


def _task(args: tuple[int, Variant, int]) -> Outcome:
    return play(*args)


def report(outcomes: list[Outcome], variants: list[Variant]) -> None:
    by = {(o.variant, o.game): o for o in outcomes}
    games = sorted({o.game for o in outcomes})
    for variant in variants:
        mine = [by[variant, g] for g in games]
        wins = sum(o.won for o in mine)
        low, high = wilson(wins, len(mine))
        line = (
            f"{variant:8} {wins}/{len(mine)} won, {wins / len(mine):.1%} "
            f"({low:.1%}-{high:.1%}), total against the others' mean "
            f"{statistics.fmean(o.margin for o in mine):+.1f}"
        )
        if variant is not Variant.UNIFORM and Variant.UNIFORM in variants:
            base = [by[Variant.UNIFORM, g] for g in games]
            only = sum(o.won and not b.won for o, b in zip(mine, base, strict=True))
            lost = sum(b.won and not o.won for o, b in zip(mine, base, strict=True))
            line += f"; won only here {only}, only with uniform {lost}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--first", type=int, default=0, help="the first game's number")
    parser.add_argument(
        "--variants",
        nargs="*",
        type=Variant,
        default=[Variant.UNIFORM, Variant.HANDS, Variant.ORACLE],
        choices=list(Variant),
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=int, default=MOVES, help="the budget variant's moves")
    args = parser.parse_args()
    games = range(args.first, args.first + args.games)
    tasks = [(g, v, args.budget) for g in games for v in args.variants]
    with mp.Pool(args.jobs) as pool:
        outcomes = pool.map(_task, tasks, chunksize=1)
    report(outcomes, args.variants)


if __name__ == "__main__":
    main()
