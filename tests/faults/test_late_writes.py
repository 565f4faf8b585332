"""A change that reaches Redis after its request gave up on it: the request answers 503 (its
compare-and-set timed out), Redis runs it a moment later, and the game must go on as after any
stored change. Real gunicorn, worker and Redis; between gunicorn and Redis, a link that holds
the compare-and-set back until gunicorn closed the connection (tests/faults/late_link.py), as a
slow or briefly hung Redis does."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from devstack.worker import worker
from service.store import keys, scripts
from tests.eventually import eventually
from tests.faults.late_link import LateLink
from tests.live.helpers import auth, create, play_turn, view
from tests.players.helpers import new_player, replayed_names, view_names
from tests.players.receiver import receiver

pytestmark = pytest.mark.slow

ENV = {"MIN_TURN_SECONDS": "1", "LOG_LEVEL": "warning"}


@pytest.fixture()
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def test_a_change_stored_after_its_request_timed_out_still_hands_its_game_to_the_worker(
    redis_server: RedisServer,
) -> None:
    """The host hands the last person's seat to a bot: the rest of the game is the worker's.
    The request's compare-and-set reaches Redis only after the request answered 503, so the
    request never queued the game. Before: the change was stored and nobody ever played the
    bots' game (it was still at the stored version a minute later)."""
    client = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
        worker({**ENV, "REDIS_URL": redis_server.url}),
    ):
        players: list[Any] = ["ann", *({"name": f"b{n}", "bot": "hard"} for n in range(3))]
        game = create(base, players=players, auto_deal=True, seed=7)
        gid = game["game_id"]
        eventually(lambda: view(base, gid)["turn"] == 0, 60, "ann's turn never came")
        before = view(base, gid)["version"]
        link.hold_next(client.script_load(scripts.COMPARE_AND_SET).encode())
        url = f"{base}/api/v1/games/{gid}/seats/0"
        r = requests.put(url, json={"bot": "hard"}, headers=auth(game["host_token"]), timeout=30)
        assert r.status_code == 503, r.text
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        eventually(lambda: view(base, gid)["version"] > before, 10, "the late change never ran")
        stored = view(base, gid)["version"]
        eventually(
            lambda: view(base, gid)["version"] > stored,
            30,
            f"the bots' game stays at version {stored}: nobody queued it",
        )


def test_a_change_stored_seconds_after_the_first_look_still_hands_its_game_to_the_worker(
    redis_server: RedisServer,
) -> None:
    """As above, but the compare-and-set reaches Redis 3 s after its request gave up: after the
    owed queueing made about a second after the 503, which found nothing due then. The game
    must be queued again once the change is stored. Before, that was the only look: the bots'
    game waited for the worker's sweep (kept out of this test's minute)."""
    client = redis.Redis.from_url(redis_server.url)
    slow_sweep = {**ENV, "WORKER_SWEEP_MS": "600000", "WORKER_SWEEP_GRACE_MS": "600000"}
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
        worker({**slow_sweep, "REDIS_URL": redis_server.url}),
    ):
        players: list[Any] = ["ann", *({"name": f"b{n}", "bot": "hard"} for n in range(3))]
        game = create(base, players=players, auto_deal=True, seed=7)
        gid = game["game_id"]
        eventually(lambda: view(base, gid)["turn"] == 0, 60, "ann's turn never came")
        before = view(base, gid)["version"]
        link.hold_next(client.script_load(scripts.COMPARE_AND_SET).encode(), late=3.0)
        url = f"{base}/api/v1/games/{gid}/seats/0"
        r = requests.put(url, json={"bot": "hard"}, headers=auth(game["host_token"]), timeout=30)
        assert r.status_code == 503, r.text
        assert not link.delivered.wait(2.0), "delivered before the first owed look"
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        eventually(lambda: view(base, gid)["version"] > before, 10, "the late change never ran")
        stored = view(base, gid)["version"]
        eventually(
            lambda: view(base, gid)["version"] > stored,
            60,
            f"the bots' game stays at version {stored}: nobody queued it",
        )


def seek(base: str, name: str) -> dict[str, Any]:
    r = requests.post(f"{base}/api/v1/lobby/seek", json={"name": name, "players": 3}, timeout=30)
    assert r.status_code == 201, r.text
    seated: dict[str, Any] = r.json()
    return seated


def test_a_seat_a_failed_seek_claimed_goes_to_the_next_seek(redis_server: RedisServer) -> None:
    """The third seek claims the last seat of the first one's table, then its compare-and-set
    is lost (dropped with its connection: the seat stays open) and it answers 503. The next
    seek must be given that seat. Before, the table had left its bucket with its last claim:
    the next seek made a table of its own, and the first two seekers waited for ever."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        first, second = seek(base, "ann"), seek(base, "bo")
        assert (second["game_id"], second["seat"]) == (first["game_id"], 1)
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode(), deliver=False)
        url = f"{base}/api/v1/lobby/seek"
        failed = requests.post(url, json={"name": "cy", "players": 3}, timeout=30)
        assert (failed.status_code, failed.json()["code"]) == (503, "storage_unavailable")
        assert link.held.is_set()
        third = seek(base, "di")
        assert (third["game_id"], third["seat"]) == (first["game_id"], 2)
        table = view(base, first["game_id"])
        assert [p["name"] for p in table["players"]] == ["ann", "bo", "di"]
        # Full at last: out of its bucket, its claims forgotten; the next seek starts anew.
        fourth = seek(base, "ed")
        assert fourth["game_id"] != first["game_id"] and fourth["seat"] == 0
        assert admin.hget(keys.seek_keys("standard|3|0|0")[1], first["game_id"]) is None


def test_a_change_stored_after_its_request_timed_out_still_sends_its_webhooks(
    redis_server: RedisServer,
) -> None:
    """The host hands bo's seat to a bot, which plays bo's turn in the same change and hands
    the turn to ann, whose webhook asks for ``your_turn``. The change's compare-and-set
    reaches Redis only after its request answered 503: the change is stored, and ann must
    still be told. Before, she never was (no clock: the game waits on her)."""
    client = redis.Redis.from_url(redis_server.url)
    env = {**ENV, "WEBHOOK_ALLOW_HOSTS": "127.0.0.1", "WEBHOOK_RETRY_MS": "200"}
    with (
        receiver() as hooks,
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=env, with_worker=False) as base,
        worker({**env, "REDIS_URL": redis_server.url}),
    ):
        ann = new_player(base, "ann")
        made = requests.post(
            f"{base}/api/v1/players/{ann['player_id']}/webhooks",
            json={"url": hooks.url + "/turns", "events": ["your_turn"]},
            headers=auth(ann["player_token"]),
            timeout=10,
        )
        assert made.status_code == 201, made.text
        players = [{"name": "ann", "player_token": ann["player_token"]}, "bo"]
        game = create(base, players=players, auto_deal=True, seed=11)
        gid, rng = game["game_id"], random.Random(11)
        while view(base, gid)["turn"] == 0:  # ann's first turn, which may take several moves
            play_turn(base, gid, game["seats"][0]["token"], rng)
        before = view(base, gid)["version"]
        link.hold_next(client.script_load(scripts.COMPARE_AND_SET).encode())
        # bo's seat goes to a bot, which plays bo's turn in the same change: ann's turn next.
        url = f"{base}/api/v1/games/{gid}/seats/1"
        r = requests.put(url, json={"bot": "planner"}, headers=auth(game["host_token"]), timeout=30)
        assert r.status_code == 503, r.text
        eventually(lambda: view(base, gid)["version"] > before, 10, "the late change never ran")
        stored = view(base, gid)
        assert (stored["status"], stored["turn"]) == ("in_round", 0)
        deadline = time.monotonic() + 15
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, "ann was never told it is her turn"
            got = json.loads(hooks.next(timeout=remaining).body)
            if got["data"]["version"] == stored["version"]:
                break


@pytest.mark.parametrize("players", [4, 3], ids=["open", "filled"])
def test_a_seat_taken_by_a_seek_answered_503_opens_again_for_its_retry(
    redis_server: RedisServer, players: int
) -> None:
    """cy's seek is answered 503, but its compare-and-set reaches Redis late: cy sits at seat 2
    under a token nobody was given (and, at a 3-seat table, fills it). The seat must open
    again, the table be first in its bucket, and cy's retry be seated there, once, with a
    token that works: the 503 stands for a seek that changed nothing. Before, the seat stayed
    taken for ever, cy's retry was told 409 already_seated (with no token), and a table it
    filled started with a seat nobody could play."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        cy = new_player(base, "cy")
        url, size = f"{base}/api/v1/lobby/seek", {"players": players}
        first = requests.post(url, json={"name": "ann", **size}, timeout=30).json()
        requests.post(url, json={"name": "bo", **size}, timeout=30).raise_for_status()
        gid = first["game_id"]
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode())
        body = {"name": "cy", "player_token": cy["player_token"], **size}
        late = requests.post(url, json=body, timeout=30)
        assert late.status_code == 503, late.text
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        eventually(lambda: view(base, gid)["players"][2]["open"], 10, "the seat stays taken")
        again = requests.post(url, json=body, timeout=30)
        assert again.status_code == 201, again.text
        seated = again.json()
        assert (seated["game_id"], seated["seat"]) == (gid, 2)
        names = [p["name"] for p in view(base, gid)["players"]]
        assert names.count("cy") == 1, names
        mine = requests.get(f"{base}/api/v1/games/{gid}", headers=auth(seated["token"]), timeout=10)
        assert mine.status_code == 200 and "hand" in mine.json(), mine.text


def test_a_seat_a_seek_answered_503_took_is_named_alike_in_the_view_and_the_replay(
    redis_server: RedisServer,
) -> None:
    """cy's late seek takes seat 2, which opens again named "open seat 3" (the number a person
    reads for it) in the stored state; the stored log, replayed (as the history and the
    streams replay it), names it the same, not "cy"."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        url, size = f"{base}/api/v1/lobby/seek", {"players": 4}
        gid = requests.post(url, json={"name": "ann", **size}, timeout=30).json()["game_id"]
        requests.post(url, json={"name": "bo", **size}, timeout=30).raise_for_status()
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode())
        late = requests.post(url, json={"name": "cy", **size}, timeout=30)
        assert late.status_code == 503, late.text
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        eventually(lambda: view(base, gid)["players"][2]["open"], 10, "the seat stays taken")
        assert view_names(base, gid) == ["ann", "bo", "open seat 3", "open seat 4"]
        assert replayed_names(redis_server.url, gid) == view_names(base, gid)


def test_a_rated_seat_taken_by_a_seek_answered_503_after_the_deal_goes_to_a_bot(
    redis_server: RedisServer,
) -> None:
    """As above at a rated table: cy's late seek fills it, and the same change deals. A rated
    game's seat reopens only before its first deal (409 rated_game_dealt to its host), so the
    seat nobody holds goes to the bot a seek table fills with, and the full table stays out of
    its bucket: cy's retry starts a table of its own. Before, the seat was reopened in the
    dealt game and cy's retry was seated there, mid-round."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        url = f"{base}/api/v1/lobby/seek"

        def body(name: str) -> dict[str, Any]:
            token = new_player(base, name)["player_token"]
            return {"name": name, "player_token": token, "players": 3, "rated": True}

        first = requests.post(url, json=body("ann"), timeout=30).json()
        requests.post(url, json=body("bo"), timeout=30).raise_for_status()
        gid, cy = first["game_id"], body("cy")
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode())
        late = requests.post(url, json=cy, timeout=30)
        assert late.status_code == 503, late.text
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        eventually(lambda: view(base, gid)["players"][2]["name"] != "cy", 10, "the seat stays cy's")
        table = view(base, gid)
        assert table["status"] == "in_round", table["status"]
        assert [(p["open"], p["bot"]) for p in table["players"]] == [
            (False, None),
            (False, None),
            (False, "planner"),
        ]
        assert table["players"][2]["name"] == "planner 3"  # named as a seek's fill names a bot
        assert replayed_names(redis_server.url, gid) == view_names(base, gid)
        again = requests.post(url, json=cy, timeout=30)
        assert again.status_code == 201, again.text
        assert again.json()["game_id"] != gid and again.json()["seat"] == 0


@pytest.mark.parametrize("stored", [True, False], ids=["stored", "lost"])
def test_a_table_filled_by_a_change_stored_after_its_request_timed_out_leaves_the_lobby(
    redis_server: RedisServer, stored: bool
) -> None:
    """bo takes the last open seat of a public table; the join's compare-and-set reaches Redis
    only after its request answered 503 (or never). Stored, the full table must leave the
    lobby. Before, it stayed listed until a listing or a seek met it. Lost, the table still has
    its seat open and must stay listed."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        game = create(base, players=["ann", {"open": True}], public=True)
        gid = game["game_id"]
        assert admin.zscore(keys.LOBBY, gid) is not None
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode(), deliver=stored)
        url = f"{base}/api/v1/games/{gid}/join"
        body = {"invite": game["seats"][1]["invite"], "name": "bo"}
        r = requests.post(url, json=body, timeout=30)
        assert (r.status_code, r.json()["code"]) == (503, "storage_unavailable"), r.text
        assert link.held.is_set()
        if stored:
            eventually(lambda: view(base, gid)["players"][1]["name"] == "bo", 10, "never ran")
            eventually(lambda: admin.zscore(keys.LOBBY, gid) is None, 10, "a full table listed")
        else:
            time.sleep(3)  # the owed look at the log is made within a second
            assert view(base, gid)["players"][1]["open"]
            assert admin.zscore(keys.LOBBY, gid) is not None, "an open table left the lobby"


def test_a_table_made_by_a_seek_answered_503_opens_its_seat_for_the_retry(
    redis_server: RedisServer,
) -> None:
    """ann's seek makes a new table, but its creation reaches Redis only after the request
    answered 503: the table exists, ann in seat 0 under a token nobody was given, and the
    failed seek took the table out of its bucket. The seat must open again and the table come
    back to its bucket, so ann's retry is seated there. Before, the table waited for nobody,
    listed nowhere, and the retry made a second one."""
    admin = redis.Redis.from_url(redis_server.url)
    order = keys.seek_keys("standard|3|0|0")[0]
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        url, body = f"{base}/api/v1/lobby/seek", {"name": "ann", "players": 3}
        link.hold_next(admin.script_load(scripts.CREATE_GAME).encode())
        late = requests.post(url, json=body, timeout=30)
        assert (late.status_code, late.json()["code"]) == (503, "storage_unavailable")
        eventually(link.delivered.is_set, 10, "the held creation was never delivered")
        eventually(lambda: admin.zcard(order) == 1, 10, "the table made late is in no bucket")
        (gid,) = [raw.decode() for raw in admin.zrange(order, 0, -1)]
        assert view(base, gid)["players"][0]["open"]
        again = requests.post(url, json=body, timeout=30)
        assert again.status_code == 201, again.text
        assert (again.json()["game_id"], again.json()["seat"]) == (gid, 0)
        assert [p["name"] for p in view(base, gid)["players"]].count("ann") == 1


def test_a_change_stored_seconds_after_the_first_look_still_delists_its_table(
    redis_server: RedisServer,
) -> None:
    """As above, but the join's compare-and-set reaches Redis 3 s after its request gave up:
    after the owed look made about a second after the 503, which finds the log short of it.
    The look must be made again. Before, that one look was the only one: the full table stayed
    listed."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        game = create(base, players=["ann", {"open": True}], public=True)
        gid = game["game_id"]
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode(), late=3.0)
        url = f"{base}/api/v1/games/{gid}/join"
        body = {"invite": game["seats"][1]["invite"], "name": "bo"}
        r = requests.post(url, json=body, timeout=30)
        assert (r.status_code, r.json()["code"]) == (503, "storage_unavailable"), r.text
        assert not link.delivered.wait(2.0), "delivered before the first owed look"
        assert admin.zscore(keys.LOBBY, gid) is not None
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        assert view(base, gid)["players"][1]["name"] == "bo"
        eventually(lambda: admin.zscore(keys.LOBBY, gid) is None, 20, "a full table listed")


@pytest.mark.parametrize("late", [0.0, 3.0], ids=["at-once", "after-the-first-look"])
def test_a_seat_reopened_by_a_change_stored_after_its_request_timed_out_is_listed_again(
    redis_server: RedisServer, late: float
) -> None:
    """bo fills a public table, which leaves the lobby; the host reopens bo's seat, and that
    change's compare-and-set reaches Redis only after its request answered 503 (at once, or
    3 s later). The table has an open seat again and must be listed again. Before, only a
    table such a change filled was looked after: the reopened one stayed out of the lobby."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        game = create(base, players=["ann", {"open": True}], public=True)
        gid = game["game_id"]
        body = {"invite": game["seats"][1]["invite"], "name": "bo"}
        joined = requests.post(f"{base}/api/v1/games/{gid}/join", json=body, timeout=30)
        assert joined.status_code == 201, joined.text
        eventually(lambda: admin.zscore(keys.LOBBY, gid) is None, 10, "a full table listed")
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode(), late=late)
        url = f"{base}/api/v1/games/{gid}/seats/1"
        r = requests.put(url, json={"open": True}, headers=auth(game["host_token"]), timeout=30)
        assert (r.status_code, r.json()["code"]) == (503, "storage_unavailable"), r.text
        eventually(link.delivered.is_set, 10, "the held compare-and-set was never delivered")
        assert view(base, gid)["players"][1]["open"], "the late reopening never ran"
        eventually(
            lambda: admin.zscore(keys.LOBBY, gid) is not None, 20, "a reopened table unlisted"
        )


def test_a_table_filled_by_a_late_change_and_reopened_since_stays_listed(
    redis_server: RedisServer,
) -> None:
    """bo's join fills the public table, but its compare-and-set reaches Redis 5.5 s after its
    request answered 503: after the owed looks at about 1, 2 and 4 s, before the one at about
    8 s. Meanwhile the host reopens bo's seat, which lists the table again. The look that then
    finds the join stored must list the table as it is seated now (open), not as the join left
    it (full): an open table taken out of the lobby stays out until its seats change again."""
    admin = redis.Redis.from_url(redis_server.url)
    with (
        LateLink(redis_server.port) as link,
        start_gunicorn(link.url, env=ENV, with_worker=False) as base,
    ):
        game = create(base, players=["ann", {"open": True}], public=True)
        gid = game["game_id"]
        link.hold_next(admin.script_load(scripts.COMPARE_AND_SET).encode(), late=5.5)
        body = {"invite": game["seats"][1]["invite"], "name": "bo"}
        r = requests.post(f"{base}/api/v1/games/{gid}/join", json=body, timeout=30)
        assert (r.status_code, r.json()["code"]) == (503, "storage_unavailable"), r.text
        answered = time.monotonic()
        eventually(link.delivered.is_set, 15, "the held compare-and-set was never delivered")
        assert view(base, gid)["players"][1]["name"] == "bo"
        url = f"{base}/api/v1/games/{gid}/seats/1"
        reopened = requests.put(
            url, json={"open": True}, headers=auth(game["host_token"]), timeout=30
        )
        assert reopened.status_code == 200, reopened.text
        assert view(base, gid)["players"][1]["open"]
        assert admin.zscore(keys.LOBBY, gid) is not None, "the reopened table was not listed"
        time.sleep(max(0.0, answered + 12 - time.monotonic()))  # the look at about 8 s is made
        assert view(base, gid)["players"][1]["open"]
        assert admin.zscore(keys.LOBBY, gid) is not None, "an open table taken out of the lobby"
