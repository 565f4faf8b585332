"""Games the server plays by itself (bot seats, automatic deals) replay from their history."""

from __future__ import annotations

import pytest

from service.rules import PRESETS
from tests.live.helpers import Game, assert_replays, create, history


@pytest.mark.parametrize("preset", PRESETS)
def test_a_game_of_bots_played_in_its_creation_replays(live: str, preset: str) -> None:
    """The creation request plays the whole game; its records must replay, plays on the
    Mexican train included (their train is stored relative to the number of players)."""
    levels = ["random", "greedy", "planner", "random"]
    players = [{"name": f"cpu{i}", "bot": level} for i, level in enumerate(levels)]
    game = Game(create(live, players=players, preset=preset, auto_deal=True, options={"rounds": 2}))
    assert game.created["status"] == "game_over"
    trains = {
        e["action"].get("train") for e in history(live, game.id)["entries"] if e["by"] == "bot"
    }
    assert "mexican" in trains
    assert assert_replays(live, game.id) > 0
