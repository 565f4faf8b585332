"""ETag/If-Match, Idempotency-Key, expiry renewal and positions through the API."""

from __future__ import annotations

import time
import uuid

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.api.idempotency import MIN_CREATE_KEY
from service.store import keys as K
from tests.api.conftest import Game, bearer, dealt_game, new_game


def first_move(game, seat):  # type: ignore[no-untyped-def]
    return game.legal(seat)[0]


def test_etag_and_if_match(client: FlaskClient) -> None:
    game = dealt_game(client, seed=21)
    r = client.get(game.url)
    v = r.json["version"]
    assert r.headers["ETag"] == f'"{v}"'
    for path in ["/score"]:
        assert client.get(game.url + path).headers["ETag"] == f'"{v}"'
    assert client.get(game.url + "/position", headers=bearer(game.host)).headers["ETag"] == f'"{v}"'
    # If-None-Match: 304 while unchanged.
    r = client.get(game.url, headers={"If-None-Match": f'"{v}"'})
    assert r.status_code == 304 and r.headers["ETag"] == f'"{v}"'
    assert client.get(game.url, headers={"If-None-Match": f'"{v - 1}"'}).status_code == 200
    seat = r.headers and client.get(game.url).json["turn"]
    move = first_move(game, seat)
    # Stale or weak If-Match: 412 stale_version, nothing changes.
    for tag in [f'"{v - 1}"', f'W/"{v}"', '"abc"', f'"{v + 1}", "{v - 1}"']:
        r = game.move(seat, move, **{"If-Match": tag})
        assert r.status_code == 412, r.json
        assert r.json["code"] == "stale_version"
        assert r.json["version"] == v
        assert r.headers["ETag"] == f'"{v}"'
    assert game.version() == v
    # A matching one (in a list, or *) applies.
    r = game.move(seat, move, **{"If-Match": f'"{v - 5}", "{v}"'})
    assert r.status_code == 200, r.json
    assert r.json["version"] == v + 1 and r.headers["ETag"] == f'"{v + 1}"'
    seat = r.json["turn"]
    r = game.move(seat, first_move(game, seat), **{"If-Match": "*"})
    assert r.status_code == 200


def test_the_score_revalidates_with_its_etag_as_the_view_does(client: FlaskClient) -> None:
    """The score carries the version as its ETag, so a cache revalidates it with
    If-None-Match: the version it holds is answered 304 with no body, a stale one 200 with
    the scores, and the spec declares the 304."""
    game = dealt_game(client, seed=21)
    v, url = game.version(), game.url + "/score"
    held = client.get(url, headers={"If-None-Match": f'"{v}"'})
    assert (held.status_code, held.data, held.headers["ETag"]) == (304, b"", f'"{v}"')
    stale = client.get(url, headers={"If-None-Match": f'"{v - 1}"'})
    assert stale.status_code == 200 and stale.json["version"] == v, stale.json
    spec = client.get("/api/v1/openapi.json").json
    assert "304" in spec["paths"]["/api/v1/games/{game_id}/score"]["get"]["responses"]


def test_a_bare_uuid_key_replays_exactly_like_its_quoted_form(client: FlaskClient) -> None:
    """Most clients send a UUID as it is; one that starts with a digit is no RFC 8941 token, so
    it was refused (400) unless quoted. Bare or quoted, it is one key."""
    key = "9b2f8c4e-3a71-4d0e-9f6a-1c2b3d4e5f60"
    body = {"players": ["ann", "bo"], "seed": 3}
    first = client.post("/api/v1/games", json=body, headers={"Idempotency-Key": key})
    assert first.status_code == 201, first.json
    assert "Idempotent-Replayed" not in first.headers
    for form in (key, f'"{key}"'):
        again = client.post("/api/v1/games", json=body, headers={"Idempotency-Key": form})
        assert again.status_code == 201, (form, again.json)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.data == first.data
    game = Game(client, first.json)  # type: ignore[arg-type]
    assert game.deal().status_code == 200
    seat = game.view()["turn"]
    move, move_key = first_move(game, seat), "0e7d1c2b-9a8f-4e6d-8c5b-4a3f2e1d0c9b"
    played = game.move(seat, move, **{"Idempotency-Key": f'"{move_key}"'})
    assert played.status_code == 200, played.json
    replayed = game.move(seat, move, **{"Idempotency-Key": move_key})
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert (replayed.status_code, replayed.data) == (200, played.data)
    assert game.version() == played.json["version"]  # type: ignore[index]


def test_idempotency_key(client: FlaskClient, redis_client: redis.Redis) -> None:
    game = dealt_game(client, seed=22)
    seat = game.view()["turn"]
    move = first_move(game, seat)
    v = game.version()
    r1 = game.move(seat, move, **{"Idempotency-Key": '"move-1"'})
    assert r1.status_code == 200
    assert "Idempotent-Replayed" not in r1.headers
    # The retry (bare token form, same key) returns the first response and applies nothing,
    # even though its If-Match is now stale.
    r2 = game.move(seat, move, **{"Idempotency-Key": "move-1", "If-Match": f'"{v}"'})
    assert r2.status_code == 200
    assert r2.headers["Idempotent-Replayed"] == "true"
    assert r2.data == r1.data
    assert r2.headers["ETag"] == f'"{v + 1}"'
    assert game.version() == v + 1
    # Another seat's token with the same key is a different request (here: not its turn).
    other = (seat + 1) % 3
    if other != r1.json["turn"]:
        r3 = game.move(other, {"action": "mark"}, **{"Idempotency-Key": '"move-1"'})
        assert r3.status_code == 409
    # A refused request keeps nothing: the same key may be used again.
    stale = game.move(
        r1.json["turn"], {"action": "mark"}, **{"Idempotency-Key": '"k2"', "If-Match": '"1"'}
    )
    assert stale.status_code == 412
    # Every key of the game (state, log, one kept response, who is at the table) has a TTL.
    keys = list(redis_client.scan_iter(match=f"mt:{{{game.id}}}*"))
    assert len(keys) == 4
    for key in keys:
        assert redis_client.ttl(key) > 0
    assert (
        redis_client.ttl(K.game_key(game.id))
        > redis_client.ttl(next(k for k in keys if b":idem:" in k)) - 1
    )


def test_idempotency_key_names_one_request(client: FlaskClient) -> None:
    """A key names one request (endpoint and body): the same key sent by the same seat with
    another request is judged afresh, never answered with the first request's response."""
    game = dealt_game(client, players=["ann", "bo"], seed=8)
    seat = game.view()["turn"]
    move = first_move(game, seat)
    hdr = {"Idempotency-Key": '"move-key"'}
    first = game.move(seat, move, **hdr)
    assert first.status_code == 200
    assert game.move(seat, move, **hdr).data == first.data  # a true retry is replayed
    version = game.version()
    for path, body in (("/moves", {"action": "end_turn"}), ("/draw", None), ("/mark", None)):
        r = client.post(game.url + path, json=body, headers={**bearer(game.seats[seat]), **hdr})
        assert "Idempotent-Replayed" not in r.headers, path
        assert r.data != first.data, path
    # Only what was legal applied; a replay would have changed nothing either way.
    assert game.version() >= version


def test_idle_games_expire_and_actions_renew(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    app: Flask = create_app(
        {"REDIS_URL": redis_server.url, "GAME_TTL_SECONDS": 100, "IDEMPOTENCY_TTL_SECONDS": 500}
    )
    client = app.test_client()
    game = new_game(client)
    key = K.game_key(game.id)
    assert 90 < redis_client.ttl(key) <= 100
    redis_client.expire(key, 5)
    # Reads do not renew; an action does.
    client.get(game.url)
    assert redis_client.ttl(key) <= 5
    r = client.post(game.url + "/deal", headers={**bearer(game.host), "Idempotency-Key": '"d"'})
    assert r.status_code == 200
    assert redis_client.ttl(key) > 90
    idem = [k for k in redis_client.scan_iter(match=f"mt:{{{game.id}}}*") if b":idem:" in k]
    # An idempotency record never outlives its game's TTL setting.
    assert idem and 0 < redis_client.ttl(idem[0]) <= 100
    redis_client.delete(key)  # what expiry does
    r = client.get(game.url)
    assert r.status_code == 404 and r.json["code"] == "game_not_found"


def test_position_export_import(client: FlaskClient) -> None:
    game = dealt_game(client, seed=23)
    for _ in range(3):
        seat = game.view()["turn"]
        assert game.move(seat, first_move(game, seat)).status_code == 200
    position = client.get(game.url + "/position", headers=bearer(game.host)).json
    assert position["format"] == "mexican-train-position/1"
    r = client.post("/api/v1/games", json={"position": position})
    assert r.status_code == 201, r.json
    copy = r.json
    assert copy["game_id"] != game.id
    assert [s["name"] for s in copy["seats"]] == position["players"]
    copy_pos = client.get(
        f"/api/v1/games/{copy['game_id']}/position", headers=bearer(copy["host_token"])
    ).json
    assert copy_pos == position
    # Same position, same legal moves for the seat to play.
    seat = position["turn"]
    mine = client.get(
        f"/api/v1/games/{copy['game_id']}/legal-moves",
        headers=bearer(copy["seats"][seat]["token"]),
    ).json["moves"]
    assert mine == game.legal(seat)
    # An impossible position is refused with a reason.
    broken = {**position, "boneyard": position["boneyard"][1:]}
    r = client.post("/api/v1/games", json={"position": broken})
    assert r.status_code == 422 and r.json["code"] == "invalid_position"
    assert r.json["detail"]
    # Names follow the same rule as on create (1 to 40 printable characters).
    long_name = {**position, "players": ["x" * 5000, *position["players"][1:]]}
    r = client.post("/api/v1/games", json={"position": long_name})
    assert r.status_code == 422 and "1 to 40 printable" in r.json["detail"]


def test_rate_limit_per_token(redis_server: RedisServer, redis_client: redis.Redis) -> None:
    app: Flask = create_app({"REDIS_URL": redis_server.url, "RATE_LIMIT_PER_MINUTE": 5})
    client = app.test_client()
    game = dealt_game(client, seed=24)
    seat = game.view()["turn"]
    token = bearer(game.seats[seat])
    move = first_move(game, seat)  # the token's first request
    for _ in range(4):
        assert client.get(game.url, headers=token).status_code == 200
    v = game.version()
    r = client.post(game.url + "/moves", json=move, headers=token)
    assert r.status_code == 429
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == "rate_limited"
    assert 0 < int(r.headers["Retry-After"]) <= 60
    assert game.version() == v
    # Other tokens and anonymous reads have their own allowance.
    assert client.get(game.url, headers=bearer(game.host)).status_code == 200
    assert client.get(game.url).status_code == 200
    rate_keys = list(redis_client.scan_iter(match=f"mt:{{{game.id}}}:rate:*"))
    assert rate_keys and all(0 < redis_client.ttl(k) <= 60 for k in rate_keys)


def test_idempotent_create(client: FlaskClient, redis_client: redis.Redis) -> None:
    body = {"players": ["ann", "bo"], "seed": 3}
    key = {"Idempotency-Key": '"6f1c2b7e-0d4a-4c4e-9b1f-create"'}
    first = client.post("/api/v1/games", json=body, headers=key)
    assert first.status_code == 201
    again = client.post("/api/v1/games", json=body, headers=key)
    assert again.status_code == 201
    assert again.data == first.data  # same game, same tokens
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other_key = {"Idempotency-Key": '"other-a1b2c3d4e5f6a7b8c9d0"'}
    other = client.post("/api/v1/games", json=body, headers=other_key)
    assert other.json["game_id"] != first.json["game_id"]
    # The kept answer is sealed: no token appears in Redis in clear, and it expires.
    names = list(redis_client.scan_iter(match=K.PREFIX + "\\{create:*"))
    assert len(names) == 2  # the first answer and "other"'s
    tokens = [first.json["host_token"], *(s["token"] for s in first.json["seats"])]
    for name in names:
        blob = redis_client.get(name)
        assert blob and 0 < redis_client.ttl(name) <= 24 * 3600
        assert not any(t.encode() in blob for t in tokens)
    game = Game(client, first.json)
    assert game.view(game.seats[0])["players"][0]["name"] == "ann"


def test_idempotent_create_is_bound_to_the_request(client: FlaskClient) -> None:
    """``POST /games`` has no caller identity to scope its Idempotency-Key, and its answer
    holds every token of the game. Someone who reuses (or guesses) another client's key with
    another request must get a game of their own, not the first caller's tokens; a genuine
    retry (same body, whatever its key order) still gets the first answer."""
    key = {"Idempotency-Key": '"create-1-3f0c9a7e2b5d4c1a8e6f"'}
    first = client.post("/api/v1/games", json={"players": ["ann", "bo"], "seed": 3}, headers=key)
    assert first.status_code == 201
    retry = client.post(
        "/api/v1/games",
        data='{"seed": 3, "players": ["ann", "bo"]}',
        headers={**key, "Content-Type": "application/json"},
    )
    assert retry.status_code == 201 and retry.data == first.data
    other = client.post("/api/v1/games", json={"players": ["eve", "mal"]}, headers=key)
    assert other.status_code == 201
    assert other.json["game_id"] != first.json["game_id"]
    assert other.json["host_token"] != first.json["host_token"]
    assert "Idempotent-Replayed" not in other.headers


@pytest.mark.parametrize("short", ['"k7"', "k7", '"' + "a" * (MIN_CREATE_KEY - 1) + '"'])
def test_a_short_create_key_is_refused(
    client: FlaskClient, redis_client: redis.Redis, short: str
) -> None:
    """The create key is global and its answer holds every token: a short one could be guessed
    (420 guesses of two characters found a victim's tokens), so it is refused, naming the rule."""
    body = {"players": ["ann", "bo"]}
    r = client.post("/api/v1/games", json=body, headers={"Idempotency-Key": short})
    assert r.status_code == 400
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == "short_idempotency_key"
    assert f"at least {MIN_CREATE_KEY} characters" in r.json["detail"]
    # Refused: nothing created, nothing kept. (The background worker of the session's gunicorn
    # shares this Redis and makes its queue again after the flush: not this request's doing.)
    made = [k for k in redis_client.scan_iter() if b"{work}" not in k]
    assert made == []
    uuid_key = {"Idempotency-Key": f'"{uuid.uuid4()}"'}
    assert client.post("/api/v1/games", json=body, headers=uuid_key).status_code == 201
    # A game action's key is bound to its token: short keys stay fine there.
    game = new_game(client)
    r = client.post(game.url + "/deal", headers={**bearer(game.host), "Idempotency-Key": short})
    assert r.status_code == 200


def _client(redis_server: RedisServer, **config: int) -> FlaskClient:
    return create_app({"REDIS_URL": redis_server.url, **config}).test_client()


def test_a_game_never_dealt_expires_soon(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    client = _client(redis_server, GAME_TTL_SECONDS=1000, UNDEALT_TTL_SECONDS=60)
    game = new_game(client)
    assert 50 < redis_client.ttl(K.game_key(game.id)) <= 60
    key = K.game_key(game.id)
    assert game.deal().status_code == 200
    assert 990 < redis_client.ttl(key) <= 1000  # the full TTL from the first deal on
    # An imported position that was dealt before lives the full TTL at once; one that never was
    # (round 0) only the short one.
    position = client.get(game.url + "/position", headers=bearer(game.host)).json
    dealt_copy = client.post("/api/v1/games", json={"position": position}).json
    assert 990 < redis_client.ttl(K.game_key(dealt_copy["game_id"])) <= 1000
    fresh = new_game(client)
    position = client.get(fresh.url + "/position", headers=bearer(fresh.host)).json
    undealt_copy = client.post("/api/v1/games", json={"position": position}).json
    assert 50 < redis_client.ttl(K.game_key(undealt_copy["game_id"])) <= 60


def test_an_undealt_game_is_gone_after_its_short_ttl(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    client = _client(redis_server, GAME_TTL_SECONDS=1000, UNDEALT_TTL_SECONDS=1)
    game = new_game(client)
    deadline = time.monotonic() + 5  # a liveness bound: Redis expires keys within ~100 ms
    while redis_client.exists(K.game_key(game.id)) and time.monotonic() < deadline:
        time.sleep(0.1)
    r = client.get(game.url)
    assert r.status_code == 404 and r.json["code"] == "game_not_found"


def test_a_short_key_on_a_join_or_a_claim_is_refused(client: FlaskClient) -> None:
    """An invite link goes to a group, and a transfer link may be seen over a shoulder: their
    holders could replay someone's join or claim with a guessed short key (its body, the
    invite and the name, is public to them) and be answered that seat's token. A key those
    requests take is as long as a creation's; a refused one seats nobody."""
    created = client.post("/api/v1/games", json={"players": ["ann", {"open": True}]}).json
    assert created is not None
    url, invite = f"/api/v1/games/{created['game_id']}", created["seats"][1]["invite"]
    join = {"invite": invite, "name": "bo"}
    short = {"Idempotency-Key": "1"}
    refused = client.post(url + "/join", json=join, headers=short)
    assert (refused.status_code, refused.json["code"]) == (400, "short_idempotency_key")
    assert client.get(url).json["players"][1]["open"] is True
    key = {"Idempotency-Key": str(uuid.uuid4())}
    joined = client.post(url + "/join", json=join, headers=key)
    assert joined.status_code == 201
    assert client.post(url + "/join", json=join, headers=key).data == joined.data  # a retry
    ticket = client.post(url + "/transfers", headers=bearer(created["seats"][0]["token"])).json
    claim = {"ticket": ticket["ticket"]}
    refused = client.post(url + "/transfers/claim", json=claim, headers=short)
    assert (refused.status_code, refused.json["code"]) == (400, "short_idempotency_key")
    assert client.post(url + "/transfers/claim", json=claim, headers=key).status_code == 201


@pytest.mark.parametrize("path", ["/transfers", "/stream-tickets"])
def test_a_ticket_request_judges_its_if_match(
    client: FlaskClient, redis_client: redis.Redis, path: str
) -> None:
    """Issuing a ticket changes no version, but an If-Match the client sent is judged as on
    every other request of a game: malformed is 400, stale is 412, and neither issues one."""
    game = new_game(client)
    seat = bearer(game.seats[0])

    def tickets() -> list[bytes]:
        return list(redis_client.scan_iter(f"*{game.id}*:t*"))  # :ticket: and :transfer:

    malformed = client.post(game.url + path, headers={**seat, "If-Match": "garbage"})
    assert (malformed.status_code, malformed.json["code"]) == (400, "malformed_precondition")
    stale = client.post(game.url + path, headers={**seat, "If-Match": '"99"'})
    assert (stale.status_code, stale.json["code"]) == (412, "stale_version")
    assert stale.headers["ETag"] == '"1"'
    assert tickets() == []
    current = client.post(game.url + path, headers={**seat, "If-Match": '"1"'})
    assert current.status_code == 201, current.json
    assert len(tickets()) == 1
