"""A seat's presence belongs to whoever holds it: a change of occupant drops what the one
before left in the game's presence hash, and a token that lost its seat marks nothing, even
when the process judges its request on a copy of the game kept from before the change."""

from __future__ import annotations

import time

import redis
from flask.testing import FlaskClient

from service.api.presence import READ_EVERY_MS
from service.api.records import KNOWN
from service.store.keys import presence_key
from service.store.presence import Presence

from .conftest import bearer, dealt_game, new_game


def fields(r: redis.Redis, game_id: str) -> set[str]:
    return {f.decode() for f in r.hkeys(presence_key(game_id))}


def test_a_seat_given_to_someone_else_loses_its_presence_and_the_others_keep_theirs(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game = dealt_game(client)
    game.view(game.seats[1])
    game.view(game.seats[2])
    Presence(redis_client).streaming(game.id, 1, "s1", 1)  # a stream of seat 1's occupant
    assert {"r1", "r2", "t1:s1"} <= fields(redis_client, game.id)
    r = client.put(f"{game.url}/seats/1", json={"open": True}, headers=bearer(game.host))
    assert r.status_code == 200, r.json
    assert fields(redis_client, game.id) == {"r2"}
    time.sleep(READ_EVERY_MS / 1000 + 0.1)  # this process's copy of the presence is stale
    players = client.get(game.url).json["players"]
    assert [p["present"] for p in players] == [False, False, True]


def test_a_seat_reopened_or_given_to_a_bot_is_not_present_at_once(client: FlaskClient) -> None:
    """The answer to the change and the views right after it, while this process's copy of
    the presence still holds the old occupants' marks, show nobody at an open or a bot seat."""
    game = dealt_game(client)
    for seat in (1, 2):
        game.view(game.seats[seat])
    time.sleep(READ_EVERY_MS / 1000 + 0.1)  # the next view reads both marks into the copy
    assert [p["present"] for p in client.get(game.url).json["players"]] == [False, True, True]
    r = client.put(f"{game.url}/seats/1", json={"open": True}, headers=bearer(game.host))
    assert r.status_code == 200, r.json
    assert [(p["open"], p["present"]) for p in r.json["players"]][1] == (True, False)
    r = client.put(f"{game.url}/seats/2", json={"bot": "random"}, headers=bearer(game.host))
    assert r.status_code == 200, r.json
    assert [p["present"] for p in r.json["players"]] == [False, False, False]
    assert [p["present"] for p in client.get(game.url).json["players"]] == [False, False, False]


def test_a_token_revoked_behind_a_known_copy_marks_nothing(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game = dealt_game(client)
    view = game.view()
    seat, version = view["turn"], view["version"]
    move = game.legal(seat)[0]  # the read marks the seat, and this process knows the game
    stale = KNOWN.get(game.id, version)
    assert stale is not None
    r = client.put(f"{game.url}/seats/{seat}", json={"bot": "random"}, headers=bearer(game.host))
    assert r.status_code == 200, r.json
    assert f"r{seat}" not in fields(redis_client, game.id)
    KNOWN.keep(stale)  # as if another instance had made the change
    r = game.move(seat, move, **{"If-Match": f'"{version}"'})
    assert r.status_code == 401, r.json
    assert f"r{seat}" not in fields(redis_client, game.id)


def present_after(client: FlaskClient, game_id: str) -> list[bool]:
    """The seats present in the public view (no seat token marks anything), at once and once
    this process's copy of the presence is read again from the store."""
    url = f"/api/v1/games/{game_id}"
    at_once = [p["present"] for p in client.get(url).json["players"]]
    time.sleep(READ_EVERY_MS / 1000 + 0.1)
    assert [p["present"] for p in client.get(url).json["players"]] == at_once
    return at_once


def test_a_seat_taken_with_an_invite_is_present_at_once(client: FlaskClient) -> None:
    r = client.post("/api/v1/games", json={"players": ["ann", {"open": True}]})
    assert r.status_code == 201, r.json
    gid, invite = r.json["game_id"], r.json["seats"][1]["invite"]
    client.get(f"/api/v1/games/{gid}")  # this process holds a copy of the presence
    r = client.post(f"/api/v1/games/{gid}/join", json={"invite": invite, "name": "bo"})
    assert r.status_code == 201, r.json
    assert present_after(client, gid) == [True, True]  # seat 0: its creator's, made present


def test_seats_taken_by_seeks_are_present_at_once(client: FlaskClient) -> None:
    body = {"name": "ann", "players": 2, "turn_seconds": 0}
    first = client.post("/api/v1/lobby/seek", json=body)
    assert first.status_code == 201, first.json
    gid = first.json["game_id"]
    assert present_after(client, gid) == [True, False]  # the seek that made the table
    second = client.post("/api/v1/lobby/seek", json={**body, "name": "bo"})
    assert second.status_code == 201, second.json
    assert second.json["game_id"] == gid
    assert present_after(client, gid) == [True, True]


def test_a_seat_moved_by_a_transfer_claim_is_present_at_once(client: FlaskClient) -> None:
    game = new_game(client, players=["ann", "bo"])
    issued = client.post(f"{game.url}/transfers", headers=bearer(game.seats[1]))
    assert issued.status_code == 201, issued.json
    r = client.post(f"{game.url}/transfers/claim", json={"ticket": issued.json["ticket"]})
    assert r.status_code == 201, r.json
    assert present_after(client, game.id) == [False, True]


def test_a_created_games_one_person_seat_is_its_creators_and_present_at_once(
    client: FlaskClient,
) -> None:
    """Making the game is a request of the creator, who sits at its one person seat (the
    others bots or open, as the web table makes them); with several person seats the creator
    holds every token, and no seat is known to be theirs."""
    players = [{"open": True}, {"name": "cpu", "bot": "greedy"}, "ann"]
    r = client.post("/api/v1/games", json={"players": players})
    assert r.status_code == 201, r.json
    assert present_after(client, r.json["game_id"]) == [False, False, True]
    r = client.post("/api/v1/games", json={"players": ["ann", "bo"]})
    assert r.status_code == 201, r.json
    assert present_after(client, r.json["game_id"]) == [False, False]


def played_out(client: FlaskClient) -> tuple[str, list[str]]:
    """A finished one-round game of ann, bo and a bot: its id and the people's tokens."""
    game = new_game(
        client,
        players=["ann", "bo", {"name": "cpu", "bot": "greedy"}],
        options={"rounds": 1, "set": 6, "hand_size": 5},
    )
    view = game.deal().json
    while view["status"] != "game_over":
        moves = game.legal(view["turn"])
        view = game.move(view["turn"], moves[0]).json
    return game.id, game.seats[:2]


def test_a_seat_that_claims_its_rematch_place_is_present_there_at_once(
    client: FlaskClient,
) -> None:
    """A claim is a request of the seat's holder, who holds the same seat of the next game."""
    gid, (ann, _) = played_out(client)
    r = client.post(f"/api/v1/games/{gid}/rematch", headers=bearer(ann))
    assert r.status_code == 201, r.json
    assert present_after(client, r.json["game_id"]) == [True, False, False]
