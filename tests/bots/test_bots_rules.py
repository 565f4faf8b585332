"""Every bot finishes games under every preset, player count and rule variant (in-process)."""

from __future__ import annotations

from typing import Any

import pytest

from service.bots import BOTS
from service.bots.hard import HardBot
from service.tournament.runner import game_specs, play_local

VARIANTS: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 2, {"set": 6}),
    ("standard", 3, {"opening": "single"}),
    ("standard", 5, {"chicken_foot": True}),
    ("standard", 4, {"double_follow": "satisfy", "double_blank_points": 25}),
    ("standard", 9, {}),
    ("standard", 14, {}),
    ("tournament", 6, {"chicken_foot": True, "double_follow": "satisfy"}),
    ("tournament", 8, {"opening": "single"}),
    ("classic", 10, {}),
    ("classic", 2, {"opening_no_play": "mark", "engine_source": "set_aside"}),
]


@pytest.mark.parametrize(("preset", "players", "options"), VARIANTS)
def test_bots_finish_games_under_rule_variants(
    preset: str, players: int, options: dict[str, Any]
) -> None:
    names = sorted(set(BOTS) - {"hard"})  # hard: below, on shorter games
    lineup = [names[i % len(names)] for i in range(players)]
    specs = game_specs(lineup, 2, base_seed=players * 100, preset=preset, options=options)
    for spec in specs:
        result = play_local(spec)
        assert result.winners
        assert result.totals == [sum(r) for r in result.rounds]
        assert all(len(r) == len(result.rounds[0]) >= 1 for r in result.rounds)


def small_hard(seed: int | None) -> HardBot:
    """The hard bot's search with a small budget: the same code paths, a test's time."""
    return HardBot(seed, moves=300, least=1)


@pytest.mark.parametrize(("preset", "players", "options"), VARIANTS)
def test_hard_bot_finishes_rounds_under_rule_variants(
    preset: str, players: int, options: dict[str, Any]
) -> None:
    lineup = ["tests.bots.test_bots_rules:small_hard"] * 2 + ["greedy"] * (players - 2)
    options = {**options, "rounds": 2}
    spec = game_specs(lineup, 1, base_seed=players, preset=preset, options=options)[0]
    result = play_local(spec)
    assert result.winners and all(len(r) == 2 for r in result.rounds)
