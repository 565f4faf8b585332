"""Examples found in review where the engine disagreed with RULES.md (one test per finding)."""

from __future__ import annotations

from service.rules import FORMAT, deal, import_position


def test_s4_round_one_engine_search_starts_at_seat_0_even_with_a_stored_starter() -> None:
    # RULES.md 4: if nobody holds the engine, round 1's search draws from seat 0 (only later
    # rounds start after the previous starter). A waiting_deal position may carry a starter.
    found = 0
    for seed in range(60):
        doc = {
            "format": FORMAT, "players": ["a", "b", "c"],
            "rules": {"preset": "standard", "options": {}}, "status": "waiting_deal",
            "round": 0, "engine": None, "turn": None, "opened": [False] * 3,
            "hands": [[], [], []], "boneyard": [], "trains": {}, "marked": [False] * 3,
            "open_doubles": [], "scores": [[], [], []], "starter": 1, "seed": seed,
        }  # fmt: skip
        state = import_position(doc)
        draws = [e for e in deal(state) if e["type"] == "tile_drawn"]
        if draws:
            assert draws[0]["seat"] == 0
            found += 1
    assert found
