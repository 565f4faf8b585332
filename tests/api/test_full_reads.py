"""A seat's read while Redis refuses writes (full under ``noeviction``, or a replica after a
failover): the read also writes the seat's presence mark and its rate counter, and neither may
cost the seat its view of its own hand. What changes a game is still refused (503)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from tests.api.conftest import bearer, dealt_game

pytestmark = pytest.mark.usefixtures("own_owed")


@pytest.fixture()
def own_redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.mark.parametrize("refusal", ["full", "read_only"])
@pytest.mark.parametrize("rate_limit", [0, 1000])
def test_a_seat_reads_its_game_while_redis_refuses_writes(
    own_redis: RedisServer, refusal: str, rate_limit: int
) -> None:
    settings = {"REDIS_URL": own_redis.url, "RATE_LIMIT_PER_MINUTE": rate_limit}
    client: FlaskClient = create_app(settings).test_client()
    game = dealt_game(client, players=["ann", "bo"], seed=3)
    admin = redis.Redis.from_url(own_redis.url)
    if refusal == "full":
        admin.config_set("maxmemory-policy", "noeviction")
        admin.config_set("maxmemory", 1)
    else:
        admin.execute_command("REPLICAOF", "127.0.0.1", "1")  # no master there: keeps its data
    try:
        for seat, token in enumerate(game.seats):
            r = client.get(game.url, headers=bearer(token))
            assert r.status_code == 200, r.json
            assert len(r.json["hand"]) == r.json["players"][seat]["hand_size"]  # type: ignore[index]
            r = client.get(game.url + "/legal-moves", headers=bearer(token))
            assert r.status_code == 200, r.json
        turn = game.view()["turn"]
        r = game.move(turn, game.legal(turn)[0])
        assert r.status_code == 503, r.json
    finally:
        admin.config_set("maxmemory", 0)
        admin.execute_command("REPLICAOF", "NO", "ONE")
        admin.close()
