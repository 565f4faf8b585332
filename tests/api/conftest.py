"""API test fixtures: the real app on the session's real redis-server (flushed per test)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api import owed
from service.api.app import create_app


@pytest.fixture()
def app(redis_server: RedisServer, redis_client: redis.Redis) -> Iterator[Flask]:
    yield create_app({"REDIS_URL": redis_server.url, "GAME_TTL_SECONDS": 3600})


@pytest.fixture()
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Game:
    """A created game and its tokens, with small helpers to act through the HTTP API."""

    def __init__(self, client: FlaskClient, created: dict[str, Any]) -> None:
        self.client = client
        self.created = created
        self.id: str = created["game_id"]
        self.host: str = created["host_token"]
        self.seats: list[str] = [s["token"] for s in created["seats"]]
        self.url = f"/api/v1/games/{self.id}"

    def view(self, token: str | None = None) -> dict[str, Any]:
        r = self.client.get(self.url, headers=bearer(token) if token else {})
        assert r.status_code == 200, r.json
        body: dict[str, Any] = r.json  # type: ignore[assignment]
        return body

    def version(self) -> int:
        return int(self.view()["version"])

    def deal(self) -> Any:
        return self.client.post(self.url + "/deal", headers=bearer(self.host))

    def legal(self, seat: int) -> list[dict[str, Any]]:
        r = self.client.get(self.url + "/legal-moves", headers=bearer(self.seats[seat]))
        assert r.status_code == 200, r.json
        moves: list[dict[str, Any]] = r.json["moves"]  # type: ignore[index]
        return moves

    def move(self, seat: int, move: dict[str, Any], **headers: str) -> Any:
        return self.client.post(
            self.url + "/moves", json=move, headers={**bearer(self.seats[seat]), **headers}
        )


def new_game(client: FlaskClient, **body: Any) -> Game:
    body.setdefault("players", ["ann", "bo", "cy"])
    r = client.post("/api/v1/games", json=body)
    assert r.status_code == 201, r.json
    return Game(client, r.json)  # type: ignore[arg-type]


def dealt_game(client: FlaskClient, **body: Any) -> Game:
    game = new_game(client, **body)
    r = game.deal()
    assert r.status_code == 200, r.json
    return game


@pytest.fixture()
def own_owed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The writes a test owes to a Redis (or a link) that goes away with it are kept in a queue
    of its own and dropped at its end, not left in the process's queue, where they would be
    retried for up to an hour beside later tests' writes."""
    mine = owed.Owed()
    monkeypatch.setattr(owed, "OWED", mine)
    yield
    with mine._lock:
        mine._writes.clear()
