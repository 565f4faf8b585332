"""Cache-Control per endpoint: nothing that shows a hand or a token may be stored by a cache;
the public view may be, revalidated with its ETag."""

from __future__ import annotations

import uuid

from flask import Flask
from flask.testing import FlaskClient

from service.api.caching import CachePolicy
from service.api.web import json_response
from tests.api.conftest import bearer, dealt_game, new_game

PRIVATE = "private, no-store"
REVALIDATE = "no-cache"


def test_policy_values_are_the_documented_ones() -> None:
    assert (CachePolicy.PRIVATE, CachePolicy.REVALIDATE) == (PRIVATE, REVALIDATE)


def test_create_answers_and_their_replays_are_private(client: FlaskClient) -> None:
    body = {"players": ["ann", "bo"]}
    key = {"Idempotency-Key": f'"{uuid.uuid4()}"'}
    first = client.post("/api/v1/games", json=body, headers=key)
    assert first.status_code == 201 and first.headers["Cache-Control"] == PRIVATE
    replay = client.post("/api/v1/games", json=body, headers=key)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["Cache-Control"] == PRIVATE
    position = client.get(
        f"/api/v1/games/{first.json['game_id']}/position",
        headers=bearer(first.json["host_token"]),
    ).json
    imported = client.post("/api/v1/games", json={"position": position})
    assert imported.status_code == 201 and imported.headers["Cache-Control"] == PRIVATE


def test_reads_public_no_cache_with_etag_and_private_with_a_token(client: FlaskClient) -> None:
    game = dealt_game(client, seed=5)
    seat = game.seats[0]
    expected = {
        # (path, token): Cache-Control
        ("", None): REVALIDATE,
        ("/score", None): REVALIDATE,
        ("", seat): PRIVATE,
        ("", game.host): PRIVATE,
        ("/score", seat): PRIVATE,
        ("/legal-moves", seat): PRIVATE,
        ("/position", game.host): PRIVATE,
    }
    for (path, token), policy in expected.items():
        r = client.get(game.url + path, headers=bearer(token) if token else {})
        assert r.status_code == 200, (path, r.json)
        assert r.headers["Cache-Control"] == policy, (path, token is not None)
        assert r.headers["ETag"] == f'"{game.version()}"'
    # A revalidation of the public view keeps the policy on its 304.
    r = client.get(game.url, headers={"If-None-Match": f'"{game.version()}"'})
    assert r.status_code == 304 and r.headers["Cache-Control"] == REVALIDATE


def test_every_action_answer_is_private(client: FlaskClient) -> None:
    game = new_game(client, seed=5)
    r = game.deal()
    assert r.status_code == 200 and r.headers["Cache-Control"] == PRIVATE
    turn = game.view()["turn"]
    token = bearer(game.seats[turn])
    move = game.legal(turn)[0]
    r = game.move(turn, move)
    assert r.status_code == 200 and r.headers["Cache-Control"] == PRIVATE
    # Refusals too, and each action endpoint (a wrong seat's move is refused before the engine).
    other = bearer(game.seats[(turn + 1) % len(game.seats)])
    for path in ("/play", "/draw", "/mark", "/end-turn", "/moves", "/deal"):
        for headers in (token, other):
            r = client.post(game.url + path, json={}, headers=headers)
            assert r.headers["Cache-Control"] == PRIVATE, (path, r.status_code)


def test_an_endpoint_that_chose_nothing_is_private_once_a_token_is_sent(app: Flask) -> None:
    """Endpoints added later fail safe: a token-bearing request is never cacheable."""
    app.add_url_rule("/probe", "probe", lambda: json_response({"hand": []}))
    client = app.test_client()
    assert "Cache-Control" not in client.get("/probe").headers
    assert client.get("/probe", headers=bearer("x")).headers["Cache-Control"] == PRIVATE
    assert client.get("/probe?access_token=x").headers["Cache-Control"] == PRIVATE
