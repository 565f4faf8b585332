"""The level descriptions the API lists: one per registered bot, with a measured strength."""

from __future__ import annotations

import dataclasses

import pytest

from service.bots.registry import BOTS, LEVELS, Level, make_bot
from service.tournament.stats import wilson


def test_every_registered_bot_has_one_level_in_registry_order() -> None:
    assert [level.name for level in LEVELS] == list(BOTS)
    for level in LEVELS:
        assert make_bot(level.name, 1).name == level.name
        assert level.description


def test_strengths_are_measured_win_rates() -> None:
    for level in LEVELS:
        if level.strength is None:
            assert level.strength_games == 0
        else:
            assert 0.0 <= level.strength <= 1.0 and level.strength_games > 0
    by_name = {level.name: level for level in LEVELS}
    # Stronger levels win more against three random bots (random itself is near parity).
    assert by_name["random"].strength is not None and abs(by_name["random"].strength - 0.25) < 0.05
    for weaker, stronger in (("random", "greedy"), ("greedy", "planner")):
        assert by_name[stronger].strength > by_name[weaker].strength  # type: ignore[operator]


def test_each_strength_comes_with_its_wilson_interval() -> None:
    for level in LEVELS:
        if level.strength is None:
            assert level.strength_interval is None
            continue
        wins = round(level.strength * level.strength_games)
        assert abs(wins / level.strength_games - level.strength) < 0.0005  # a count of games
        lo, hi = wilson(wins, level.strength_games)
        assert level.strength_interval == pytest.approx((lo, hi), abs=0.0005)


def test_a_level_is_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        LEVELS[0].name = "other"  # type: ignore[misc]
    assert isinstance(LEVELS, tuple) and all(isinstance(level, Level) for level in LEVELS)
