"""What the hidden tiles are worth to ``hard``: the same games, its determinizations swapped.

``python -m bench.hard_oracle --games 200`` plays one ``hard`` seat against three planners
(4-player ``standard``, full games, in-process on ``--jobs`` processes), each game once per
variant on the same deal, the same hard seat and the same bot seed:

- ``uniform``: the bot as shipped (hidden tiles dealt uniformly over the unseen ones);
- ``hands``: every determinization holds the true hands, the boneyard's order reshuffled;
- ``oracle``: every determinization is the true state, draw order included;
- ``budget``: the bot as shipped with another budget of roll-out moves (``--budget``);
- ``winprob``: a roll-out scored by the chance to win the game from the totals it leaves
  (``win_chance``), not by the round's points against the others' mean;
- ``topk``: only the planner's best ``HARD_TOP`` moves (environment, default 3) searched;
- ``short``: roll-outs cut after ``HARD_SHORT`` moves (default 16), every hand then counted
  as if the round were blocked there, so the budget buys more samples;
- ``flat``: the whole budget spread over every candidate, no successive halving;
- ``learned``: roll-outs cut at the first turn's start after ``HARD_LEARNED_CUT`` moves
  (default 16), scored by a learned guess of the round's margin (``bench.hard_value``).

``hands`` and ``oracle`` cheat: they bound what better inference about the hidden tiles
could give a bot that searches as ``hard`` does. Prints each variant's wins (Wilson 95%), its
mean total against the others' mean, the CPU time of the hard seat's later-turn decisions
(median, p99, max), and against ``uniform`` the games won by only one side of each pair and
the mean difference of the pairs' totals (95% interval). ``--outcomes FILE`` keeps every
game's outcome (JSON lines) and plays only those it lacks, so runs resume and variants added
later meet the same ``uniform`` games (one file per setting of ``HARD_TOP``,
``HARD_SHORT`` or ``HARD_LEARNED_CUT``, which it does not record). A benchmark, never a test:
it measures strength, and takes minutes.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing as mp
import os
import random
import statistics
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from bench.hard_decisions import harness_seats, play_harness
from bench.hard_value import Model
from service.bots.base import canonical
from service.bots.hard import MOVES, HardBot, policy
from service.bots.planner import hand_of, later_turn_score
from service.rules import GameState, Move, Status, View, apply, legal_moves
from service.rules.engine import hand_points
from service.tournament.stats import wilson


class Variant(StrEnum):
    UNIFORM = "uniform"
    HANDS = "hands"
    ORACLE = "oracle"
    BUDGET = "budget"
    WINPROB = "winprob"
    TOPK = "topk"
    SHORT = "short"
    FLAT = "flat"
    LEARNED = "learned"


#: The ``topk`` variant searches only the planner's best this many moves.
TOP = int(os.environ.get("HARD_TOP", "3"))

#: The ``short`` variant's roll-outs stop after this many moves.
SHORT_MOVES = int(os.environ.get("HARD_SHORT", "16"))

#: The ``learned`` variant's roll-outs stop at the first turn's start after this many moves.
LEARNED_MOVES = int(os.environ.get("HARD_LEARNED_CUT", "16"))
#: What a guess of the ``learned`` variant costs, in roll-out moves (its chain searches are
#: charged as a roll-out's are): about 70 µs of features and network against 10 µs a move.
GUESS_COST = 7

#: The spread of one seat's round points among planners (4-player ``standard``, 400 games:
#: mean 30, standard deviation 33; a game's totals spread as the square root of its rounds).
ROUND_SD = 33.0
#: The midpoints over which the normal integral below is summed.
_GRID = [-4.0 + (i + 0.5) * 8.0 / 32 for i in range(32)]
_WEIGHTS = [math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * 8.0 / 32 for z in _GRID]


def _upper(x: float) -> float:
    """P(Z > x) for a standard normal Z."""
    return 0.5 * math.erfc(x / math.sqrt(2))


def win_chance(totals: list[int], seat: int, rounds_left: int) -> float:
    """The chance that ``seat`` ends the game with the lowest total, if every seat's points
    in the rounds left are independent normals of the same mean (ties shared)."""
    others = [t for s, t in enumerate(totals) if s != seat]
    mine = totals[seat]
    if rounds_left == 0:
        best = min(others)
        return 1.0 if mine < best else (1.0 / (1 + others.count(best)) if mine == best else 0.0)
    spread = ROUND_SD * math.sqrt(rounds_left)
    gaps = [(mine - t) / spread for t in others]
    chance = 0.0
    for z, w in zip(_GRID, _WEIGHTS, strict=True):
        p = w
        for g in gaps:
            p *= _upper(g + z)
        chance += p
    return chance


class Seeing(HardBot):
    """``hard`` whose determinizations are built from the true state it is handed, or with
    another budget."""

    def __init__(self, seed: int, variant: Variant, budget: int) -> None:
        super().__init__(seed, moves=budget if variant is Variant.BUDGET else MOVES)
        self.variant = variant
        self.truth: GameState | None = None
        self.value = Model() if variant is Variant.LEARNED else None
        self.guess = 0.0  # the learned margin of the last roll-out cut short
        self.seat = 0  # the hard seat

    def shortlist(self, view: View, moves: list[Move]) -> list[Move]:
        if self.variant is not Variant.TOPK or len(moves) <= TOP:
            return moves
        score = later_turn_score(view, view.seat, hand_of(view))
        return sorted(moves, key=score, reverse=True)[:TOP]

    def choose(self, view: View, moves: list[Move]) -> Move:
        ordered = canonical(moves)
        if self.variant is not Variant.FLAT or len(ordered) == 1 or view.in_opening():
            return super().choose(view, moves)
        totals = {move: 0.0 for move in ordered}
        self._sample_round(view, ordered, totals, self.moves, 0)
        return min(ordered, key=lambda m: totals[m])

    def playout(self, state: GameState) -> int:
        if self.value is not None:
            return self._cut_playout(state, self.value)
        if self.variant is not Variant.SHORT:
            return super().playout(state)
        moves = 0
        while state.status == Status.IN_ROUND and moves < SHORT_MOVES:
            seat = state.turn
            assert seat is not None
            apply(state, seat, policy(state, seat, legal_moves(state, seat)))
            moves += 1
        return moves

    def _cut_playout(self, state: GameState, value: Model) -> int:
        """Play on to the first turn's start after ``LEARNED_MOVES`` moves (the states the
        model was trained on), then guess the margin there; the moves it cost."""
        moves = 0
        while state.status == Status.IN_ROUND:
            if moves >= LEARNED_MOVES and state.tiles_played == 0 and not state.drawn:
                self.guess = value.margin(state, self.seat)
                return moves + GUESS_COST
            seat = state.turn
            assert seat is not None
            apply(state, seat, policy(state, seat, legal_moves(state, seat)))
            moves += 1
        return moves

    def outcome(self, state: GameState, seat: int) -> float:
        if self.value is not None and state.status == Status.IN_ROUND:
            return self.guess
        if self.variant is Variant.SHORT and state.status == Status.IN_ROUND:
            # Cut short: every seat's hand counts as if the round were blocked now.
            last = [hand_points(state, s) for s in range(state.n_players)]
            return last[seat] - (sum(last) - last[seat]) / (len(last) - 1)
        if self.variant is not Variant.WINPROB:
            return super().outcome(state, seat)
        left = state.rules.rounds - state.round
        # The chance to win the game, the round's margin breaking ties among sure outcomes.
        return -win_chance(state.totals(), seat, left) + 1e-4 * super().outcome(state, seat)

    def world(self, view: View) -> GameState:
        if self.variant not in (Variant.HANDS, Variant.ORACLE) or self.truth is None:
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
    cpu: list[float] = field(default_factory=list)  # CPU ms of each later-turn decision


def play(game: int, variant: Variant, budget: int = MOVES) -> Outcome:
    """Game ``game`` with the hard seat's determinizations as ``variant`` says (``budget``: the
    ``budget`` variant's roll-out moves)."""
    hard_seat, seed = harness_seats(game)
    hard = Seeing(seed, variant, budget)
    cpu: list[float] = []

    def choose(state: GameState, view: View, moves: list[Move]) -> Move:
        hard.truth = state
        hard.seat = view.seat
        start = time.thread_time()
        move = hard.choose(view, moves)
        if not view.in_opening():
            cpu.append(round((time.thread_time() - start) * 1000, 2))
        return move

    state = play_harness(game, hard_seat, choose)
    totals = state.totals()
    others = [t for s, t in enumerate(totals) if s != hard_seat]
    won = hard_seat in (state.winners or [])
    return Outcome(game, variant, won, totals[hard_seat] - sum(others) / len(others), cpu)


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
            diffs = [o.margin - b.margin for o, b in zip(mine, base, strict=True)]
            if len(diffs) > 1:
                half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs))
                line += f"; total minus uniform's {statistics.fmean(diffs):+.1f} ± {half:.1f}"
        cpu = sorted(ms for o in mine for ms in o.cpu)
        if cpu:
            p99 = cpu[min(len(cpu) - 1, int(0.99 * len(cpu)))]
            line += (
                f"; {len(cpu)} later-turn decisions, CPU median {statistics.median(cpu):.0f} ms,"
                f" p99 {p99:.0f} ms, max {cpu[-1]:.0f} ms"
            )
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
    parser.add_argument(
        "--outcomes", type=Path, help="JSON lines of outcomes: read to resume, each new appended"
    )
    args = parser.parse_args()
    games = range(args.first, args.first + args.games)
    known = _read_outcomes(args.outcomes, args.budget)
    tasks = [(g, v, args.budget) for g in games for v in args.variants if (g, v) not in known]
    with mp.Pool(args.jobs) as pool:
        for outcome in pool.imap_unordered(_task, tasks, chunksize=1):
            known[outcome.game, outcome.variant] = outcome
            if args.outcomes is not None:
                with args.outcomes.open("a") as out:
                    out.write(json.dumps(dataclasses.asdict(outcome) | {"budget": args.budget}))
                    out.write("\n")
    report([known[g, v] for g in games for v in args.variants], args.variants)


def _read_outcomes(path: Path | None, budget: int) -> dict[tuple[int, Variant], Outcome]:
    """The outcomes a file holds (those of another budget than ``budget`` ignored)."""
    if path is None or not path.exists():
        return {}
    found = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if row.pop("budget") == budget:
            outcome = Outcome(**(row | {"variant": Variant(row["variant"])}))
            found[outcome.game, outcome.variant] = outcome
    return found


if __name__ == "__main__":
    main()
