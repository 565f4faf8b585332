"""Seat transfers: a one-time ticket moves a seat to another device with a new token; the old
token stops working at once, on its open stream too; a ticket works once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis
import requests

from devstack.redis_server import RedisServer
from tests.live.helpers import SSE, auth, create, entries, send, sse_entries


def ticket_for(base: str, gid: str, token: str | None) -> requests.Response:
    return send("POST", f"{base}/api/v1/games/{gid}/transfers", headers=auth(token))


def claim(base: str, gid: str, ticket: Any) -> requests.Response:
    return send("POST", f"{base}/api/v1/games/{gid}/transfers/claim", json={"ticket": ticket})


def test_a_claimed_seat_has_a_new_token_and_the_old_one_is_cut_off(live: str) -> None:
    game = create(live, players=["ann", "bo"])
    gid, old = game["game_id"], game["seats"][1]["token"]
    issued = ticket_for(live, gid, old)
    assert issued.status_code == 201, issued.text
    ticket = issued.json()["ticket"]
    assert issued.json()["url"] == f"{live}/#/take/{gid}/{ticket}"
    got: list[dict[str, Any]] = []
    stream = requests.get(
        f"{live}/api/v1/games/{gid}/events?after=1",
        headers={**auth(old), "Accept": SSE},
        stream=True,
        timeout=30,
    )
    reader = threading.Thread(target=lambda: got.extend(sse_entries(stream)))
    reader.start()
    moved = claim(live, gid, ticket)
    assert moved.status_code == 201, moved.text
    body = moved.json()
    assert (body["game_id"], body["seat"], body["name"]) == (gid, 1, "bo")
    assert body["token"] != old
    reader.join(15)
    assert not reader.is_alive(), "the old token's stream goes on"
    assert [e["action"] for e in got] == [{"action": "transfer", "seat": 1}]
    view = requests.get(f"{live}/api/v1/games/{gid}", headers=auth(old), timeout=10)
    assert (view.status_code, view.json()["code"]) == (401, "invalid_token")
    mine = requests.get(f"{live}/api/v1/games/{gid}", headers=auth(body["token"]), timeout=10)
    assert mine.status_code == 200 and "hand" in mine.json()
    again = claim(live, gid, ticket)
    assert (again.status_code, again.json()["code"]) == (409, "transfer_used")


def test_a_claim_retried_with_its_idempotency_key_gets_its_first_answer(live: str) -> None:
    # The first answer is lost (the instance died, or the client's connection): the retry must
    # bring the new token, since the old one is revoked already.
    game = create(live, players=["ann", "bo"])
    gid, old = game["game_id"], game["seats"][1]["token"]
    ticket = ticket_for(live, gid, old).json()["ticket"]
    url = f"{live}/api/v1/games/{gid}/transfers/claim"
    key = {"Idempotency-Key": "claim-0f6a2c1e-5d4b-4e8f-9a7b-3c2d1e0f9a8b"}
    first = send("POST", url, json={"ticket": ticket}, headers=key)
    assert first.status_code == 201, first.text
    again = send("POST", url, json={"ticket": ticket}, headers=key)
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.headers.get("Location") == first.headers.get("Location") is None
    mine = requests.get(
        f"{live}/api/v1/games/{gid}", headers=auth(first.json()["token"]), timeout=10
    )
    assert mine.status_code == 200 and "hand" in mine.json()
    view = requests.get(f"{live}/api/v1/games/{gid}", headers=auth(old), timeout=10)
    assert view.status_code == 401
    # Another key is another claim: the ticket is spent.
    other = send(
        "POST",
        url,
        json={"ticket": ticket},
        headers={"Idempotency-Key": "claim-other-5e9d0a7c-21b4"},
    )
    assert (other.status_code, other.json()["code"]) == (409, "transfer_used")


def test_a_refused_claim_leaves_the_ticket_to_be_claimed(live: str, everything: Any) -> None:
    game = create(live, players=["ann", "bo"])
    gid, token = game["game_id"], game["seats"][1]["token"]
    ticket = ticket_for(live, gid, token).json()["ticket"]
    before = everything(gid)
    url = f"{live}/api/v1/games/{gid}/transfers/claim"
    # Without an Idempotency-Key (with one, the kept answer's lookup checks If-Match first).
    stale = requests.post(url, json={"ticket": ticket}, headers={"If-Match": '"9"'}, timeout=10)
    assert (stale.status_code, stale.json()["code"]) == (412, "stale_version"), stale.text
    assert everything(gid) == before
    moved = claim(live, gid, ticket)
    assert moved.status_code == 201, moved.text
    again = claim(live, gid, ticket)
    assert (again.status_code, again.json()["code"]) == (409, "transfer_used")


@pytest.mark.parametrize("attempt", range(5))  # a race: one try often misses it
def test_concurrent_claims_of_one_ticket_move_the_seat_once(live: str, attempt: int) -> None:
    game = create(live, players=["ann", "bo"])
    gid = game["game_id"]
    ticket = ticket_for(live, gid, game["seats"][1]["token"]).json()["ticket"]
    url = f"{live}/api/v1/games/{gid}/transfers/claim"
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(lambda _: requests.post(url, json={"ticket": ticket}, timeout=10), range(8))
        )
    assert sorted(a.status_code for a in answers)[0] == 201
    assert [a.status_code for a in answers].count(201) == 1
    # A claim that lost the race is told the ticket was used, never that it is unknown.
    assert {(a.status_code, a.json()["code"]) for a in answers if a.status_code != 201} == {
        (409, "transfer_used")
    }
    log = entries(live, gid)["entries"]
    assert [e["action"]["action"] for e in log].count("transfer") == 1


def test_a_ticket_of_a_seat_that_changed_hands_moves_nothing(live: str) -> None:
    game = create(live, players=["ann", "bo"])
    gid, bo = game["game_id"], game["seats"][1]["token"]
    ticket = ticket_for(live, gid, bo).json()["ticket"]
    newer = ticket_for(live, gid, bo).json()["ticket"]
    assert claim(live, gid, newer).status_code == 201  # bo's token changed meanwhile
    stale = claim(live, gid, ticket)
    assert (stale.status_code, stale.json()["code"]) == (404, "transfer_not_found")


@pytest.fixture()
def everything(redis_server: RedisServer) -> Any:
    client = redis.Redis.from_url(redis_server.url)
    return lambda gid: {k: client.dump(k) for k in sorted(client.keys(f"mt:{{{gid}}}*"))}


@pytest.mark.parametrize(
    ("ticket", "status", "code"),
    [
        ("tt.nosuchticket", 404, "transfer_not_found"),
        ("", 422, "validation_failed"),
        (7, 422, "validation_failed"),
        ("x" * 500, 422, "validation_failed"),
        (None, 422, "validation_failed"),
    ],
)
def test_a_bad_claim_is_a_problem_and_changes_nothing(
    live: str, everything: Any, ticket: Any, status: int, code: str
) -> None:
    game = create(live, players=["ann", "bo"])
    gid = game["game_id"]
    before = everything(gid)
    refused = claim(live, gid, ticket)
    assert (refused.status_code, refused.json()["code"]) == (status, code), refused.text
    assert everything(gid) == before


def test_only_a_seats_own_token_gets_a_ticket(live: str) -> None:
    game = create(live, players=["ann", "bo"])
    gid = game["game_id"]
    for token, status, code in [
        (None, 401, "missing_token"),
        ("nonsense", 401, "invalid_token"),
        (game["host_token"], 403, "not_a_seat"),
        (game["table_token"], 403, "not_a_seat"),
    ]:
        refused = ticket_for(live, gid, token)
        assert (refused.status_code, refused.json()["code"]) == (status, code), refused.text
    missing = ticket_for(live, "nosuchgame000", game["seats"][0]["token"])
    assert (missing.status_code, missing.json()["code"]) == (404, "game_not_found")


@pytest.mark.parametrize("resource", ["transfers", "stream-tickets"])
def test_a_ticket_asked_again_with_its_idempotency_key_is_the_first_one(
    live: str, resource: str
) -> None:
    game = create(live, players=["ann", "bo"])
    gid, ann, bo = game["game_id"], game["seats"][0]["token"], game["seats"][1]["token"]
    url = f"{live}/api/v1/games/{gid}/{resource}"
    key = {"Idempotency-Key": "a2f1c9e0-retry"}
    first = send("POST", url, headers={**auth(ann), **key})
    again = send("POST", url, headers={**auth(ann), **key})
    assert (first.status_code, again.status_code) == (201, 201), first.text
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    other = send("POST", url, headers={**auth(bo), **key})  # another token: its own ticket
    assert other.status_code == 201 and other.json()["ticket"] != first.json()["ticket"]
    bad = send("POST", url, headers={**auth(ann), "Idempotency-Key": '"unclosed'})
    assert (bad.status_code, bad.json()["code"]) == (400, "malformed_idempotency_key")
    # A retry is answered only while the token holds its seat: once moved away, it is refused.
    moved = claim(live, gid, ticket_for(live, gid, ann).json()["ticket"])
    assert moved.status_code == 201, moved.text
    gone = send("POST", url, headers={**auth(ann), **key})
    assert (gone.status_code, gone.json()["code"]) == (401, "invalid_token")


def test_a_stream_ticket_for_a_game_that_is_not_there_is_404(live: str) -> None:
    game = create(live, players=["ann", "bo"])
    issued = send(
        "POST",
        f"{live}/api/v1/games/{game['game_id']}/stream-tickets",
        headers=auth(game["seats"][0]["token"]),
    )
    ticket = issued.json()["ticket"]
    for gid, status, code in [("nosuchgame", 404, "game_not_found"), (game["game_id"], 200, None)]:
        r = requests.get(
            f"{live}/api/v1/games/{gid}/events",
            params={"access_token": ticket},
            headers={"Accept": SSE},
            stream=True,
            timeout=10,
        )
        assert r.status_code == status
        assert code is None or r.json()["code"] == code
        r.close()
