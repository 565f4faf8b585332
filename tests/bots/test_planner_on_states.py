"""``planner_move`` (the planner's choice read off a state, for the hard bot's roll-outs) is
the planner's choice on the seat's view, in every position of whole games under the presets."""

from __future__ import annotations

import random

import pytest

from service.bots.planner import PlannerBot, planner_move
from service.rules import PRESETS, Status, apply, deal, legal_moves, new_game, seat_view


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_same_choice_as_the_planner_on_the_seats_view(preset: str) -> None:
    rng = random.Random(7)
    planner = PlannerBot()
    compared = 0
    for game in range(6):
        state = new_game(["a", "b", "c", "d"], preset, {"rounds": 3}, seed=900 + game)
        while state.status != Status.GAME_OVER:
            deal(state)
            while state.status == Status.IN_ROUND:
                seat = state.turn
                assert seat is not None
                moves = legal_moves(state, seat)
                expected = planner.choose(seat_view(state, seat), moves)
                assert planner_move(state, seat, state.hands[seat], moves) == expected
                compared += 1
                # Random play as often as planned play: positions a planner table never reaches.
                apply(state, seat, expected if rng.random() < 0.5 else rng.choice(moves))
    assert compared > 500
