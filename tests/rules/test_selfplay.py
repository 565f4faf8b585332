"""Self-play of 2,000+ complete random games across all presets (docs/rules.md sections 2-9)."""

from __future__ import annotations

import random

import pytest

from service.rules import (
    PRESETS,
    apply,
    check_invariants,
    deal,
    legal_moves,
    new_game,
    score_view,
)
from service.rules.options import MAX_PLAYERS, set_size


def _play(preset: str, n: int, seed: int, options: dict[str, object]) -> int:
    state = new_game([f"p{i}" for i in range(n)], preset, options, seed=seed)
    rng = random.Random(seed)
    total = set_size(state.rules.set)
    moves = 0
    while state.status != "game_over":
        deal(state)
        while state.status == "in_round":
            seat = state.turn
            assert seat is not None
            apply(state, seat, rng.choice(legal_moves(state, seat)))
            moves += 1
            # cheap conservation check every move; the full section-9 check at round ends
            placed = sum(map(len, state.hands)) + len(state.boneyard) + sum(map(len, state.trains))
            assert placed + 1 == total
        check_invariants(state)
        assert moves < 200_000
    view = score_view(state)
    assert view["winners"] and all(len(p["rounds"]) == state.rules.rounds for p in view["players"])
    return moves


@pytest.mark.slow
@pytest.mark.no_cover  # volume: tracing would triple its time; focused tests cover the lines
@pytest.mark.parametrize("preset", PRESETS)
def test_s9_self_play_short_games(preset: str) -> None:
    """650 one- or two-round games per preset, every player count."""
    for seed in range(650):
        n = 2 + seed % (MAX_PLAYERS[preset] - 1)
        assert _play(preset, n, seed, {"rounds": 1 + seed % 2}) > 0


@pytest.mark.slow
@pytest.mark.no_cover  # volume: tracing would triple its time; focused tests cover the lines
@pytest.mark.parametrize("preset", PRESETS)
def test_s9_self_play_full_length_games(preset: str) -> None:
    """Full-length games (13 rounds with double-12, more with bigger sets)."""
    for seed in range(20):
        n = (2, 4, 6, 8, 10)[seed % 5]
        assert _play(preset, n, 10_000 + seed, {}) > 0
