"""A whole game of each preset through the API, create to game_over, scores checked.

Moves are chosen at random (seeded) from what legal-moves lists; every round's scores are
recomputed from the hands the seats see when the round ends.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.api.conftest import Game, bearer, new_game


def hand_points(hand: list[list[int]], double_blank: int) -> int:
    return sum(double_blank if (a, b) == (0, 0) else a + b for a, b in hand)


def play_to_end(game: Game, rng: random.Random) -> dict[str, Any]:
    """Deal every round and play it out; returns the final score view."""
    n = len(game.seats)
    rules = game.created["rules"]["options"]
    expected_totals = [0] * n
    rounds_seen = 0
    while True:
        r = game.deal()
        assert r.status_code == 200, r.json
        view = r.json
        assert "hand" not in view  # the host sees the public view
        version = view["version"]
        while view["status"] == "in_round":
            seat = view["turn"]
            moves = game.legal(seat)
            assert moves, f"seat {seat} has no legal move on its turn"
            # Nobody else may move now.
            other = (seat + 1) % n
            assert game.legal(other) == []
            r = game.move(seat, rng.choice(moves), **{"If-Match": f'"{version}"'})
            assert r.status_code == 200, r.json
            view = r.json
            assert view["version"] == version + 1
            assert r.headers["ETag"] == f'"{version + 1}"'
            version += 1
        ends = [e for e in view["events"] if e["type"] == "round_over"]
        assert len(ends) == 1
        hands = [game.view(tok)["hand"] for tok in game.seats]
        expected = [hand_points(h, rules["double_blank_points"]) for h in hands]
        assert ends[0]["scores"] == expected
        for s in ends[0]["out"]:
            assert hands[s] == [] and expected[s] == 0
        expected_totals = [t + e for t, e in zip(expected_totals, expected, strict=True)]
        rounds_seen += 1
        score = game.client.get(game.url + "/score").json
        assert score["totals"] == expected_totals
        assert [p["rounds"][-1] for p in score["players"]] == expected
        if view["status"] == "game_over":
            assert rounds_seen == rules["rounds"]
            return score
        assert view["status"] == "round_over"


@pytest.mark.parametrize(
    ("preset", "players", "options"),
    [
        ("standard", ["ann", "bo", "cy"], {}),
        ("tournament", ["ann", "bo", "cy", "dee"], {}),
        ("classic", ["ann", "bo"], {}),
    ],
)
def test_full_game(client: FlaskClient, preset: str, players: list[str], options: Any) -> None:
    game = new_game(client, players=players, preset=preset, options=options, seed=7)
    assert game.created["rules"]["preset"] == preset
    score = play_to_end(game, random.Random(preset))
    totals = score["totals"]
    assert score["status"] == "game_over"
    best = min(totals)
    assert score["winners"]
    assert all(totals[w] == best for w in score["winners"])
    # After the last round no deal is possible.
    r = game.deal()
    assert r.status_code == 409
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == "game_over"
    final = game.view(game.seats[0])
    assert final["status"] == "game_over"
    assert final["winners"] == score["winners"]
    # A seat cannot move after the end.
    r = client.post(game.url + "/mark", headers=bearer(game.seats[0]))
    assert r.status_code == 409
