"""A compare-and-set whose reply is lost: Redis ran it, then the connection broke before the
service read the answer (tests/faults/late_link.py breaks it there). The request cannot know
whether its change is stored, so it answers 503 and looks at what is stored, as after a
timeout; it must not send the change again, which would find its own change, answer that
another action came first, and (for a seek) give the seeker a second seat."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.store import scripts
from tests.api.conftest import Game, bearer
from tests.eventually import eventually
from tests.faults.late_link import LateLink

pytestmark = pytest.mark.usefixtures("own_owed")


@pytest.fixture()
def link(redis_server: RedisServer, redis_client: redis.Redis) -> Iterator[LateLink]:
    with LateLink(redis_server.port) as linked:
        yield linked


@pytest.fixture()
def linked_client(link: LateLink) -> FlaskClient:
    return create_app({"REDIS_URL": link.url, "GAME_TTL_SECONDS": 3600}).test_client()


def cas_sha(redis_client: redis.Redis) -> bytes:
    return str(redis_client.script_load(scripts.COMPARE_AND_SET)).encode()


def test_a_move_whose_reply_was_lost_is_not_told_another_came_first(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    r = linked_client.post("/api/v1/games", json={"players": ["ann", "bo"], "seed": 4})
    game = Game(linked_client, r.json)  # type: ignore[arg-type]
    view: Any = game.deal().json
    seat, version = view["turn"], view["version"]
    move = game.legal(seat)[0]
    link.lose_reply_of_next(cas_sha(redis_client))
    r = game.move(seat, move)
    assert link.lost.is_set()
    assert (r.status_code, r.json["code"]) == (503, "storage_unavailable"), r.json  # type: ignore[index]
    assert game.version() == version + 1  # stored once: a retry of it is judged afresh


def test_a_seek_whose_seat_reply_was_lost_takes_no_second_seat(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    client = linked_client
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    link.lose_reply_of_next(cas_sha(redis_client))
    r = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"})
    assert link.lost.is_set()
    assert r.status_code == 503, r.json
    # Seat 1 was taken under a token nobody holds: it opens again, for the seeker's retry.
    url = f"/api/v1/games/{first['game_id']}"

    def seats() -> list[tuple[str, bool]]:
        players = client.get(url, headers=bearer(first["token"])).json["players"]  # type: ignore[index]
        return [(p["name"], p["open"]) for p in players]

    eventually(lambda: seats()[1][1], 30, f"seat 1 never opened again: {seats()}")
    again: Any = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"}).json
    assert (again["game_id"], again["seat"]) == (first["game_id"], 1)
    assert [open_ for _, open_ in seats()] == [False, False, True]


def test_a_seek_whose_new_tables_reply_was_lost_is_a_503_and_leaves_no_seat_held(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """The seek makes its table under the id its claim drew; Redis makes it, and the reply is
    lost. Sent again, the creation found its own table and refused the id (a 500)."""
    client = linked_client
    seek = {"name": "ann", "players": 2}
    link.lose_reply_of_next(str(redis_client.script_load(scripts.CREATE_GAME)).encode())
    r = client.post("/api/v1/lobby/seek", json=seek)
    assert link.lost.is_set()
    assert (r.status_code, r.json["code"]) == (503, "storage_unavailable"), r.json  # type: ignore[index]
    made = [k for k in redis_client.scan_iter(match="mt:{*}") if k.count(b":") == 1]
    assert len(made) == 1  # the table was made once
    game_id = made[0].decode()[4:-1]

    def seat_open() -> bool:
        players = client.get(f"/api/v1/games/{game_id}").json["players"]  # type: ignore[index]
        return bool(players[0]["open"])

    eventually(seat_open, 30, "the seat taken under a token nobody holds never opened")
