"""Rematch: the first call makes the next game (same rules, table options, seat order, bot
seats), every watcher sees a rematch entry, each seat claims its own place (201, then 200), and a
person seat not claimed within the claim window becomes open."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.eventually import eventually
from tests.live.helpers import SSE, auth, create, send, sse_entries
from tests.players.conftest import ENV
from tests.players.helpers import play_out, replayed_names, view_names

CLAIM_SECONDS = 2  # the stack's REMATCH_CLAIM_SECONDS
LINGER_SECONDS = 3  # its REMATCH_SECONDS


def finished(base: str, **extra: Any) -> dict[str, Any]:
    players = ["ann", "bo", {"name": "cpu", "bot": "greedy"}]
    game = create(base, players=players, options={"rounds": 1, "set": 6, "hand_size": 5}, **extra)
    play_out(base, game, seed=3)
    return game


def ask(base: str, gid: str, token: str | None) -> requests.Response:
    return send("POST", f"{base}/api/v1/games/{gid}/rematch", headers=auth(token))


def test_every_seat_claims_its_place_and_watchers_see_the_rematch(server: str) -> None:
    game = finished(server, auto_deal=False)
    gid, (ann, bo) = game["game_id"], [s["token"] for s in game["seats"][:2]]
    final = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    got: list[dict[str, Any]] = []
    watcher = threading.Thread(target=lambda: got.extend(watch(server, gid, final)))
    watcher.start()
    time.sleep(0.5)
    first = ask(server, gid, ann)
    assert first.status_code == 201, first.text
    new = first.json()["game_id"]
    assert first.json() == {"game_id": new, "seat": 0, "token": ann}
    again = ask(server, gid, ann)
    assert (again.status_code, again.json()) == (200, first.json())
    second = ask(server, gid, bo)
    assert (second.status_code, second.json()) == (201, {"game_id": new, "seat": 1, "token": bo})
    table = ask(server, gid, game["table_token"])
    assert table.status_code == 201 and table.json()["table_token"] == game["table_token"]
    watcher.join(10)
    assert [e["action"] for e in got] == [{"action": "rematch", "game_id": new}]
    old = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()
    view = requests.get(f"{server}/api/v1/games/{new}", headers=auth(ann), timeout=10).json()
    assert view["rules"] == old["rules"] and "hand" in view
    assert [p["name"] for p in view["players"]] == ["ann", "bo", "cpu"]
    assert [p["bot"] for p in view["players"]] == [None, None, "greedy"]
    time.sleep(CLAIM_SECONDS + 1.5)  # past the claim window: claimed seats stay
    after = requests.get(f"{server}/api/v1/games/{new}", timeout=10).json()
    assert [p["open"] for p in after["players"]] == [False, False, False]


def watch(base: str, gid: str, final: int) -> list[dict[str, Any]]:
    """A reader resuming at the finished game's last entry: it waits for the rematch."""
    headers = {"Accept": SSE, "Last-Event-ID": str(final)}
    with requests.get(
        f"{base}/api/v1/games/{gid}/events", headers=headers, stream=True, timeout=30
    ) as r:
        assert r.status_code == 200, r.status_code
        return list(sse_entries(r))


def test_a_seat_nobody_claims_becomes_open(server: str) -> None:
    game = finished(server)
    gid, (ann, bo) = game["game_id"], [s["token"] for s in game["seats"][:2]]
    new = ask(server, gid, ann).json()["game_id"]
    deadline = time.monotonic() + CLAIM_SECONDS + 10
    while True:
        view = requests.get(f"{server}/api/v1/games/{new}", timeout=10).json()
        if view["players"][1]["open"] or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert [p["open"] for p in view["players"]] == [False, True, False]
    refused = requests.get(f"{server}/api/v1/games/{new}", headers=auth(bo), timeout=10)
    assert refused.status_code == 401
    assert requests.get(f"{server}/api/v1/games/{new}", headers=auth(ann), timeout=10).ok
    # Asked now, bo's place is not given: its token would not work there.
    late = ask(server, gid, bo)
    assert (late.status_code, late.json()["code"]) == (409, "rematch_closed"), late.text
    assert ask(server, gid, ann).status_code == 200  # claimed in time: still its place


def test_a_seat_nobody_claims_is_named_alike_in_the_view_and_the_replay(
    server: str, redis_server: RedisServer
) -> None:
    """The seat opened for want of a claim reads as open, "open seat 2" (the web table's
    "Seat 2"), not as bo, whose place it is no longer; the stored log, replayed (as the
    history and the streams replay it), names it the same."""
    game = finished(server)
    new = ask(server, game["game_id"], game["seats"][0]["token"]).json()["game_id"]
    eventually(
        lambda: requests.get(f"{server}/api/v1/games/{new}", timeout=10).json()["players"][1][
            "open"
        ],
        CLAIM_SECONDS + 10,
        "bo's seat never opened",
    )
    assert view_names(server, new) == ["ann", "open seat 2", "cpu"]
    assert replayed_names(redis_server.url, new) == view_names(server, new)


def status_within(base: str, gid: str, wanted: str, seconds: float) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while True:
        view: dict[str, Any] = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
        if view["status"] == wanted or time.monotonic() > deadline:
            return view
        time.sleep(0.2)


def test_a_dealing_rematch_deals_once_every_seat_has_claimed(redis_server: RedisServer) -> None:
    # A long claim window: the deal must come from the claims, not from the window's end.
    env = {**ENV, "REMATCH_CLAIM_SECONDS": "60"}
    with start_gunicorn(redis_server.url, env=env) as base:
        game = finished(base, auto_deal=True)
        gid, (ann, bo) = game["game_id"], [s["token"] for s in game["seats"][:2]]
        new = ask(base, gid, ann).json()["game_id"]
        time.sleep(1.5)  # bo has not claimed: no deal, which would hold bo's turns
        assert requests.get(f"{base}/api/v1/games/{new}", timeout=10).json()["status"] == (
            "waiting_deal"
        )
        assert ask(base, gid, bo).status_code == 201
        assert status_within(base, new, "in_round", 10)["status"] == "in_round"


def test_a_dealing_rematch_a_seat_did_not_claim_waits_for_it_to_be_taken(server: str) -> None:
    game = finished(server, auto_deal=True)
    gid, ann = game["game_id"], game["seats"][0]["token"]
    new = ask(server, gid, ann).json()["game_id"]
    time.sleep(CLAIM_SECONDS + 2)  # bo's seat is open now, no round under way
    view = requests.get(f"{server}/api/v1/games/{new}", timeout=10).json()
    assert view["status"] == "waiting_deal"
    assert [p["open"] for p in view["players"]] == [False, True, False]


def test_a_rematch_asked_with_a_stale_if_match_makes_nothing(server: str) -> None:
    game = finished(server)
    gid, ann = game["game_id"], game["seats"][0]["token"]
    over = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    url = f"{server}/api/v1/games/{gid}/rematch"
    stale = send("POST", url, headers={**auth(ann), "If-Match": f'"{over - 1}"'})
    assert (stale.status_code, stale.json()["code"]) == (412, "stale_version"), stale.text
    assert requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"] == over
    made = send("POST", url, headers={**auth(ann), "If-Match": f'"{over}"'})
    assert made.status_code == 201, made.text
    assert requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"] == over + 1


def test_a_long_poll_on_a_finished_game_waits_for_its_rematch(server: str) -> None:
    game = finished(server)
    gid, ann = game["game_id"], game["seats"][0]["token"]
    over = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    url = f"{server}/api/v1/games/{gid}/events"
    asked = threading.Timer(1.0, lambda: ask(server, gid, ann))
    asked.start()
    # Each poll may wait 60 s, twice the read timeout: one that is not answered before its
    # wait runs out fails the test (a bound on a hang, not a speed).
    polled = requests.get(url, params={"after": over, "wait": 60}, timeout=30).json()
    asked.join()
    assert [e["action"]["action"] for e in polled["entries"]] == ["rematch"], polled
    # Once the rematch came nothing more will: a poll after it is answered, empty, not held.
    again = requests.get(url, params={"after": over + 1, "wait": 60}, timeout=30).json()
    assert again["entries"] == []


def test_claims_of_a_finished_game_gone_since_open_no_seat(
    server: str, redis_server: RedisServer
) -> None:
    game = finished(server)
    gid, (ann, bo) = game["game_id"], [s["token"] for s in game["seats"][:2]]
    new = ask(server, gid, ann).json()["game_id"]
    assert ask(server, gid, bo).status_code == 201
    time.sleep(CLAIM_SECONDS + 1)
    redis.Redis.from_url(redis_server.url).delete(f"mt:{{{gid}}}")  # it expired
    dealt = send("POST", f"{server}/api/v1/games/{new}/deal", headers=auth(game["table_token"]))
    assert dealt.status_code == 200, dealt.text
    time.sleep(2)  # the worker looks at the new game's claim window meanwhile
    view = requests.get(f"{server}/api/v1/games/{new}", headers=auth(ann), timeout=10)
    assert view.status_code == 200, view.text
    assert [p["open"] for p in view.json()["players"]] == [False, False, False]


def test_two_first_calls_at_once_make_one_rematch(server: str) -> None:
    game = finished(server)
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"][:2]]
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda t: ask(server, gid, t), tokens))
    assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
    assert len({a.json()["game_id"] for a in answers}) == 1
    log = requests.get(f"{server}/api/v1/games/{gid}/events", timeout=10).json()["entries"]
    assert [e["action"]["action"] for e in log].count("rematch") == 1


def test_no_rematch_before_the_end_nor_without_a_seat(server: str) -> None:
    game = create(server, players=["ann", "bo"])
    gid = game["game_id"]
    early = ask(server, gid, game["seats"][0]["token"])
    assert (early.status_code, early.json()["code"]) == (409, "game_not_over")
    assert ask(server, gid, None).json()["code"] == "missing_token"
    done = finished(server)
    host = ask(server, done["game_id"], done["host_token"])
    assert (host.status_code, host.json()["code"]) == (403, "not_a_seat")
    stranger = ask(server, done["game_id"], "x" * 43)
    assert (stranger.status_code, stranger.json()["code"]) == (401, "invalid_token")


def test_a_finished_games_seats_no_longer_move(server: str) -> None:
    # The rematch holds the seats' tokens as they were when it was made: a seat moved in the
    # finished game afterwards would leave its old device acting in the rematch, and its new
    # one shut out. A ticket issued before the end is refused at its claim too.
    game = create(server, players=["ann", "bo"], options={"rounds": 1, "set": 6, "hand_size": 5})
    gid, ann = game["game_id"], game["seats"][0]["token"]
    early = send("POST", f"{server}/api/v1/games/{gid}/transfers", headers=auth(ann))
    assert early.status_code == 201, early.text
    play_out(server, game, seed=3)
    new = ask(server, gid, ann).json()["game_id"]
    version = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    late = send("POST", f"{server}/api/v1/games/{gid}/transfers", headers=auth(ann))
    assert (late.status_code, late.json()["code"]) == (409, "game_over"), late.text
    url, ticket = f"{server}/api/v1/games/{gid}/transfers/claim", early.json()["ticket"]
    claim = send("POST", url, json={"ticket": ticket})
    assert (claim.status_code, claim.json()["code"]) == (409, "game_over"), claim.text
    assert requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"] == version
    for where in (gid, new):
        seen = requests.get(f"{server}/api/v1/games/{where}", headers=auth(ann), timeout=10)
        assert seen.status_code == 200, seen.text


def test_a_finished_games_open_seat_is_no_longer_taken(server: str) -> None:
    # Seat 1 is reopened mid-round; its turns run out on the clock until the game ends with
    # the seat still open. Its invite then takes nothing: the game is as it ended.
    options = {"rounds": 1, "set": 6, "hand_size": 5}
    game = create(server, players=["ann", "bo"], options=options, turn_seconds=1)
    gid, ann, table = game["game_id"], game["seats"][0]["token"], game["table_token"]
    send("POST", f"{server}/api/v1/games/{gid}/deal", headers=auth(table)).raise_for_status()
    reopened = send(
        "PUT", f"{server}/api/v1/games/{gid}/seats/1", json={"open": True}, headers=auth(table)
    )
    invite = reopened.json()["changed"]["invite"]
    deadline = time.monotonic() + 60
    while (view := requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json())[
        "status"
    ] != "game_over":
        assert time.monotonic() < deadline, "the game did not end"
        if view["turn"] == 0:
            moves = requests.get(
                f"{server}/api/v1/games/{gid}/legal-moves", headers=auth(ann), timeout=10
            ).json()["moves"]
            send("POST", f"{server}/api/v1/games/{gid}/moves", json=moves[0], headers=auth(ann))
        else:
            time.sleep(0.2)
    assert view["players"][1]["open"]
    late = send(
        "POST", f"{server}/api/v1/games/{gid}/join", json={"invite": invite, "name": "late"}
    )
    assert (late.status_code, late.json()["code"]) == (409, "game_over"), late.text
    after = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()
    assert (after["version"], after["players"][1]["open"]) == (view["version"], True)


def test_a_finished_games_stream_ends_with_204_once_the_wait_is_over(server: str) -> None:
    game = finished(server)
    gid = game["game_id"]
    final = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    time.sleep(LINGER_SECONDS + 0.5)
    headers = {"Accept": SSE, "Last-Event-ID": str(final)}
    late = requests.get(f"{server}/api/v1/games/{gid}/events", headers=headers, timeout=10)
    assert late.status_code == 204


def test_a_rematch_with_a_body_is_refused_and_makes_nothing(server: str) -> None:
    game = finished(server, auto_deal=False)
    gid, ann = game["game_id"], game["seats"][0]["token"]
    version = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    url = f"{server}/api/v1/games/{gid}/rematch"
    json_type = {**auth(ann), "Content-Type": "application/json"}
    for raw, code in [
        (b"{", "malformed_json"),
        (b'{"players": ["evil"]}', "validation_failed"),
        (b"[]", "validation_failed"),
    ]:
        r = requests.post(url, data=raw, headers=json_type, timeout=10)
        assert r.headers["Content-Type"] == "application/problem+json", r.text
        assert r.json()["code"] == code, r.text
    assert requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"] == version
    made = send("POST", url, json={}, headers=auth(ann))  # an empty object is no body
    assert made.status_code == 201, made.text


def test_a_rematch_every_seat_claimed_hands_its_later_changes_to_no_worker() -> None:
    # Closing a window whose people all claimed opens no seat, so the worker stores nothing;
    # the next change stores it closed, or every change of the game queues a job that does
    # nothing.
    with RedisServer() as redis_server, start_gunicorn(redis_server.url, env=ENV) as base:
        # People only: a bot's moves past a request's budget would queue worker jobs of their
        # own.
        players, options = ["ann", "bo"], {"rounds": 1, "set": 6, "hand_size": 5}
        game = create(base, players=players, options=options, auto_deal=False)
        play_out(base, game, seed=3)
        gid, (ann, bo) = game["game_id"], [s["token"] for s in game["seats"][:2]]
        new = ask(base, gid, ann).json()["game_id"]
        assert ask(base, gid, bo).status_code == 201
        time.sleep(CLAIM_SECONDS + 1.5)  # the window is over; the worker opened nothing
        client = redis.Redis.from_url(redis_server.url)
        before = jobs_added(client)
        play_out(base, {**game, "game_id": new}, seed=4)
        time.sleep(1)  # what a change handed over is queued by now
        assert jobs_added(client) == before


def jobs_added(client: redis.Redis) -> int:
    info = client.xinfo_stream("mt:{work}:jobs")
    return int(info["entries-added"])


def test_a_seat_given_to_a_bot_in_the_claim_window_is_not_claimed_by_its_old_player(
    server: str,
) -> None:
    game = finished(server, auto_deal=False)
    gid, (ann, bo) = game["game_id"], [s["token"] for s in game["seats"][:2]]
    new = ask(server, gid, ann).json()["game_id"]
    url = f"{server}/api/v1/games/{new}/seats/1"
    given = send("PUT", url, json={"bot": "greedy"}, headers=auth(game["table_token"]))
    assert given.status_code == 200, given.text
    # Every person seat has claimed: the claims are closed, and bo's token is not bo's seat's.
    late = ask(server, gid, bo)
    assert (late.status_code, late.json()["code"]) == (409, "rematch_closed"), late.text
    time.sleep(CLAIM_SECONDS + 1.5)  # and after the window, as for a seat nobody claimed
    assert ask(server, gid, bo).status_code == 409


def test_a_rematch_asked_again_with_its_idempotency_key_gets_its_first_answer(server: str) -> None:
    game = finished(server)
    gid, ann = game["game_id"], game["seats"][0]["token"]
    keyed = {**auth(ann), "Idempotency-Key": "rematch-b7e2c1"}
    url = f"{server}/api/v1/games/{gid}/rematch"
    first, again = send("POST", url, headers=keyed), send("POST", url, headers=keyed)
    assert (first.status_code, again.status_code) == (201, 201), first.text
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    unkeyed = ask(server, gid, ann)  # a second call of its own: 200, the same body
    assert (unkeyed.status_code, unkeyed.json()) == (200, first.json())
    bad = send("POST", url, headers={**auth(ann), "Idempotency-Key": '"unclosed'})
    assert (bad.status_code, bad.json()["code"]) == (400, "malformed_idempotency_key")


def test_a_rematch_of_bots_alone_starts_at_once() -> None:
    """A table of bots has no seat to claim: its rematch deals at once. Before, it waited for
    a claim window nobody could use (here an hour; REMATCH_CLAIM_SECONDS, a minute by
    default)."""
    env = {**ENV, "REMATCH_CLAIM_SECONDS": "3600"}
    with RedisServer() as redis_server, start_gunicorn(redis_server.url, env=env) as base:
        players = [{"name": f"b{n}", "bot": "greedy"} for n in range(3)]
        options = {"rounds": 1, "set": 6, "hand_size": 5}
        game = create(base, players=players, options=options, auto_deal=True)
        gid = game["game_id"]
        eventually(lambda: status(base, gid)["status"] == "game_over", 60, "no first game's end")
        made = ask(base, gid, game["table_token"])
        assert made.status_code == 201, made.text
        new = made.json()["game_id"]
        assert status(base, new)["version"] >= 1
        eventually(
            lambda: status(base, new)["status"] != "waiting_deal", 30, "the rematch is not dealt"
        )


def status(base: str, gid: str) -> dict[str, Any]:
    r = requests.get(f"{base}/api/v1/games/{gid}", timeout=10)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_each_created_place_names_the_next_game_in_location(server: str) -> None:
    """A 201 names the resource it made (RFC 9110): each seat's and the table's first claim
    point at the next game, a replay of the same Idempotency-Key too; a later call (200) made
    nothing and names nothing."""
    game = finished(server, auto_deal=False)
    gid, ann, bo = game["game_id"], game["seats"][0]["token"], game["seats"][1]["token"]
    url = f"{server}/api/v1/games/{gid}/rematch"
    keyed = {**auth(ann), "Idempotency-Key": f'"{uuid.uuid4()}"'}
    first, replayed = send("POST", url, headers=keyed), send("POST", url, headers=keyed)
    where = f"/api/v1/games/{first.json()['game_id']}"
    claims = [first, replayed, ask(server, gid, bo), ask(server, gid, game["table_token"])]
    assert [(r.status_code, r.headers.get("Location")) for r in claims] == [(201, where)] * 4
    again = ask(server, gid, ann)
    assert (again.status_code, again.headers.get("Location")) == (200, None)
    view = requests.get(server + where, headers=auth(ann), timeout=10)
    assert view.status_code == 200 and "hand" in view.json()
