"""Bot strength, measured in-process on the engine (long tournaments live in `make bench-bots`)."""

from __future__ import annotations

import pytest

from service.tournament.runner import game_specs, run_local
from service.tournament.stats import aggregate, wilson

PLANNER_GAMES = 1000
GREEDY_GAMES = 300


@pytest.mark.slow
@pytest.mark.no_cover  # volume: tracing would triple its time; focused tests cover the lines
def test_planner_wins_at_least_45_percent_against_three_random_bots() -> None:
    specs = game_specs(["planner", "random", "random", "random"], PLANNER_GAMES, base_seed=10_000)
    stats = aggregate(run_local(specs))
    planner = stats["planner"]
    assert planner.seats == PLANNER_GAMES
    rate = planner.wins / planner.seats
    assert rate >= 0.45, f"planner won {rate:.1%} (95% CI {wilson(planner.wins, planner.seats)})"


@pytest.mark.slow
@pytest.mark.no_cover  # volume: tracing would triple its time; focused tests cover the lines
def test_greedy_beats_random() -> None:
    specs = game_specs(["greedy", "random", "random", "random"], GREEDY_GAMES, base_seed=20_000)
    stats = aggregate(run_local(specs))
    greedy, rnd = stats["greedy"], stats["random"]
    lo, _ = wilson(greedy.wins, greedy.seats)
    assert lo > 0.25, f"greedy {greedy.win_rate:.1%}: no better than a random seat"
    assert greedy.mean_total < rnd.mean_total
