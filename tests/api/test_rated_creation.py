"""A rated game of bots alone that ends within its creation rates its seats once, also when a
retry with the same Idempotency-Key builds a game of its own before the first answer is kept."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from service.api import transaction

BODY = {
    "players": [{"name": "r", "bot": "random"}, {"name": "g", "bot": "greedy"}],
    "rated": True,
    "auto_deal": True,
    "options": {"rounds": 1, "set": 6},
}
BOTS = ("bot-random", "bot-greedy")


def games_of(client: FlaskClient) -> list[int]:
    return [client.get(f"/api/v1/players/{bot}").json["games"] for bot in BOTS]


def test_a_retry_racing_the_first_creation_rates_nothing_again(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = {"Idempotency-Key": "a-key-long-enough-not-to-be-guessed-0123456789"}
    first = client.post("/api/v1/games", json=BODY, headers=key)
    assert first.status_code == 201 and first.json["status"] == "game_over", first.json
    assert games_of(client) == [1, 1]
    # The retry looked for a kept answer before the first request kept its own: it builds
    # and plays a game of its own, then finds the first answer kept, and answers that.
    monkeypatch.setattr(transaction, "replay_unscoped", lambda _key: None)
    again = client.post("/api/v1/games", json=BODY, headers=key)
    assert again.status_code == 201 and again.json["game_id"] == first.json["game_id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert games_of(client) == [1, 1]
