"""Presence rides in the round trips a request makes anyway. A view's presence is read with the
game, in the load's pipeline, when this process's copy of it is due, and a seat's read marks
the seat there too: a move at a person's pace costs two round trips (the load and the
compare-and-set), not three, and its legal moves one, not two."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.api.presence import READ_EVERY_MS
from service.store.keys import presence_key

from .conftest import Game, bearer, dealt_game


@pytest.fixture()
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """How many times this thread has sent Redis commands since the fixture began: each send
    of a command or of a whole pipeline is one round trip (redis-py sends a pipeline at once)."""
    me = threading.get_ident()
    sent = [0]
    real = redis.connection.AbstractConnection.send_packed_command

    def counted(self: Any, command: Any, check_health: bool = True) -> None:
        if threading.get_ident() == me:
            sent[0] += 1
        real(self, command, check_health)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)
    yield lambda: sent[0]


def presence_due() -> None:
    time.sleep(READ_EVERY_MS / 1000 + 0.1)  # this process's copy of the presence is stale


def present(body: dict[str, Any]) -> list[bool]:
    return [player["present"] for player in body["players"]]


def test_a_move_reads_presence_with_its_game(
    client: FlaskClient, round_trips: Callable[[], int]
) -> None:
    game: Game = dealt_game(client)
    turn = game.view()["turn"]
    other = (turn + 1) % 3
    game.view(game.seats[other])  # that seat is at the table; the third one never came
    move = game.legal(turn)[0]
    presence_due()
    before = round_trips()
    played = game.move(turn, move)
    assert played.status_code == 200, played.json
    # The load (with the presence hash) and the compare-and-set (with the mover's mark).
    assert round_trips() - before == 2
    expected = [False] * 3
    expected[turn] = expected[other] = True
    assert present(played.json) == expected


def test_a_view_reads_presence_with_its_game_and_only_when_due(
    client: FlaskClient, round_trips: Callable[[], int]
) -> None:
    game = dealt_game(client)
    presence_due()
    before = round_trips()
    assert present(game.view()) == [False] * 3  # a public reader is nobody's seat
    assert round_trips() - before == 1
    assert present(game.view(game.seats[0]))[0] is True  # seat 0 comes to the table
    # Within the second, this process's copy stands: no read, so seat 0 is not seen yet.
    assert present(game.view()) == [False] * 3
    presence_due()
    before = round_trips()
    assert present(game.view()) == [True, False, False]
    assert round_trips() - before == 1


def test_a_seats_read_marks_it_in_the_same_round_trip(
    client: FlaskClient, round_trips: Callable[[], int], redis_client: redis.Redis
) -> None:
    game = dealt_game(client)
    turn = game.view()["turn"]
    assert redis_client.hgetall(presence_key(game.id)) == {}  # the host's deal marks nobody
    before = round_trips()
    game.legal(turn)
    assert round_trips() - before == 1
    assert set(redis_client.hgetall(presence_key(game.id))) == {f"r{turn}".encode()}
    # A token of no seat marks nothing (and is refused).
    stranger = client.get(game.url + "/legal-moves", headers=bearer("not-a-token"))
    assert stranger.status_code == 401
    assert set(redis_client.hgetall(presence_key(game.id))) == {f"r{turn}".encode()}


def test_a_seats_read_is_seen_by_the_views_that_follow_it(client: FlaskClient) -> None:
    """The read that marks a seat and brings the presence hash marks it first: the copy this
    process then keeps for a second holds the mark, so others' views show the seat present."""
    game = dealt_game(client)
    presence_due()
    assert present(game.view(game.seats[1]))[1] is True  # its read marks it, then reads
    assert present(game.view()) == [False, True, False]  # a public view, within the second


def test_a_mark_this_process_writes_is_in_its_copy_of_the_presence(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    """A move's mark rides in its compare-and-set, after the read: the process's copy of the
    presence takes it too, so its views show the mover present without another read."""
    app = create_app({"REDIS_URL": redis_server.url, "PRESENCE_SECONDS": 2})
    game = dealt_game(app.test_client())
    turn = game.view()["turn"]
    move = game.legal(turn)[0]  # marks the seat...
    time.sleep(2.2)  # ...and the mark lapses; this process's copy of the presence is due
    assert present(game.view()) == [False] * 3  # read now: nobody within the window
    played = game.move(turn, move)  # within the second: no read, the mark in its CAS
    assert played.status_code == 200, played.json
    expected = [False] * 3
    expected[turn] = True
    assert present(game.view()) == expected
