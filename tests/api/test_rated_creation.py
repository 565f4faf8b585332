"""A rated game of bots alone that ends within its creation rates its seats once, also when a
retry with the same Idempotency-Key builds a game of its own before the first answer is kept."""

from __future__ import annotations

import pytest
import redis
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


def test_a_rated_table_that_deals_by_itself_takes_no_seat_that_is_neither_player_nor_bot(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    """Such a table deals once every seat is a player or a bot: a seat that is neither would
    hold it in waiting_deal for ever, and no request would be told why. It is refused at its
    creation, as a join without player_token is; without auto_deal the table's holder deals,
    and is told (unrated_seat) then."""
    people = [{"name": "ann"}, {"name": "g", "bot": "greedy"}]
    body = {"players": people, "rated": True, "auto_deal": True}
    stored = redis_client.dbsize()
    refused = client.post("/api/v1/games", json=body)
    assert refused.status_code == 422, refused.json
    assert refused.json is not None and refused.json["code"] == "unrated_seat"
    assert redis_client.dbsize() == stored, "a refused creation stored something"
    made = client.post("/api/v1/games", json={**body, "auto_deal": False})
    assert made.status_code == 201 and made.json["status"] == "waiting_deal", made.json
