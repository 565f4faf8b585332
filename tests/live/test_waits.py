"""Long-polls and streams: when they answer, what they refuse, how they end."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service.store import keys
from service.store.slots import SlotKind
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import (
    NDJSON,
    SSE,
    TIMEOUT,
    Game,
    auth,
    create,
    entries,
    is_end,
    ndjson_entries,
    play_turn,
    sse_entries,
    view,
)

#: How soon a waiting long-poll must answer after the move it waits for (the issue's bound).
WAKE_SECONDS = 0.5


def dealt(base: str, **body: Any) -> Game:
    body.setdefault("players", ["ann", "bo"])
    game = Game(create(base, **body))
    r = requests.post(f"{base}/api/v1/games/{game.id}/deal", headers=auth(game.host), timeout=30)
    assert r.status_code == 200, r.text
    return game


def events_url(base: str, gid: str) -> str:
    return f"{base}/api/v1/games/{gid}/events"


@pytest.mark.parametrize("reader", ["public", "seat", "host"])
def test_a_long_poll_wakes_within_half_a_second_of_the_move(
    live_pair: tuple[str, str], reader: str
) -> None:
    """The move is made on one instance, the long-poll waits on the other."""
    mover, watcher = live_pair
    game = dealt(mover)
    token = {"public": None, "seat": game.tokens[1], "host": game.host}[reader]
    with ThreadPoolExecutor(1) as pool:
        for _ in range(3):
            current = view(mover, game.id)
            waiting = pool.submit(timed_page, watcher, game.id, token, current["version"])
            time.sleep(1.0)  # the long-poll is waiting by now
            assert not waiting.done(), "nothing was new: the long-poll must still wait"
            seat_token = game.tokens[current["turn"]]
            assert seat_token is not None
            assert play_turn(mover, game.id, seat_token, random.Random(7)) is not None
            moved = time.monotonic()
            page, answered = waiting.result(10)
            assert answered - moved <= WAKE_SECONDS
            assert page["entries"][0]["version"] == current["version"] + 1


def timed_page(base: str, gid: str, token: str | None, after: int) -> tuple[dict[str, Any], float]:
    page = entries(base, gid, token, after=after, wait=30)
    return page, time.monotonic()


def test_a_long_poll_with_nothing_new_answers_empty_when_its_wait_ends(live: str) -> None:
    game = dealt(live)
    version = view(live, game.id)["version"]
    started = time.monotonic()
    page = entries(live, game.id, game.tokens[0], after=version, wait=1.5)
    waited = time.monotonic() - started
    assert page == {"game_id": game.id, "version": version, "entries": [], "more": False}
    assert waited >= 1.5  # it waited its wait out (a slower machine only waits longer)


def test_a_long_poll_behind_the_game_answers_at_once(live: str) -> None:
    game = dealt(live)
    # A 60 s wait under a 30 s read timeout: a poll held to its wait fails (a bound on a hang,
    # not a speed).
    r = requests.get(
        f"{live}/api/v1/games/{game.id}/events", params={"after": 0, "wait": 60}, timeout=30
    )
    assert r.status_code == 200, r.text
    assert [e["version"] for e in r.json()["entries"]] == [1, 2]


@pytest.mark.parametrize(
    "params",
    [
        {"after": -1},
        {"after": "x"},
        {"after": "1.5"},
        {"after": ""},
        {"after": "\u0663"},  # ARABIC-INDIC DIGIT THREE: int() reads it as 3
        {"after": " 1"},
        {"limit": "\u0663"},
        {"wait": -1},
        {"wait": 61},
        {"wait": "60.5"},
        {"wait": "nan"},
        {"wait": "inf"},
        {"wait": "soon"},
        {"wait": "\u0663"},  # float() reads it as 3.0, as int() does for `after`
        {"wait": " 1"},
        {"wait": "1_0"},  # float() reads it as 10.0
    ],
)
@pytest.mark.parametrize("accept", ["application/json", SSE, NDJSON])
def test_bad_after_or_wait_is_422(live: str, params: dict[str, Any], accept: str) -> None:
    game = dealt(live)
    r = requests.get(
        events_url(live, game.id), params=params, headers={"Accept": accept}, timeout=TIMEOUT
    )
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["code"] == "validation_failed"
    assert set(problem["errors"]) == set(params)


def test_wait_at_its_bounds_is_accepted(live: str) -> None:
    game = dealt(live)
    for wait in ("0", "0.0", "60"):
        page = entries(live, game.id, None, after=0, wait=wait)
        assert len(page["entries"]) == 2


def test_unknown_game_is_404_and_unknown_token_401(live: str) -> None:
    game = dealt(live)
    for gid in ("AAAAAAAAAAAA", "no such game!"):
        for path in ("events", "history"):
            r = requests.get(f"{live}/api/v1/games/{gid}/{path}", timeout=TIMEOUT)
            assert r.status_code == 404, r.text
            assert r.json()["code"] == "game_not_found"
    stranger = dealt(live).host
    for accept in ("application/json", SSE, NDJSON):
        by_header = requests.get(
            events_url(live, game.id),
            headers={"Accept": accept, **auth(stranger)},
            timeout=TIMEOUT,
        )
        by_query = requests.get(
            events_url(live, game.id),
            params={"access_token": "not-a-token-of-this-game"},
            headers={"Accept": accept},
            timeout=TIMEOUT,
        )
        empty = requests.get(
            events_url(live, game.id) + "?access_token=", headers={"Accept": accept}, timeout=5
        )
        for r in (by_header, by_query, empty):
            assert r.status_code == 401, r.text
            assert r.json()["code"] == "invalid_token"


def test_history_before_the_end_is_the_hosts_alone(live: str) -> None:
    game = dealt(live)
    url = f"{live}/api/v1/games/{game.id}/history"
    anonymous = requests.get(url, timeout=TIMEOUT)
    assert anonymous.status_code == 401
    assert anonymous.json()["code"] == "missing_token"
    seat = requests.get(url, headers=auth(game.tokens[0]), timeout=TIMEOUT)
    assert seat.status_code == 403
    assert seat.json()["code"] == "not_host"
    in_query = requests.get(url, params={"access_token": game.host}, timeout=TIMEOUT)
    assert in_query.status_code == 401, "the query token is for /events alone"
    host = requests.get(url, headers=auth(game.host), timeout=TIMEOUT)
    assert host.status_code == 200
    assert [e["version"] for e in host.json()["entries"]] == [1, 2]


@pytest.mark.parametrize("media", [SSE, NDJSON])
def test_a_stream_of_a_finished_game_sends_the_whole_log_and_closes(live: str, media: str) -> None:
    players = [{"name": f"cpu{i}", "bot": "greedy"} for i in range(3)]
    game = Game(create(live, players=players, auto_deal=True, options={"rounds": 2}))
    version = game.created["version"]
    assert game.created["status"] == "game_over"
    with requests.get(
        events_url(live, game.id), headers={"Accept": media}, stream=True, timeout=TIMEOUT
    ) as r:
        assert r.status_code == 200
        assert r.headers["X-Accel-Buffering"] == "no"
        got = list(sse_entries(r) if media == SSE else ndjson_entries(r))  # ends by itself
    assert [e["version"] for e in got] == list(range(1, version + 1))
    assert is_end(got[-1])


def test_a_quiet_ndjson_stream_answers_its_headers_at_once(live: str) -> None:
    # A client learns the stream is open (200, its type) before the first entry or keep-alive
    # (10 s on): its read timeout must not have to outlast the keep-alive period.
    game = dealt(live)
    version = requests.get(f"{live}/api/v1/games/{game.id}", timeout=TIMEOUT).json()["version"]
    with requests.get(
        events_url(live, game.id),
        params={"after": version},
        headers={"Accept": NDJSON},
        stream=True,
        timeout=(5, 5),
    ) as r:
        assert r.status_code == 200
        assert r.headers["Content-Type"].startswith(NDJSON)


#: The open-stream cap of the server the cap's test starts: small, so the test holds it whole.
STREAM_CAP = 2


@pytest.fixture(scope="module")
def capped() -> Iterator[tuple[str, redis.Redis]]:
    """A server of its own on a Redis of its own: no other test's streams hold its slots; and a
    client of that Redis, to see the slots held."""
    env = {**LIVE_ENV, "STREAMS_PER_ADDRESS": str(STREAM_CAP)}
    with RedisServer() as server, start_gunicorn(server.url, workers=1, env=env) as base:
        client = redis.Redis.from_url(server.url)
        try:
            yield base, client
        finally:
            client.close()


def slots_held(client: redis.Redis) -> int:
    """How many open-stream slots the test's address holds."""
    return int(client.zcard(keys.address_slots_key(SlotKind.STREAMS, "127.0.0.1")))


def test_long_polls_count_against_the_address_open_streams_cap(
    capped: tuple[str, redis.Redis],
) -> None:
    base, client = capped
    game = dealt(base)
    url, version = events_url(base, game.id), view(base, game.id)["version"]
    poll = {"after": version, "wait": 30}
    with ThreadPoolExecutor(STREAM_CAP) as pool:
        held = [
            pool.submit(requests.get, url, params=poll, timeout=TIMEOUT) for _ in range(STREAM_CAP)
        ]
        deadline = time.monotonic() + 20  # both long-polls hold their slots: seen in Redis
        while slots_held(client) < STREAM_CAP and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slots_held(client) == STREAM_CAP
        refused = requests.get(url, params=poll, timeout=TIMEOUT)
        assert refused.status_code == 429, "a third long-poll was let wait"
        assert refused.json()["code"] == "rate_limited"
        assert refused.json()["ratelimit"]["policy"]["name"] == "streams"
        assert int(refused.headers["Retry-After"]) >= 1
        stream = requests.get(url, headers={"Accept": SSE}, timeout=TIMEOUT)
        assert stream.status_code == 429  # streams and long-polls share the cap
        at_once = requests.get(url, params={"after": version}, timeout=TIMEOUT)
        assert at_once.status_code == 200  # a read that does not wait holds no slot
        assert not any(f.done() for f in held)
        seat_token = game.tokens[view(base, game.id)["turn"]]
        assert seat_token is not None
        assert play_turn(base, game.id, seat_token, random.Random(3)) is not None
        woken = [f.result() for f in held]
    assert [r.status_code for r in woken] == [200] * STREAM_CAP
    assert all(r.json()["entries"] for r in woken)
    # The slots came back with the answers (given back before the answer is written), every
    # one: two requests one after the other would pass with one of the two slots leaked.
    assert slots_held(client) == 0
    again = requests.get(url, params={"after": 0, "wait": 1}, timeout=TIMEOUT)
    assert again.status_code == 200 and slots_held(client) == 0
