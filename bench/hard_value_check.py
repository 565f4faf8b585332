"""How well ``bench.hard_value`` ranks moves: ``python -m bench.hard_value_check``.

At turns of roll-out-policy self-play (deals unlike those of the training games) where the
seat to move has more than one choice, every candidate is played out twice from the same full
state: to the round's end (the roll-out ``hard`` scores) and cut as the ``learned`` variant
cuts it, at the first turn's start after ``--cut`` moves, with the learned guess and with the
hands' points (the ``short`` variant's guess) at the cut. Prints each guess's error against the
full roll-out's margin, and how often it orders a pair of candidates as the full roll-outs do
(pairs the full roll-outs tie are left out).
"""

from __future__ import annotations

import argparse
import itertools
import math

from bench.hard_value import Model
from service import rules
from service.bots.hard import policy, result
from service.rules import GameState, Status
from service.rules.engine import hand_points
from service.tournament.runner import BETWEEN_ROUNDS


def cut(state: GameState, moves: int) -> GameState:
    """``state`` played on to the first turn's start after ``moves`` moves, or its end."""
    done = 0
    while state.status == Status.IN_ROUND:
        if done >= moves and state.tiles_played == 0 and not state.drawn:
            break
        seat = state.turn
        assert seat is not None
        rules.apply(state, seat, policy(state, seat, rules.legal_moves(state, seat)))
        done += 1
    return state


def hand_margin(state: GameState, seat: int) -> float:
    pts = [hand_points(state, s) for s in range(state.n_players)]
    return pts[seat] - (sum(pts) - pts[seat]) / (len(pts) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--cut", type=int, default=16)
    args = parser.parse_args()
    model = Model()
    rows: list[list[tuple[float, float, float]]] = []  # per decision: (full, learned, hands)
    for game in range(args.games):
        state = rules.new_game([f"p{s}" for s in range(4)], "standard", None, 2_000_000 + game)
        while state.status != Status.GAME_OVER:
            if state.status in BETWEEN_ROUNDS:
                rules.deal(state)
                continue
            seat = state.turn
            assert seat is not None
            moves = rules.legal_moves(state, seat)
            if len(moves) > 1 and state.opened[seat] and state.tiles_played == 0:
                decision = []
                for move in moves:
                    full = state.copy()
                    rules.apply(full, seat, move)
                    short = cut(full.copy(), args.cut)
                    cut(full, 10**6)
                    if short.status == Status.IN_ROUND:
                        guesses = model.margin(short, seat), hand_margin(short, seat)
                    else:
                        guesses = result(short, seat), result(short, seat)
                    decision.append((result(full, seat), *guesses))
                rows.append(decision)
            rules.apply(state, seat, policy(state, seat, moves))
    report(rows)


def report(rows: list[list[tuple[float, float, float]]]) -> None:
    flat = [r for decision in rows for r in decision]
    print(f"{len(rows)} decisions, {len(flat)} candidates")
    for k, name in ((1, "learned"), (2, "hands' points")):
        rmse = math.sqrt(sum((r[k] - r[0]) ** 2 for r in flat) / len(flat))
        agree = pairs = 0
        for decision in rows:
            for a, b in itertools.combinations(decision, 2):
                if a[0] != b[0]:
                    pairs += 1
                    agree += (a[k] - b[k]) * (a[0] - b[0]) > 0
        print(f"{name}: RMSE {rmse:.1f}, pairs ordered as the full roll-outs {agree / pairs:.1%}")


if __name__ == "__main__":
    main()
