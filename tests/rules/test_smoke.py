"""Smoke tests: random self-play of every preset finishes and keeps the section-9 invariants."""

from __future__ import annotations

import random

import pytest

from service.rules import (
    PRESETS,
    IllegalMove,
    Move,
    apply,
    check_invariants,
    dumps,
    export_position,
    import_position,
    legal_moves,
    loads,
)
from service.rules.tiles import full_set
from tests.rules.helpers import play_random_game


@pytest.mark.parametrize("preset", PRESETS)
def test_s9_self_play_keeps_invariants(preset: str) -> None:
    for seed in range(40):
        n = 2 + seed % 9
        state, moves = play_random_game(preset, n, seed, {"rounds": 2}, check=True)
        assert state.status == "game_over"
        assert state.winners
        assert moves > 0


@pytest.mark.parametrize("preset", PRESETS)
def test_s9_round_trips_and_refusals_leave_state_unchanged(preset: str) -> None:
    rng = random.Random(7)

    def on_move(state, seat, legal):  # type: ignore[no-untyped-def]
        assert loads(dumps(state)).__class__ is state.__class__
        assert dumps(loads(dumps(state))) == dumps(state)
        assert export_position(import_position(export_position(state))) == export_position(state)
        before = dumps(state)
        tile = rng.choice(full_set(state.rules.set))
        train = rng.choice([*map(str, range(state.n_players)), "mexican"])
        move = Move.play(tile, train)
        if move not in legal:
            with pytest.raises(IllegalMove):
                apply(state, seat, move)
            assert dumps(state) == before
        other = (seat + 1) % state.n_players
        assert legal_moves(state, other) == []
        with pytest.raises(IllegalMove):
            apply(state, other, legal[0])
        assert dumps(state) == before
        check_invariants(state)

    for seed in range(6):
        play_random_game(preset, 3 + seed, seed, {"rounds": 1}, on_move=on_move)
