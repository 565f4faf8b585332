"""docs/rules.md sections 5-7: the engine's legal moves equal a naive second reading, always."""

from __future__ import annotations

import random

import pytest

from service.rules import PRESETS, InvalidRules, export_position, legal_moves
from service.rules.options import MAX_PLAYERS
from tests.rules.helpers import play_random_game
from tests.rules.reference import reference_moves

VARIANTS = [
    {},
    {"chicken_foot": True},
    {"double_follow": "satisfy"},
    {"double_follow": "satisfy", "chicken_foot": True},
    {"opening": "single", "opening_no_play": "draw_one"},
    {"opening_no_play": "draw_until", "mexican_needs_own_blocked": True},
    {"opening_out_waits": True, "engine_source": "set_aside"},
]


@pytest.mark.parametrize("preset", PRESETS)
def test_s7_legal_moves_match_the_reference_reading(preset: str) -> None:
    checked = 0

    def compare(state, seat, legal):  # type: ignore[no-untyped-def]
        nonlocal checked
        mine = {(m.action, None if m.tile is None else tuple(m.tile), m.train) for m in legal}
        assert len(mine) == len(legal), "no duplicate moves"
        assert mine == reference_moves(export_position(state))
        assert all(legal_moves(state, s) == [] for s in range(state.n_players) if s != seat)
        checked += 1

    rng = random.Random(preset)
    for i in range(24):
        options = {**VARIANTS[i % len(VARIANTS)], "rounds": 1}
        n = rng.randint(2, MAX_PLAYERS[preset])
        try:
            play_random_game(preset, n, 1000 + i, options, on_move=compare)
        except InvalidRules:
            continue
    assert checked > 1000
