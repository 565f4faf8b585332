"""Storage encoding: a decoded state rebuilds each train's open end and follow count exactly
(docs/rules.md §7 and §9), also from long trains and chicken feet."""

from __future__ import annotations

import random

import pytest

from service.rules import Status, apply, deal, dumps, legal_moves, loads, new_game
from service.rules.state import TRAIN_MEMORY, GameState, next_end


def _full_walk(state: GameState) -> tuple[list[int], list[int]]:
    """Each train's (end, pending) walked over every tile from the engine."""
    ends, pending = [], []
    assert state.engine is not None
    for tiles in state.trains:
        end, count = state.engine, 0
        for tile in tiles:
            end, count = next_end(end, count, tile, state.rules.chicken_foot)
        ends.append(end)
        pending.append(count)
    return ends, pending


@pytest.mark.parametrize("chicken_foot", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_s9_decoding_rebuilds_every_train_end_and_follow_count(
    chicken_foot: bool, seed: int
) -> None:
    options = {"chicken_foot": chicken_foot, "rounds": 2, "double_follow": "any"}
    state = new_game(["a", "b", "c"], "standard", options, seed=seed)
    rng = random.Random(seed)
    longest = 0
    while state.status != Status.GAME_OVER:
        deal(state)
        while state.status == Status.IN_ROUND:
            seat = state.turn
            assert seat is not None
            apply(state, seat, rng.choice(legal_moves(state, seat)))
            decoded = loads(dumps(state))
            assert (decoded.ends, decoded.pending) == (state.ends, state.pending)
            assert _full_walk(state) == (state.ends, state.pending)
            longest = max(longest, *map(len, state.trains))
    assert longest > TRAIN_MEMORY  # the tail walk was exercised on long trains
