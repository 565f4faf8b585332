"""Baseline bots: ``random`` (seeded, uniform over legal moves) and ``greedy`` (sheds most pips)."""

from __future__ import annotations

import random

from service.bots.base import (
    canonical,
    hand_of,
    pips,
    play_tile,
    plays,
)
from service.rules import Move, View


class RandomBot:
    """Uniform over the legal moves (sorted first, so the seed alone fixes its choices)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View, moves: list[Move]) -> Move:
        ordered = canonical(moves)
        return ordered[0] if len(ordered) == 1 else self.rng.choice(ordered)


class GreedyBot:
    """Plays the tile with the most pips; a double only first when it can follow it.

    Never ends an opening chain early and only draws or marks when it has no play (the rules
    already force that). Deterministic: the seed is accepted for a uniform constructor.
    """

    name = "greedy"

    def __init__(self, seed: int | None = None) -> None:
        del seed

    def choose(self, view: View, moves: list[Move]) -> Move:
        ordered = canonical(moves)
        candidates = plays(ordered)
        if not candidates:
            return ordered[0]
        hand = hand_of(view)

        def score(move: Move) -> tuple[int, int]:
            tile = play_tile(move)
            if tile[0] != tile[1]:
                return (1, pips(tile))
            return (2 if _can_follow(tile, move, hand, candidates) else 0, pips(tile))

        return max(candidates, key=score)


def _can_follow(
    double: tuple[int, int],
    move: Move,
    hand: list[tuple[int, int]],
    candidates: list[Move],
) -> bool:
    """Whether another tile could be played right after this double (on it, or elsewhere)."""
    rest = list(hand)
    if double in rest:
        rest.remove(double)
    if any(double[0] in t for t in rest):
        return True
    # Any other currently legal play with a different tile on a different train also follows.
    return any(play_tile(m) != double and m.train != move.train for m in candidates)
