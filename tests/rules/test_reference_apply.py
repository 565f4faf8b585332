"""docs/rules.md sections 5-8: every move changes the position as a naive second reading says."""

from __future__ import annotations

import random
from typing import Any

import pytest

from service.rules import (
    PRESETS,
    InvalidRules,
    apply,
    deal,
    export_position,
    legal_moves,
    new_game,
)
from service.rules.options import MAX_PLAYERS
from tests.rules.reference_apply import reference_apply

VARIANTS: list[dict[str, Any]] = [
    {},
    {"chicken_foot": True},
    {"double_follow": "satisfy"},
    {"double_follow": "satisfy", "chicken_foot": True, "opening_out_waits": True},
    {"opening": "single", "opening_no_play": "draw_one"},
    {"opening_no_play": "draw_until", "mexican_needs_own_blocked": True},
    {"opening_out_waits": True, "engine_source": "set_aside", "double_blank_points": 25},
    {"set": 6, "hand_size": 3, "opening_out_waits": True},
    {"set": 6, "hand_size": 1},
]
FIELDS = ("turn", "opened", "boneyard", "trains", "marked", "open_doubles", "scores", "status",
          "turn_state", "winners")  # fmt: skip


def _comparable(doc: dict[str, Any]) -> dict[str, Any]:
    out = {name: doc[name] for name in FIELDS}
    out["hands"] = [sorted(map(sorted, hand)) for hand in doc["hands"]]
    return out


def _check_game(preset: str, n: int, seed: int, options: dict[str, Any]) -> int:
    """Play a random game, checking every move against the reference; the moves checked."""
    state = new_game([f"p{i}" for i in range(n)], preset, options, seed=seed)
    rng = random.Random(seed)
    checked = 0
    while state.status != "game_over":
        deal(state)
        while state.status == "in_round":
            assert state.turn is not None
            move = rng.choice(legal_moves(state, state.turn))
            before = export_position(state)
            apply(state, state.turn, move)
            expected = reference_apply(before, move.to_json())
            assert _comparable(export_position(state)) == _comparable(expected), (before, move)
            checked += 1
    return checked


@pytest.mark.parametrize("preset", PRESETS)
def test_s8_every_move_changes_the_position_as_the_reference_reading_says(preset: str) -> None:
    rng = random.Random(preset)
    checked = 0
    for i in range(27):
        options = {"rounds": 1 + i % 2, **VARIANTS[i % len(VARIANTS)]}
        try:
            checked += _check_game(preset, rng.randint(2, MAX_PLAYERS[preset]), 2000 + i, options)
        except InvalidRules:
            continue
    assert checked > 1000
