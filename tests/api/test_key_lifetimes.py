"""No key of a game lives for ever: a whole game played through the API with every feature that
writes beside the game (keyed creation and moves, rate counters, presence, stream and transfer
tickets, a rematch), then every key in Redis is looked at. A key of a game's hash tag must carry
a TTL; a key without one must be one of the service's few shared structures, which are kept
bounded by the code that drains them (docs/design.md)."""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.store import keys
from tests.api.conftest import Game, bearer

#: Keys that are meant to live without a TTL: the queue, due sets, lobby, webhooks' queue,
#: players and leaderboards (each drained by its own code, or one per player).
SHARED = re.compile(r"mt:\{(due|work|lobby|hooks|leaderboard|player:[^}]+|due:[@A-O]{4})\}.*")


@pytest.fixture()
def counted_client(redis_server: RedisServer, redis_client: redis.Redis) -> Iterator[FlaskClient]:
    app: Flask = create_app(
        {
            "REDIS_URL": redis_server.url,
            "GAME_TTL_SECONDS": 3600,
            "RATE_LIMIT_PER_MINUTE": 10_000,
            "RATE_LIMIT_CREATE_PER_MINUTE": 10_000,
            "RATE_LIMIT_JOIN_PER_MINUTE": 10_000,
        }
    )
    yield app.test_client()


def keyed(**headers: str) -> dict[str, str]:
    return {"Idempotency-Key": uuid.uuid4().hex, **headers}


def play_out(game: Game, rng: random.Random) -> None:
    """Every round dealt and played with keyed, If-Match moves, each seat reading its view."""
    while True:
        r = game.client.post(game.url + "/deal", headers=keyed(**bearer(game.host)))
        assert r.status_code == 200, r.json
        view: Any = r.json
        while view["status"] == "in_round":
            seat = view["turn"]
            game.view(game.seats[seat])
            move = rng.choice(game.legal(seat))
            r = game.move(seat, move, **keyed(**{"If-Match": f'"{view["version"]}"'}))
            assert r.status_code == 200, r.json
            view = r.json
        if view["status"] == "game_over":
            return


def test_every_key_of_a_played_game_expires(
    counted_client: FlaskClient, redis_client: redis.Redis
) -> None:
    client = counted_client
    body = {"players": ["ann", "bo"], "seed": 5, "options": {"rounds": 2}}
    r = client.post("/api/v1/games", json=body, headers=keyed())
    assert r.status_code == 201, r.json
    game = Game(client, r.json)  # type: ignore[arg-type]
    r = client.post(game.url + "/stream-tickets", headers=bearer(game.seats[0]))
    assert r.status_code in (200, 201), r.json
    r = client.post(game.url + "/transfers", headers=bearer(game.seats[1]))
    assert r.status_code == 201, r.json
    claim = {"ticket": r.json["ticket"]}  # type: ignore[index]
    r = client.post(game.url + "/transfers/claim", json=claim, headers=keyed())
    assert r.status_code == 201, r.json
    game.seats[1] = r.json["token"]  # type: ignore[index]
    play_out(game, random.Random(5))
    for token in game.seats:
        r = client.post(game.url + "/rematch", headers=keyed(**bearer(token)))
        assert r.status_code in (200, 201), r.json
    # A seek whose table nobody else joins, and a public table with an open seat.
    seek = {"name": "sol", "players": 3, "turn_seconds": 37}
    r = client.post("/api/v1/lobby/seek", json=seek, headers=keyed())
    assert r.status_code == 201, r.json
    public = {"players": ["pam", {"open": True}], "public": True}
    r = client.post("/api/v1/games", json=public, headers=keyed())
    assert r.status_code == 201, r.json
    assert client.get("/api/v1/lobby").status_code == 200

    forever = []
    for name in redis_client.scan_iter(match="mt:*"):
        key = name.decode()
        if redis_client.ttl(name) < 0 and not SHARED.fullmatch(key):
            forever.append((key, redis_client.type(name).decode()))
    assert forever == []


def test_every_key_of_a_rated_game_with_a_bot_and_a_joiner_expires(
    counted_client: FlaskClient, redis_client: redis.Redis
) -> None:
    """A rated game of two players and a bot, one player seated by an invite: the ratings write
    the players' keys (durable by design) and nothing of the game lives for ever."""
    client = counted_client
    made = [client.post("/api/v1/players", json={"name": n}).json for n in ("pat", "quin")]
    tokens = [p["player_token"] for p in made]  # type: ignore[index]
    seats = [{"name": "pat", "player_token": tokens[0]}, {"open": True}]
    body = {"players": [*seats, {"name": "cpu", "bot": "random"}], "rated": True}
    body["options"] = {"rounds": 1}
    r = client.post("/api/v1/games", json=body, headers=keyed())
    assert r.status_code == 201, r.json
    created: Any = r.json
    invite = created["seats"][1]["invite"]
    joined = {"invite": invite, "name": "quin", "player_token": tokens[1]}
    r = client.post(f"/api/v1/games/{created['game_id']}/join", json=joined, headers=keyed())
    assert r.status_code == 201, r.json
    created["seats"][1]["token"] = r.json["token"]  # type: ignore[index]
    created["seats"][2]["token"] = "no token: a bot"
    game = Game(client, created)
    r = client.post(game.url + "/deal", headers=bearer(game.host))
    assert r.status_code == 200, r.json
    view: Any = r.json
    rng = random.Random(9)
    while view["status"] == "in_round":
        seat = view["turn"]
        r = game.move(seat, rng.choice(game.legal(seat)), **keyed())
        assert r.status_code == 200, r.json
        view = r.json
    assert view["status"] == "game_over"
    player = client.get(f"/api/v1/players/{made[0]['player_id']}").json  # type: ignore[index]
    assert player["games"] == 1, player  # type: ignore[index]
    forever = sorted(
        name.decode()
        for name in redis_client.scan_iter(match="mt:*")
        if redis_client.ttl(name) < 0 and not SHARED.fullmatch(name.decode())
    )
    assert forever == []
    assert redis_client.exists(f"mt:{{player:{made[0]['player_id']}}}:rated")  # type: ignore[index]


def test_a_seek_bucket_outlives_a_table_of_it_with_a_seat_open(
    counted_client: FlaskClient, redis_client: redis.Redis
) -> None:
    """A seek table with a seat open is offered by its bucket alone (its open seats carry no
    invite), and each change of the table renews the table's keys, a slot apart from the
    bucket's. A change that is no claim (here the holder gives a seat to a bot; a move at a
    table a failed seek's seat reopened after the deal, likewise) must renew the bucket too:
    else a week of such changes, and no seek of its kind, would let the bucket expire under
    the live table, its open seat offered to no seeker. The bucket's keys are set to expire
    soon, as a week without a claim leaves them."""
    client = counted_client
    made: Any = client.post("/api/v1/lobby/seek", json={"name": "ann", "players": 3}).json
    names = keys.seek_keys("standard|3|0|0")
    for name in names:
        redis_client.expire(name, 100)
    seat = f"/api/v1/games/{made['game_id']}/seats/2"
    r = client.put(seat, json={"bot": "random"}, headers=bearer(made["table_token"]))
    assert r.status_code == 200, r.json
    assert all(3000 < int(redis_client.ttl(name)) <= 3600 for name in names)
    later: Any = client.post("/api/v1/lobby/seek", json={"name": "bo", "players": 3}).json
    assert (later["game_id"], later["seat"]) == (made["game_id"], 1)
