"""The lobby lists public tables with open seats; seeks seat every seeker exactly once, at
the oldest table of its kind, on any number of instances at once, never overfilling a table;
seats still open after fill_with_bots_after go to bots and the game starts."""

from __future__ import annotations

import collections
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service.rules.log import Replayer
from service.store import keys
from tests.live.helpers import answered, auth, create, send
from tests.players.conftest import ENV
from tests.players.helpers import new_player, replayed_names, view_names
from tests.redis_clients import keys_not_starting, user_without

#: The keys an app user refused the lobby may touch: every one but the lobby's.
LOBBY_REFUSED = keys_not_starting("mt:{lobby}")


@pytest.fixture(scope="module")
def second(redis_server: RedisServer) -> Iterator[str]:
    """Another instance on the same Redis: seeks arrive at both."""
    with start_gunicorn(redis_server.url, workers=2, env=ENV, with_worker=False) as base:
        yield base


def lobby(base: str, **query: Any) -> list[dict[str, Any]]:
    r = requests.get(f"{base}/api/v1/lobby", params=query, timeout=10)
    assert r.status_code == 200, r.text
    listed: list[dict[str, Any]] = r.json()["tables"]
    return listed


def test_a_public_table_is_listed_until_its_seats_are_filled(server: str) -> None:
    made = create(server, players=["ann", {"open": True}, {"open": True}], public=True)
    private = create(server, players=["bo", {"open": True}])
    ids = [t["game_id"] for t in lobby(server)]
    assert made["game_id"] in ids and private["game_id"] not in ids
    listed = next(t for t in lobby(server) if t["game_id"] == made["game_id"])
    assert (listed["players"], listed["open_seats"], listed["rated"]) == (["ann"], 2, False)
    assert listed["rules"]["preset"] == "standard" and listed["turn_seconds"] == 0
    assert made["game_id"] in [t["game_id"] for t in lobby(server, players=3)]
    assert made["game_id"] not in [t["game_id"] for t in lobby(server, players=4)]
    assert made["game_id"] not in [t["game_id"] for t in lobby(server, preset="classic")]
    for seat in made["seats"][1:]:
        joined = send(
            "POST",
            f"{server}/api/v1/games/{made['game_id']}/join",
            json={"invite": seat["invite"], "name": f"p{seat['seat']}"},
        )
        assert joined.status_code == 201, joined.text
    assert made["game_id"] not in [t["game_id"] for t in lobby(server)]
    bad = requests.get(f"{server}/api/v1/lobby", params={"players": 99}, timeout=10)
    assert (bad.status_code, bad.json()["code"]) == (422, "validation_failed")


def test_a_public_table_whose_seat_is_reopened_is_listed_again(server: str) -> None:
    made = create(server, players=["ann", {"open": True}], public=True)
    game = f"{server}/api/v1/games/{made['game_id']}"
    invite = made["seats"][1]["invite"]
    assert send("POST", f"{game}/join", json={"invite": invite, "name": "bo"}).status_code == 201
    assert made["game_id"] not in [t["game_id"] for t in lobby(server)]
    reopened = send("PUT", f"{game}/seats/1", json={"open": True}, headers=auth(made["host_token"]))
    assert reopened.status_code == 200, reopened.text
    listed = [t for t in lobby(server) if t["game_id"] == made["game_id"]]
    assert [(t["players"], t["open_seats"]) for t in listed] == [(["ann"], 1)]
    again = {"invite": reopened.json()["changed"]["invite"], "name": "cy"}
    joined = send("POST", f"{game}/join", json=again)
    assert joined.status_code == 201, joined.text
    assert made["game_id"] not in [t["game_id"] for t in lobby(server)]


def test_a_player_is_never_seated_twice_at_one_seek_table(server: str) -> None:
    bo, cy = new_player(server, "bo"), new_player(server, "cy")
    body = {"players": 3, "rated": True, "turn_seconds": 123}
    first = seek(server, "bo", **body, player_token=bo["player_token"])
    again = send(
        "POST", f"{server}/api/v1/lobby/seek",
        json={"name": "bo", **body, "player_token": bo["player_token"]},
    )  # fmt: skip
    assert (again.status_code, again.json()["code"]) == (409, "already_seated"), again.text
    assert again.json()["game_id"] == first["game_id"]
    other = seek(server, "cy", **body, player_token=cy["player_token"])
    assert (other["game_id"], other["seat"]) == (first["game_id"], 1)
    # Concurrent seeks by one player: one seat at most, at a table of a bucket of their own.
    fresh = {"players": 2, "rated": True, "turn_seconds": 124}
    url, who = f"{server}/api/v1/lobby/seek", {"name": "cy", "player_token": cy["player_token"]}
    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(lambda _: send("POST", url, json={**who, **fresh}), range(6)))
    codes = sorted(a.status_code for a in answers)
    assert codes == [201] + [409] * 5, [a.text for a in answers]
    table = requests.get(f"{server}/api/v1/games/{answers[0].json()['game_id']}", timeout=10)
    assert [p["name"] for p in table.json()["players"]].count("cy") == 1


def test_a_seek_that_failed_after_its_claim_does_not_keep_its_player_out() -> None:
    # The app's Redis user may not RPUSH (a game's log): the seek claims its table, then fails
    # to make it, as when Redis goes away in between.
    with RedisServer() as redis_server:
        admin = redis.Redis.from_url(redis_server.url)
        app_url = user_without(redis_server, admin)
        with start_gunicorn(app_url, env=ENV, with_worker=False) as base:
            bo = new_player(base, "bo")
            body = {"name": "bo", "players": 2, "rated": True, "player_token": bo["player_token"]}
            url = f"{base}/api/v1/lobby/seek"
            user_without(redis_server, admin, "rpush")
            failed = requests.post(url, json=body, timeout=30)
            assert (failed.status_code, failed.json()["code"]) == (503, "storage_unavailable")
            # The table it claimed was never made: no later seek of its kind is sent there.
            assert admin.zcard(keys.seek_keys("standard|2|0|1")[0]) == 0
            user_without(redis_server, admin)
            again = requests.post(url, json=body, timeout=30)
            assert again.status_code == 201, again.text  # not 409 already_seated


def test_a_seek_the_rules_refuse_claims_no_table(server: str, redis_server: RedisServer) -> None:
    # The classic preset is for 2 to 10 players. The seek is refused before any seat is
    # claimed, so no table is left in its bucket for the next seek of its kind to wait for.
    # A table left in the bucket is one the next seek would be sent to and wait for: the
    # bucket is looked at after each refusal, rather than the next seek's time.
    body = {"name": "ann", "preset": "classic", "players": 11}
    admin = redis.Redis.from_url(redis_server.url)
    for _ in range(2):
        r = send("POST", f"{server}/api/v1/lobby/seek", json=body)
        assert (r.status_code, r.json()["code"]) == (422, "invalid_rules"), r.text
        assert admin.zcard(keys.seek_keys("classic|11|0|0")[0]) == 0, "a table left to wait for"


def listed_within(base: str, gid: str, listed: bool, seconds: float = 5) -> None:
    deadline = time.monotonic() + seconds
    while (gid in [t["game_id"] for t in lobby(base)]) != listed:
        assert time.monotonic() < deadline, f"{gid} listed: {not listed}"
        time.sleep(0.1)


def test_a_listing_redis_refused_is_made_once_redis_takes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The app's own Redis user may not touch the lobby's keys (ZADD, ZREM): the table is made
    # and filled, then its listing and its delisting are refused, as when Redis goes away in
    # between.
    with RedisServer() as redis_server:
        admin = redis.Redis.from_url(redis_server.url)
        app_url = user_without(redis_server, admin, keys=LOBBY_REFUSED)
        with start_gunicorn(app_url, env=ENV, with_worker=False) as base:
            answers = answered(monkeypatch)
            made = create(base, players=["ann", {"open": True}], public=True)
            gid = made["game_id"]
            time.sleep(0.5)
            assert admin.zscore(keys.LOBBY, gid) is None  # refused, so far
            user_without(redis_server, admin)
            listed_within(base, gid, True)
            user_without(redis_server, admin, keys=LOBBY_REFUSED)
            (seat,) = made["seats"][1:]
            joined = send(
                "POST",
                f"{base}/api/v1/games/{gid}/join",
                json={"invite": seat["invite"], "name": "bo"},
            )
            assert joined.status_code == 201, joined.text
            assert answers == [201, 201]  # each on its first try
            time.sleep(0.5)
            assert admin.zscore(keys.LOBBY, gid) is not None  # its delisting refused, so far
            user_without(redis_server, admin)
            deadline = time.monotonic() + 5
            while admin.zscore(keys.LOBBY, gid) is not None:  # the lobby hides it either way
                assert time.monotonic() < deadline, "the full table stays in the lobby's set"
                time.sleep(0.1)


def test_owed_listings_are_made_in_the_order_of_the_changes_that_owe_them() -> None:
    # Listed, filled, then reopened by its host while Redis refuses the lobby's keys: the
    # instance owes a listing, a delisting, and a listing again. Once Redis takes them, the
    # table is listed, as its last change left it. One worker: one process owes all three.
    with RedisServer() as redis_server:
        admin = redis.Redis.from_url(redis_server.url)
        app_url = user_without(redis_server, admin, keys=LOBBY_REFUSED)
        with start_gunicorn(app_url, workers=1, env=ENV, with_worker=False) as base:
            made = create(base, players=["ann", {"open": True}], public=True)
            gid, (seat,) = made["game_id"], made["seats"][1:]
            game = f"{base}/api/v1/games/{gid}"
            joined = send("POST", f"{game}/join", json={"invite": seat["invite"], "name": "bo"})
            assert joined.status_code == 201, joined.text
            reopened = send(
                "PUT", f"{game}/seats/1", json={"open": True}, headers=auth(made["host_token"])
            )
            assert reopened.status_code == 200, reopened.text
            time.sleep(1.5)  # each owed write refused once at least
            user_without(redis_server, admin)
            listed_within(base, gid, True)
            time.sleep(1.5)  # the owed writes' next turn, if one were left
            listed_within(base, gid, True)


def seek(base: str, name: str, **extra: Any) -> dict[str, Any]:
    body = {"name": name, "players": 4, **extra}
    r = send("POST", f"{base}/api/v1/lobby/seek", json=body)
    assert r.status_code == 201, r.text
    seated: dict[str, Any] = r.json()
    return seated


def test_concurrent_seeks_on_two_instances_seat_everyone_once(server: str, second: str) -> None:
    bases = [server, second]
    with ThreadPoolExecutor(16) as pool:
        seated = list(
            pool.map(
                lambda i: seek(bases[i % 2], f"s{i}", turn_seconds=0, preset="classic"), range(24)
            )
        )
    places = [(s["game_id"], s["seat"]) for s in seated]
    assert len(set(places)) == 24, "two seekers got one seat"
    by_table = collections.Counter(gid for gid, _ in places)
    assert sorted(by_table.values()) == [4] * 6, by_table
    assert sum(1 for s in seated if "table_token" in s) == 6, "one table token per table"
    for s in seated:
        view = requests.get(f"{server}/api/v1/games/{s['game_id']}", headers=auth(s["token"]))
        assert view.status_code == 200 and "hand" in view.json()
    deadline = time.monotonic() + 20
    for gid in by_table:
        while (
            requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["status"]
            == "waiting_deal"
        ):
            assert time.monotonic() < deadline, "a full seek table was not dealt"
            time.sleep(0.1)


def started(base: str, gid: str, seconds: float = 15) -> dict[str, Any]:
    """The game's view once its bots came and it was dealt."""
    deadline = time.monotonic() + seconds
    while True:
        view: dict[str, Any] = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
        if view["status"] != "waiting_deal":
            return view
        assert time.monotonic() < deadline, "the bots never came"
        time.sleep(0.2)


def test_open_seats_go_to_bots_after_the_wait_and_the_game_starts(server: str) -> None:
    first = seek(server, "lone", preset="tournament", fill_with_bots_after=1)
    other = seek(server, "late", preset="tournament", fill_with_bots_after=1)
    assert other["game_id"] == first["game_id"] and other["seat"] == 1
    view = started(server, first["game_id"])
    assert [p["bot"] for p in view["players"]] == [None, None, "planner", "planner"]
    assert first["game_id"] not in [t["game_id"] for t in lobby(server)]
    again = seek(server, "next", preset="tournament", fill_with_bots_after=1)
    assert again["game_id"] != first["game_id"] and again["seat"] == 0


def test_seeks_share_a_table_whatever_their_bot_fill_which_comes_at_the_earliest_asked(
    server: str,
) -> None:
    # A table fits a seek by preset, player count, turn_seconds and rated, not by its bot fill.
    patient = seek(server, "patient", players=3, turn_seconds=4321)
    hasty = seek(server, "hasty", players=3, turn_seconds=4321, fill_with_bots_after=1)
    assert (hasty["game_id"], hasty["seat"]) == (patient["game_id"], 1)
    view = started(server, patient["game_id"])
    assert [p["bot"] for p in view["players"]] == [None, None, "planner"]


def test_a_table_its_seek_filled_with_bots_at_once_takes_no_more_seekers(server: str) -> None:
    # Eight seats, seven of them bots the moment the table is made: a later seek of its kind
    # sits at a table of its own, not after trying each of the bots' seats in turn.
    full = seek(server, "now", players=8, turn_seconds=4322, fill_with_bots_after=0)
    view = requests.get(f"{server}/api/v1/games/{full['game_id']}", timeout=10).json()
    assert [p["bot"] for p in view["players"]] == [None] + ["planner"] * 7
    later = send(
        "POST",
        f"{server}/api/v1/lobby/seek",
        json={"name": "x", "players": 8, "turn_seconds": 4322},
    )
    assert later.status_code == 201, later.text
    assert later.json()["game_id"] != full["game_id"] and later.json()["seat"] == 0


def test_a_seat_a_bot_filled_is_named_as_its_bot_in_the_view_and_the_replay(
    server: str, redis_server: RedisServer
) -> None:
    """A seat is named for who sits there: a bot that took an open seat of a seek table is
    named as the web table names the bots it seats, with the number a person reads for the
    seat (the web table's "Seat 3" is seat 2), not "open seat N"; the game's stored log,
    replayed (as the history and the streams replay it), names it the same."""
    made = seek(server, "now", players=3, turn_seconds=4323, fill_with_bots_after=0)
    gid = made["game_id"]
    view = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()
    assert [p["name"] for p in view["players"]] == ["now", "planner 2", "planner 3"]
    assert [p["bot"] for p in view["players"]] == [None, "planner", "planner"]
    replayer = Replayer()
    for raw in redis.Redis.from_url(redis_server.url).lrange(keys.log_key(gid), 0, -1):
        replayer.feed(raw)
    assert replayer.state is not None
    assert replayer.state.players == ["now", "planner 2", "planner 3"]


def test_open_seats_are_named_with_the_number_a_person_reads_for_them(server: str) -> None:
    """An open seat, at a created table or at a seek's, reads "open seat N" with N the seat's
    number on the web table and in the docs (seat index + 1), as its invite link says."""
    made = create(server, players=["ann", {"open": True}, "cy"])
    assert [s["name"] for s in made["seats"]] == ["ann", "open seat 2", "cy"]
    assert view_names(server, made["game_id"]) == ["ann", "open seat 2", "cy"]
    sought = seek(server, "sol", players=3, turn_seconds=4324)
    assert view_names(server, sought["game_id"]) == ["sol", "open seat 2", "open seat 3"]


def test_a_hosts_seat_changes_name_seats_alike_in_the_view_and_the_replay(
    server: str, redis_server: RedisServer
) -> None:
    """A join, a reopening and a bot's takeover by the host: after each, the stored log,
    replayed, names every seat as the view does (the host's changes keep the seat's name)."""
    made = create(server, players=["ann", {"open": True}, "cy"])
    gid, host = made["game_id"], auth(made["host_token"])
    game = f"{server}/api/v1/games/{gid}"
    steps = [
        ("POST", f"{game}/join", {"invite": made["seats"][1]["invite"], "name": "bo"}, {}),
        ("PUT", f"{game}/seats/1", {"open": True}, host),
        ("PUT", f"{game}/seats/2", {"bot": "random"}, host),
    ]
    for method, url, body, headers in steps:
        assert send(method, url, json=body, headers=headers).ok
        assert replayed_names(redis_server.url, gid) == view_names(server, gid), url
    assert view_names(server, gid) == ["ann", "bo", "cy"]


def test_an_open_seat_the_host_hands_to_a_bot_is_named_for_the_bot(
    server: str, redis_server: RedisServer
) -> None:
    """A bot the host seats in a seat still named "open seat 3" is named as the server names
    the bots it seats ("random 3"), since "open seat 3" would tell of nobody; a seat a person
    named keeps that name under its bot. The replay names them as the view does."""
    made = create(server, players=["ann", "bo", {"open": True}])
    gid, host = made["game_id"], auth(made["host_token"])
    game = f"{server}/api/v1/games/{gid}"
    for seat in (1, 2):
        assert send("PUT", f"{game}/seats/{seat}", json={"bot": "random"}, headers=host).ok
    assert view_names(server, gid) == ["ann", "bo", "random 3"]
    assert replayed_names(redis_server.url, gid) == ["ann", "bo", "random 3"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"name": "x", "players": 1}, "validation_failed"),
        ({"name": "x", "players": 15}, "validation_failed"),
        ({"name": "", "players": 4}, "validation_failed"),
        ({"name": "x", "players": 4, "preset": "chess"}, "validation_failed"),
        ({"name": "x", "players": 4, "fill_with_bots_after": -1}, "validation_failed"),
        ({"name": "x", "players": 4, "rated": True}, "unrated_seat"),
        ({"name": "x", "players": "4"}, "validation_failed"),
        ({"players": 4}, "validation_failed"),
    ],
)
def test_a_bad_seek_is_refused_and_seats_nobody(
    server: str, body: dict[str, Any], code: str
) -> None:
    before = lobby(server)
    r = send("POST", f"{server}/api/v1/lobby/seek", json=body)
    assert (r.status_code, r.json()["code"]) == (422, code), r.text
    assert lobby(server) == before


def test_a_seek_retried_with_its_idempotency_key_gets_its_first_seat(server: str) -> None:
    # The first answer is lost: the retry must bring that seat, not take a second one.
    body = {"name": "ann", "players": 4, "turn_seconds": 597}  # a bucket of its own
    key = {"Idempotency-Key": "seek-5b0e9c3a-7d21-4f6e-8a90-1c2b3d4e5f60"}
    url = f"{server}/api/v1/lobby/seek"
    first = send("POST", url, json=body, headers=key)
    assert first.status_code == 201, first.text
    again = send("POST", url, json=body, headers=key)
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    game = requests.get(f"{server}/api/v1/games/{first.json()['game_id']}", timeout=10).json()
    assert [p["open"] for p in game["players"]] == [False, True, True, True]
    other = send("POST", url, json=body, headers={"Idempotency-Key": "seek-another-key-000000001"})
    assert other.status_code == 201, other.text
    assert (other.json()["game_id"], other.json()["seat"]) == (first.json()["game_id"], 1)
