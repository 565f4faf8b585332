"""Every 2xx body of a whole game, in every state, is valid against the committed OpenAPI
response schema of its operation: clients generate code from that document. The game is
played through both /moves and the specific endpoints (tiles reversed on /play)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema_rs
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from tests.api.conftest import Game, bearer, new_game

SPEC = json.loads((Path(__file__).resolve().parents[2] / "openapi" / "openapi.json").read_text())


def check(template: str, method: str, r: TestResponse) -> None:
    """``r`` is documented: its status is listed and its body fits the listed schema."""
    op = SPEC["paths"][template][method]
    assert str(r.status_code) in op["responses"], (template, method, r.status_code)
    response = op["responses"][str(r.status_code)]
    schema = response["content"]["application/json"]["schema"]
    validator = jsonschema_rs.Draft202012Validator({**schema, "components": SPEC["components"]})
    errors = [f"{e.instance_path}: {e.message}" for e in validator.iter_errors(r.json)]
    assert not errors, (template, method, errors[:5])


def observe(game: Game) -> None:
    """Check every read of the game, anonymous, as each seat and as the host."""
    base = "/api/v1/games/{game_id}"
    for tok in [None, *game.seats, game.host]:
        check(base, "get", game.client.get(game.url, headers=bearer(tok) if tok else {}))
        check(base + "/score", "get", game.client.get(game.url + "/score"))
    for tok in game.seats:
        r = game.client.get(game.url + "/legal-moves", headers=bearer(tok))
        check(base + "/legal-moves", "get", r)
    r = game.client.get(game.url + "/position", headers=bearer(game.host))
    check(base + "/position", "get", r)


def test_responses_fit_the_committed_spec(client: FlaskClient) -> None:
    rng = random.Random(3)
    r = client.post("/api/v1/games", json={"players": ["ann", "bo"], "options": {"set": 6}})
    check("/api/v1/games", "post", r)
    game = new_game(client, players=["ann", "bo"], options={"set": 6, "rounds": 2}, seed=8)
    base = "/api/v1/games/{game_id}"
    paths = {"play": "/play", "draw": "/draw", "mark": "/mark", "end_turn": "/end-turn"}
    states: set[str] = set()
    for _ in range(400):
        view = game.view()
        states.add(view["status"])
        observe(game)
        if view["status"] == "game_over":
            break
        if view["status"] != "in_round":
            check(base + "/deal", "post", game.deal())
            continue
        seat = view["turn"]
        move = rng.choice(game.legal(seat))
        if rng.random() < 0.5:
            check(base + "/moves", "post", game.move(seat, move))
            continue
        body = {k: v for k, v in move.items() if k != "action"} or None
        if body is not None:
            body["tile"] = body["tile"][::-1]  # either order: the server orients the tile
        r = client.post(
            game.url + paths[move["action"]], json=body, headers=bearer(game.seats[seat])
        )
        check(base + paths[move["action"]], "post", r)
    assert states == {"waiting_deal", "in_round", "round_over", "game_over"}


def test_an_events_page_that_leaves_entries_links_to_the_next(client: FlaskClient) -> None:
    """A page cut at ``limit`` says where the rest is (RFC 8288 ``Link: rel="next"``), as paged
    APIs do; following the links from ``after=0`` reads every entry once, the last page has
    no link."""
    game = new_game(client, players=["ann", "bo"], seed=8)
    assert game.deal().status_code == 200
    for _ in range(3):
        seat = game.view()["turn"]
        assert game.move(seat, game.legal(seat)[0]).status_code == 200
    version, seen = game.version(), []
    url: str | None = game.url + "/events?after=0&limit=2"
    while url is not None:
        r = client.get(url)
        check("/api/v1/games/{game_id}/events", "get", r)
        seen += [entry["version"] for entry in r.json["entries"]]  # type: ignore[index]
        link = r.headers.get("Link")
        assert (link is not None) == r.json["more"]  # type: ignore[index]
        url = link.split(">", 1)[0].removeprefix("<") if link else None
        assert link is None or link.endswith('>; rel="next"')
    assert seen == list(range(1, version + 1))
    declared = SPEC["paths"]["/api/v1/games/{game_id}/events"]["get"]["responses"]["200"]
    assert "Link" in declared["headers"]  # a generated client reads only declared headers
