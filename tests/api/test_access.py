"""Hidden information and roles: who may see and do what."""

from __future__ import annotations

import json

import pytest
from flask.testing import FlaskClient

from tests.api.conftest import bearer, dealt_game, new_game


def all_tiles(body: object) -> str:
    return json.dumps(body)


def test_hands_are_private(client: FlaskClient) -> None:
    game = dealt_game(client, seed=3)
    position = client.get(game.url + "/position", headers=bearer(game.host)).json
    hands = position["hands"]
    public = game.view()
    host_view = game.view(game.host)
    for body in (public, host_view):
        assert "hand" not in body
        assert "boneyard" not in body and "hands" not in body
        assert body["boneyard_size"] == len(position["boneyard"])
    for seat, token in enumerate(game.seats):
        mine = game.view(token)
        assert sorted(map(sorted, mine["hand"])) == sorted(map(sorted, hands[seat]))
        assert "hands" not in mine and "boneyard" not in mine
        assert [p["hand_size"] for p in mine["players"]] == [len(h) for h in hands]
    # The score view and legal moves reveal no hidden tile either.
    score = client.get(game.url + "/score").json
    assert "hand" not in all_tiles(score)


def test_drawn_tile_shown_to_its_owner_only(client: FlaskClient) -> None:
    # Seed search: play until someone must draw, then check what the others are told.
    for seed in range(40):
        game = dealt_game(client, seed=seed, options={"opening_no_play": "draw_one"})
        view = game.view()
        seat = view["turn"]
        if any(m["action"] == "draw" for m in game.legal(seat)):
            r = game.move(seat, {"action": "draw"})
            assert r.status_code == 200, r.json
            drawn = [e for e in r.json["events"] if e["type"] == "tile_drawn"]
            assert drawn and drawn[0]["seat"] == seat and "tile" in drawn[0]
            assert (
                drawn[0]["tile"] in [sorted(t) for t in r.json["hand"]]
                or list(reversed(drawn[0]["tile"])) in r.json["hand"]
            )
            return
    pytest.skip("no seed led to a draw")


def test_tokens_and_roles(client: FlaskClient) -> None:
    game = dealt_game(client, seed=5)
    other = new_game(client)
    turn = game.view()["turn"]
    waiting = (turn + 1) % 3
    v = game.version()
    # Only the host deals and exports.
    for token in game.seats:
        r = client.post(game.url + "/deal", headers=bearer(token))
        assert (r.status_code, r.json["code"]) == (403, "not_host")
        r = client.get(game.url + "/position", headers=bearer(token))
        assert (r.status_code, r.json["code"]) == (403, "not_host")
    # The host is not a seat.
    r = client.get(game.url + "/legal-moves", headers=bearer(game.host))
    assert (r.status_code, r.json["code"]) == (403, "not_a_seat")
    r = client.post(game.url + "/mark", headers=bearer(game.host))
    assert (r.status_code, r.json["code"]) == (403, "not_a_seat")
    # No token, another game's token, a made-up token, another scheme: 401.
    for headers in (
        {},
        bearer(other.seats[turn]),
        bearer(other.host),
        bearer("x" * 43),
        {"Authorization": "Basic YTpi"},
        {"Authorization": "Bearer"},
    ):
        r = client.post(game.url + "/mark", headers=headers)
        assert r.status_code == 401, (headers, r.json)
        assert r.json["code"] in {"missing_token", "invalid_token"}
        assert "WWW-Authenticate" in r.headers
    r = client.get(game.url, headers=bearer("nope"))
    assert r.status_code == 401
    # A seat cannot act out of turn: its token only ever acts for its own seat.
    r = client.post(game.url + "/mark", headers=bearer(game.seats[waiting]))
    assert (r.status_code, r.json["code"]) == (409, "not_your_turn")
    r = client.post(
        game.url + "/moves",
        json={"action": "mark", "seat": turn},
        headers=bearer(game.seats[waiting]),
    )
    assert r.status_code == 422
    assert game.version() == v


def test_deal_events_hide_drawn_tiles(client: FlaskClient) -> None:
    """When nobody holds the engine, seats draw at the deal: the host sees no drawn tile."""
    seen = 0
    for seed in range(40):
        game = new_game(client, seed=seed)
        r = game.deal()
        drawn = [e for e in r.json["events"] if e["type"] == "tile_drawn"]
        for event in drawn:
            assert "tile" not in event, event
        seen += len(drawn)
        if seen >= 3:
            return
    raise AssertionError("no deal with draws in 40 seeds")


def test_responses_vary_by_token(client: FlaskClient) -> None:
    """One URL, one ETag ("<version>"), but a body that depends on the bearer token: caches
    (a browser's, shared by the seats of a hot-seat front end) must key on Authorization, or
    seat 1's revalidation (If-None-Match -> 304) would serve seat 0's stored view and hand."""
    game = dealt_game(client, seed=5)
    v = game.version()
    seat0 = client.get(game.url, headers=bearer(game.seats[0]))
    assert "authorization" in seat0.headers.get("Vary", "").lower()
    r = client.get(game.url, headers={**bearer(game.seats[1]), "If-None-Match": f'"{v}"'})
    assert r.status_code == 304
    assert "authorization" in r.headers.get("Vary", "").lower()
    turn = game.view()["turn"]
    reads = [
        client.get(game.url),
        client.get(game.url + "/legal-moves", headers=bearer(game.seats[turn])),
        client.get(game.url + "/score"),
        client.get(game.url + "/position", headers=bearer(game.host)),
        game.move(turn, game.legal(turn)[0]),
        client.get(game.url + "/position"),  # a 401 varies by token too
    ]
    for r in reads:
        assert "authorization" in r.headers.get("Vary", "").lower(), (r.status_code, r.json)


def test_browser_front_ends_on_other_origins(client: FlaskClient) -> None:
    """Third-party front ends run in browsers on their own origins: CORS lets them call the
    API (bearer tokens, no cookies, so any origin may) and read ETag and Location."""
    origin = {"Origin": "https://front.example"}
    pre = client.options(
        "/api/v1/games/abcdefgh1234/play",
        headers={
            **origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, if-match",
        },
    )
    assert pre.status_code in (200, 204)
    assert pre.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in pre.headers["Access-Control-Allow-Methods"]
    allowed = pre.headers["Access-Control-Allow-Headers"].lower()
    for name in ("authorization", "content-type", "if-match", "if-none-match", "idempotency-key"):
        assert name in allowed
    r = client.post("/api/v1/games", json={"players": ["ann", "bo"]}, headers=origin)
    assert r.status_code == 201 and r.headers["Access-Control-Allow-Origin"] == "*"
    exposed = r.headers["Access-Control-Expose-Headers"].lower()
    for name in (
        "etag",
        "location",
        "retry-after",
        "ratelimit-policy",
        "ratelimit",
        "idempotent-replayed",
        "link",
    ):
        assert name in exposed
    r = client.get("/api/v1/games/abcdefgh1234", headers=origin)  # problems too
    assert r.status_code == 404 and r.headers["Access-Control-Allow-Origin"] == "*"
