"""Imported positions cannot store numbers the game never reaches, and no stored game makes a
read fail to encode: overflowing imports are 422, and every read of an accepted one answers."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from service import rules
from service.store import keys as K
from tests.api.conftest import Game, bearer
from tests.rules.helpers import position

U64 = 2**64 - 1


def _round_two(**extra: Any) -> dict[str, Any]:
    return position(round=2, hands=[[[1, 2]], [[1, 3]], [[1, 4]]], **extra)


@pytest.mark.parametrize(
    "doc",
    [
        _round_two(scores=[[U64], [0], [0]]),
        _round_two(scores=[[U64], [U64], [U64]]),
        _round_two(opened=[False, True, True], turn_state={"tiles_played": U64}),
    ],
)
def test_overflowing_imports_are_refused(client: FlaskClient, doc: dict[str, Any]) -> None:
    r = client.post("/api/v1/games", json={"position": doc})
    assert r.status_code == 422, r.json
    assert r.json["code"] == "invalid_position"


def test_every_read_of_an_import_at_the_bounds_answers(client: FlaskClient) -> None:
    top = rules.import_position(_round_two()).rules.max_round_score
    doc = _round_two(scores=[[top], [top], [top]], opened=[False, True, True])
    doc["turn_state"] = {"tiles_played": rules.import_position(doc).rules.tiles}
    r = client.post("/api/v1/games", json={"position": doc})
    assert r.status_code == 201, r.json
    game = Game(client, r.json)
    for path, token in (
        ("", None),
        ("", game.seats[0]),
        ("/score", None),
        ("/legal-moves", game.seats[0]),
        ("/position", game.host),
    ):
        r = client.get(game.url + path, headers=bearer(token) if token else {})
        assert r.status_code == 200, (path, r.json)
    assert client.get(game.url + "/score").json["totals"] == [top] * 3
    assert game.deal().status_code == 409  # a round runs: a refusal, not a fault


def test_a_stored_state_beyond_the_bounds_is_a_problem_without_traceback(
    client: FlaskClient, redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    """A game stored before imports were bounded: its reads answer the corrupt_state problem
    (logged as one line) instead of failing to encode the view."""
    r = client.post("/api/v1/games", json={"position": _round_two()})
    game = Game(client, r.json)
    state = rules.import_position(_round_two())
    state.scores = [[U64], [U64], [0]]  # the sum no longer fits any JSON integer
    redis_client.hset(K.game_key(game.id), "s", rules.dumps(state))
    with caplog.at_level(logging.ERROR):
        for path in ("", "/score", "/deal"):
            method = client.post if path == "/deal" else client.get
            r = method(game.url + path, headers=bearer(game.host))
            assert r.headers["Content-Type"] == "application/problem+json", path
            assert r.json["code"] == "corrupt_state", path
    assert caplog.records and not any(rec.exc_info for rec in caplog.records)
