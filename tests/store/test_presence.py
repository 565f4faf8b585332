"""Presence in Redis: requests and open streams mark a seat, a closed stream stops counting."""

from __future__ import annotations

import pytest
import redis

from service.store import keys
from service.store.presence import KEEP_SECONDS, STREAM_STALE_MS, Presence, present_seats

WINDOW = 30_000


@pytest.fixture()
def presence(redis_client: redis.Redis) -> Presence:
    return Presence(redis_client)


def seats_at(presence: Presence, game_id: str, now: int, seats: int = 3) -> list[bool]:
    (fields,) = presence.of_games([game_id])
    return present_seats(fields, seats, now, WINDOW)


def test_a_request_marks_its_seat_for_the_window(presence: Presence) -> None:
    presence.seen("gameaaaa", 1, 100_000)
    assert seats_at(presence, "gameaaaa", 100_000) == [False, True, False]
    assert seats_at(presence, "gameaaaa", 100_000 + WINDOW - 1) == [False, True, False]
    assert seats_at(presence, "gameaaaa", 100_000 + WINDOW) == [False, False, False]


def test_a_stream_counts_until_it_closes(presence: Presence, redis_client: redis.Redis) -> None:
    presence.streaming("gameaaaa", 2, "s1", 100_000)
    presence.streaming("gameaaaa", 2, "s2", 100_000)
    presence.closed("gameaaaa", 2, "s1")
    assert seats_at(presence, "gameaaaa", 101_000) == [False, False, True]
    presence.closed("gameaaaa", 2, "s2")
    assert seats_at(presence, "gameaaaa", 101_000) == [False, False, False]
    presence.streaming("gameaaaa", 0, "s3", 100_000)
    assert 0 < redis_client.ttl(keys.presence_key("gameaaaa")) <= KEEP_SECONDS


def test_games_are_read_together_and_apart(presence: Presence) -> None:
    presence.seen("gameaaaa", 0, 100_000)
    presence.seen("gamebbbb", 2, 100_000)
    first, second, none = presence.of_games(["gameaaaa", "gamebbbb", "gamecccc"])
    assert present_seats(first, 3, 100_000, WINDOW) == [True, False, False]
    assert present_seats(second, 3, 100_000, WINDOW) == [False, False, True]
    assert none == {}


def test_strange_fields_and_seats_beyond_the_table_are_ignored() -> None:
    fields = {b"r7": b"100000", b"x0": b"100000", b"t1:s": b"100000", b"r0": b"1"}
    assert present_seats(fields, 2, 100_000, WINDOW) == [False, True]


def test_an_open_stream_outlives_the_window_until_its_beats_stop(presence: Presence) -> None:
    presence.streaming("gameaaaa", 0, "s1", 100_000)
    assert seats_at(presence, "gameaaaa", 100_000 + WINDOW + 1, 1) == [True]
    assert seats_at(presence, "gameaaaa", 100_000 + STREAM_STALE_MS, 1) == [False]
