"""The client against a live server (real gunicorn + real redis-server from the fixtures)."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from mexican_train_client import (
    Client,
    Conflict,
    Forbidden,
    NotFound,
    RateLimited,
    RetryPolicy,
    ServerError,
    StaleVersion,
    TransportError,
    Unauthorized,
    new_idempotency_key,
)

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service.bots import make_bot
from service.tournament.runner import drive_http, game_specs, play_http, play_local
from tests.bots.faulty_proxy import faulty_proxy

FAST_RETRY = RetryPolicy(attempts=4, base=0.01, cap=0.05)


@pytest.fixture()
def client(live_server: str) -> Iterator[Client]:
    with Client(live_server, retry=FAST_RETRY) as c:
        yield c


def _dealt_game(client: Client) -> dict[str, Any]:
    created = client.create_game(["ann", "bo", "cy"], preset="standard", seed=7)
    client.deal(created["game_id"], token=created["host_token"])
    return created


def _token_to_move(client: Client, created: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    view = client.view(created["game_id"])
    seat = view["turn"]
    token = next(s["token"] for s in created["seats"] if s["seat"] == seat)
    return token, client.legal_moves(created["game_id"], token=token)


def test_healthz(client: Client) -> None:
    assert client.healthz()


@pytest.mark.parametrize("preset", ["standard", "tournament", "classic"])
def test_complete_game_of_each_preset_over_http(client: Client, preset: str) -> None:
    """Bots play every round over HTTP; the score sheet is complete and equals local play."""
    (spec,) = game_specs(["planner", "greedy", "random"], 1, base_seed=100, preset=preset)
    result = play_http(client, spec)
    n_rounds = len(result.rounds[0])
    assert n_rounds >= 1
    assert all(len(r) == n_rounds for r in result.rounds)
    assert result.totals == [sum(r) for r in result.rounds]
    assert result.winners and min(result.totals) == min(result.totals[w] for w in result.winners)
    local = play_local(spec)
    assert (local.digest, local.totals, local.rounds) == (
        result.digest,
        result.totals,
        result.rounds,
    )


def test_same_idempotency_key_applies_once(client: Client) -> None:
    created = _dealt_game(client)
    gid = created["game_id"]
    token, listed = _token_to_move(client, created)
    move = listed["moves"][0]
    key = new_idempotency_key()
    first = client.move(gid, move, token=token, idempotency_key=key)
    second = client.move(gid, move, token=token, idempotency_key=key)
    assert first["version"] == listed["version"] + 1
    assert second == first
    assert client.view(gid)["version"] == listed["version"] + 1


def test_lost_response_is_retried_with_the_same_key_and_applies_once(live_server: str) -> None:
    with faulty_proxy(live_server) as (url, faults), Client(url, retry=FAST_RETRY) as c:
        created = _dealt_game(c)
        gid = created["game_id"]
        token, listed = _token_to_move(c, created)
        faults.seen_keys.clear()
        faults.plan = ["drop", "503"]  # response lost after applying, then a transient 503
        view = c.move(gid, listed["moves"][0], token=token)
        assert len(faults.seen_keys) == 3
        assert faults.seen_keys[0] is not None
        assert len(set(faults.seen_keys)) == 1, "every retry must reuse the first key"
        assert faults.seen_keys[0].startswith('"') and faults.seen_keys[0].endswith('"')
        assert view["version"] == listed["version"] + 1
        assert c.view(gid)["version"] == listed["version"] + 1


def test_429_honours_retry_after_then_succeeds(live_server: str) -> None:
    with faulty_proxy(live_server) as (url, faults), Client(url, retry=FAST_RETRY) as c:
        created = c.create_game(["ann", "bo"], seed=1)
        faults.retry_after = "1"
        faults.plan = ["429"]
        t0 = time.monotonic()
        view = c.deal(created["game_id"], token=created["host_token"])
        assert time.monotonic() - t0 >= 0.9
        assert view["status"] == "in_round"


def test_a_429_asking_a_longer_wait_than_the_policy_allows_is_raised_at_once(
    live_server: str,
) -> None:
    patient = RetryPolicy(attempts=4, base=0.01, cap=0.05, max_retry_after=5)
    with faulty_proxy(live_server) as (url, faults), Client(url, retry=patient) as c:
        created = c.create_game(["ann", "bo"], seed=1)
        faults.retry_after = "60"
        faults.plan = ["429"]
        sent = c.requests
        with pytest.raises(RateLimited) as info:
            c.deal(created["game_id"], token=created["host_token"])
        assert c.requests == sent + 1  # not asked again early, only to be refused again
        assert (info.value.code, info.value.retry_after) == ("rate_limited", 60)  # the proxy's
        assert c.view(created["game_id"])["status"] == "waiting_deal"


def test_an_http_date_retry_after_is_read_against_the_answers_date(live_server: str) -> None:
    """A proxy whose clock is an hour behind the client's asks, by an HTTP date, for a wait of
    60 s after its own ``Date``: past the policy's ``max_retry_after``, so the refusal is raised
    at once with that wait. Read against the client's clock the date has long passed, and the
    request would be sent again at once, only to be refused again by a server that is not
    ready."""
    patient = RetryPolicy(attempts=4, base=0.01, cap=0.05, max_retry_after=5)
    behind = time.time() - 3600
    with faulty_proxy(live_server) as (url, faults), Client(url, retry=patient) as c:
        created = c.create_game(["ann", "bo"], seed=1)
        faults.date = email.utils.formatdate(behind, usegmt=True)
        faults.retry_after = email.utils.formatdate(behind + 60, usegmt=True)
        faults.plan = ["429"]
        sent = c.requests
        with pytest.raises(RateLimited) as info:
            c.deal(created["game_id"], token=created["host_token"])
        assert c.requests == sent + 1
        assert info.value.retry_after == 60
        assert c.view(created["game_id"])["status"] == "waiting_deal"


def test_a_refused_stream_is_raised_with_its_code_when_its_wait_is_too_long(
    redis_server: RedisServer,
) -> None:
    env = {"STREAMS_PER_ADDRESS": "1", "GUNICORN_THREADS": "8", "LOG_LEVEL": "warning"}
    patient = RetryPolicy(attempts=4, base=0.01, cap=0.05, max_retry_after=5)
    with start_gunicorn(redis_server.url, env=env) as base, Client(base, retry=patient) as c:
        gid = c.create_game(["ann", "bo"], seed=1)["game_id"]
        url = f"{base}/api/v1/games/{gid}/events"
        held = requests.get(url, headers={"Accept": "text/event-stream"}, stream=True, timeout=10)
        with held, pytest.raises(RateLimited) as info:  # the address's one stream is taken
            next(iter(c.events(gid)))
    assert info.value.code == "rate_limited" and info.value.retry_after == 10


def test_a_429_whose_wait_ends_past_give_up_after_is_raised_at_once(
    redis_server: RedisServer,
) -> None:
    """The server's own rate limit answers 429 with the seconds left in its minute (up to 60):
    a wait the policy's ``max_retry_after`` would allow, but that ends after ``give_up_after``,
    is not slept (the call would last a minute where the caller allowed 5 s): the server's
    answer is raised at once."""
    env = {"RATE_LIMIT_PER_MINUTE": "1", "LOG_LEVEL": "warning"}
    patient = RetryPolicy(attempts=4, base=0.01, cap=0.05, give_up_after=5, max_retry_after=120)
    with start_gunicorn(redis_server.url, env=env) as base, Client(base, retry=patient) as c:
        created = c.create_game(["ann", "bo"], seed=1)  # no token: not counted
        gid, host = created["game_id"], created["host_token"]
        c.view(gid, token=host)  # the minute's one request of this token on this game
        sent = c.requests
        with pytest.raises(RateLimited) as info:
            c.view(gid, token=host)
        assert c.requests == sent + 1  # the wait was not slept to ask again
    assert info.value.code == "rate_limited"
    assert info.value.retry_after is not None and info.value.retry_after > 5


def test_a_refused_stream_whose_wait_ends_past_give_up_after_is_raised_at_once(
    redis_server: RedisServer,
) -> None:
    """The same for a stream refused with ``Retry-After: 10`` (the address's streams): within
    ``max_retry_after``, past ``give_up_after``."""
    env = {"STREAMS_PER_ADDRESS": "1", "GUNICORN_THREADS": "8", "LOG_LEVEL": "warning"}
    patient = RetryPolicy(attempts=4, base=0.01, cap=0.05, give_up_after=2, max_retry_after=30)
    with start_gunicorn(redis_server.url, env=env) as base, Client(base, retry=patient) as c:
        gid = c.create_game(["ann", "bo"], seed=1)["game_id"]
        url = f"{base}/api/v1/games/{gid}/events"
        held = requests.get(url, headers={"Accept": "text/event-stream"}, stream=True, timeout=10)
        sent = c.requests
        with held, pytest.raises(RateLimited) as info:  # the address's one stream is taken
            next(iter(c.events(gid)))
        assert c.requests == sent + 1  # the wait was not slept to ask again
    assert info.value.code == "rate_limited" and info.value.retry_after == 10


def test_a_stale_seat_change_rereads_the_game(client: Client) -> None:
    created = client.create_game(["ann", "bo"], seed=1)
    gid, host = created["game_id"], created["host_token"]
    with pytest.raises(StaleVersion) as info:
        client.set_seat(gid, 1, token=host, bot="random", if_match=7)
    assert info.value.view is not None and info.value.view["version"] == 1


def test_stale_if_match_rereads_the_game_and_changes_nothing(client: Client) -> None:
    created = _dealt_game(client)
    gid = created["game_id"]
    token, listed = _token_to_move(client, created)
    with pytest.raises(StaleVersion) as info:
        client.move(gid, listed["moves"][0], token=token, if_match=listed["version"] - 1)
    assert info.value.status == 412
    assert info.value.code == "stale_version"
    assert info.value.view is not None
    assert info.value.view["version"] == listed["version"]
    assert "hand" in info.value.view


def test_errors_are_typed_with_problem_codes(client: Client) -> None:
    with pytest.raises(NotFound) as nf:
        client.view("no-such-game")
    assert nf.value.code == "game_not_found"
    created = _dealt_game(client)
    gid = created["game_id"]
    with pytest.raises(Unauthorized):
        client.draw(gid, token="not-a-token")
    with pytest.raises(Forbidden):
        client.deal(gid, token=created["seats"][0]["token"])
    view = client.view(gid)
    idle = next(s for s in created["seats"] if s["seat"] != view["turn"])
    with pytest.raises(Conflict) as cf:
        client.draw(gid, token=idle["token"])
    assert cf.value.code == "not_your_turn"
    assert cf.value.detail
    assert client.view(gid)["version"] == view["version"]


def test_position_round_trip_and_bots_finish_the_imported_game(client: Client) -> None:
    created = _dealt_game(client)
    gid = created["game_id"]
    token, listed = _token_to_move(client, created)
    client.move(gid, listed["moves"][0], token=token)
    position = client.position(gid, token=created["host_token"])
    assert position["format"] == "mexican-train-position/1"
    copy = client.create_from_position(position)
    original, imported = client.view(gid), client.view(copy["game_id"])
    for field in ("status", "round", "engine", "turn", "trains", "boneyard_size", "open_doubles"):
        assert imported[field] == original[field], field
    assert client.position(copy["game_id"], token=copy["host_token"]) == position
    bots = [make_bot(name, seed=1) for name in ("planner", "greedy", "random")]
    score = drive_http(client, copy, bots)
    assert score["status"] == "game_over"
    assert score["winners"]


def test_a_proxys_html_502_is_raised_as_a_server_error_with_its_page(live_server: str) -> None:
    """A proxy in front of the service answers with its own HTML page, every try: the call
    raises ServerError with the status's code and the page's start, and the retries all carried
    the call's one key."""
    with faulty_proxy(live_server) as (url, faults), Client(url, retry=FAST_RETRY) as c:
        faults.plan = ["502html"] * FAST_RETRY.attempts
        with pytest.raises(ServerError) as info:
            c.create_game(["ann", "bo"])
        assert (info.value.status, info.value.code) == (502, "http_502")
        assert "502 Bad Gateway" in info.value.detail
        assert len(faults.seen_keys) == FAST_RETRY.attempts and len(set(faults.seen_keys)) == 1
        assert faults.forwarded == 0


@pytest.mark.stand_in_server
def test_a_successful_answer_that_is_not_json_raises_a_transport_error(live_server: str) -> None:
    """Something between the client and the service (a captive portal) answers 200 with its
    own page: the call raises the client's TransportError, with the page's start, not the
    JSON decoder's ValueError that no caller catching ClientError expects."""
    with faulty_proxy(live_server) as (url, faults), Client(url, retry=FAST_RETRY) as c:
        faults.plan = ["200html"]
        with pytest.raises(TransportError) as info:
            c.create_game(["ann", "bo"])
        assert "Sign in to the network" in str(info.value)
        assert len(faults.seen_keys) == 1 and faults.forwarded == 0
