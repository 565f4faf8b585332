"""Server-side faults still answer with a problem body: corrupt state, unexpected errors."""

from __future__ import annotations

import redis
from flask import Flask
from flask.testing import FlaskClient

from service.store import keys as K
from tests.api.conftest import bearer, dealt_game


def test_corrupt_state_is_a_500_problem(client: FlaskClient, redis_client: redis.Redis) -> None:
    game = dealt_game(client, seed=1)
    redis_client.hset(K.game_key(game.id), "s", b"\x00garbage")
    r = client.get(game.url, headers=bearer(game.seats[0]))
    assert r.status_code == 500
    assert r.headers["Content-Type"] == "application/problem+json"
    body = r.json
    assert body["code"] == "corrupt_state"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert "garbage" not in body["detail"]


def test_unexpected_exception_is_a_500_problem(app: Flask) -> None:
    @app.get("/boom")
    def boom() -> str:
        raise RuntimeError("secret internals")

    r = app.test_client().get("/boom")
    assert r.status_code == 500
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == "internal_error"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert "secret" not in r.get_data(as_text=True)


def test_redis_down_is_a_problem(app: Flask, redis_client: redis.Redis) -> None:
    client = app.test_client()
    game = dealt_game(client, seed=2)
    store = app.extensions["mexican_train_store"]
    store.client.connection_pool.reset()
    store.client.connection_pool.connection_kwargs["port"] = 1  # nothing listens there
    r = client.get(game.url)
    assert r.status_code == 503
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == "storage_unavailable"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Retry-After"] == "1"
