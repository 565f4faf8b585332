"""GET /games/{id}/samples: seat only, reproducible, positions that agree with the seat's view."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from service.rules import (
    Action,
    Chronicle,
    ClueKind,
    apply,
    import_position,
    legal_moves,
    score_view,
)
from service.rules.observer import seat_view
from tests.api.conftest import Game, bearer, dealt_game


def samples(game: Game, token: str | None, query: str = "") -> Any:
    headers = bearer(token) if token else {}
    return game.client.get(f"{game.url}/samples{query}", headers=headers)


def test_samples_agree_with_the_seat_and_import(client: FlaskClient) -> None:
    game = dealt_game(client, seed=11)
    position = client.get(game.url + "/position", headers=bearer(game.host)).json
    state = import_position(position)
    seat = 1
    r = samples(game, game.seats[seat], "?n=5&seed=3")
    assert r.status_code == 200, r.json
    assert r.headers["Cache-Control"] == "private, no-store"
    assert r.headers["ETag"] == f'"{game.version()}"'
    body = r.json
    assert (body["game_id"], body["version"], body["seat"]) == (game.id, game.version(), seat)
    assert len(body["samples"]) == 5
    for doc in body["samples"]:
        assert seat_view(import_position(doc), seat) == seat_view(state, seat)
        assert doc["hands"][seat] == position["hands"][seat]
        assert doc["seed"] != position["seed"]
        created = client.post("/api/v1/games", json={"position": doc})
        assert created.status_code == 201, created.json
    # The hidden tiles really are re-dealt.
    assert any(doc["hands"] != position["hands"] for doc in body["samples"])
    assert score_view(import_position(body["samples"][0])) == score_view(state)


def test_the_same_seed_gives_the_same_samples(client: FlaskClient) -> None:
    game = dealt_game(client, seed=12)
    token = game.seats[0]
    first = samples(game, token, "?n=4&seed=77").json["samples"]
    assert samples(game, token, "?n=4&seed=77").json["samples"] == first
    assert samples(game, token, "?seed=77&n=4&unrelated=1").json["samples"] == first
    assert samples(game, token, "?n=4&seed=78").json["samples"] != first
    unseeded = [samples(game, token, "?n=4").json["samples"] for _ in range(2)]
    assert unseeded[0] != unseeded[1]
    assert len(samples(game, token).json["samples"]) == 1  # n defaults to 1


def test_before_the_first_deal_a_sample_is_the_empty_table(client: FlaskClient) -> None:
    created = client.post("/api/v1/games", json={"players": ["a", "b"], "seed": 5}).json
    game = Game(client, created)
    r = samples(game, game.seats[0], "?n=2&seed=1")
    assert r.status_code == 200, r.json
    for doc in r.json["samples"]:
        assert doc["status"] == "waiting_deal" and doc["hands"] == [[], []]
        assert client.post("/api/v1/games", json={"position": doc}).status_code == 201


@pytest.mark.parametrize(
    "query",
    ["?n=0", "?n=101", "?n=-1", "?n=abc", "?n=1.5", "?n=", "?n=%205", "?n=1e2", "?seed=-1",
     "?seed=x", f"?seed={2**63}"],
)  # fmt: skip
def test_a_bad_n_or_seed_is_422(client: FlaskClient, query: str) -> None:
    game = dealt_game(client, seed=13)
    before = game.version()
    r = samples(game, game.seats[0], query)
    assert r.status_code == 422, (query, r.json)
    assert r.json["code"] == "validation_failed"
    assert set(r.json["errors"]) <= {"n", "seed"}
    assert r.headers["Content-Type"] == "application/problem+json"
    assert game.version() == before


def test_roles_and_unknown_games(client: FlaskClient) -> None:
    game = dealt_game(client, seed=14)
    assert samples(game, None).status_code == 401
    assert samples(game, None).json["code"] == "missing_token"
    r = samples(game, game.host)
    assert r.status_code == 403 and r.json["code"] == "not_a_seat"
    assert samples(game, "not-a-token-of-this-game").status_code == 401
    r = client.get("/api/v1/games/nosuchgame/samples", headers=bearer(game.seats[0]))
    assert r.status_code == 404 and r.json["code"] == "game_not_found"
    ok = samples(game, game.seats[2], "?n=100&seed=1")
    assert ok.status_code == 200 and len(ok.json["samples"]) == 100


def test_samples_keep_what_the_moves_revealed(client: FlaskClient) -> None:
    """A seat that drew had no play then: no sample hands it a tile it could have played
    and still holds, unless it drew since."""
    game = dealt_game(client, seed=21)
    chronicle = play_until_draws(game, draws=4)
    seat = 0
    clues = chronicle.seen_by(seat, 1)
    assert any(c.kind == ClueKind.LACKS and c.seat != seat for c in clues)
    docs = samples(game, game.seats[seat], "?n=30&seed=5").json["samples"]
    for doc in docs:
        for at, clue in enumerate(clues):
            if clue.kind != ClueKind.LACKS or clue.seat == seat:
                continue
            hand = [tuple(t) for t in doc["hands"][clue.seat]]
            held = [t for t in hand if set(t) & clue.pips]
            drawn = sum(c.kind == ClueKind.DREW and c.seat == clue.seat for c in clues[at:])
            assert len(held) <= drawn, (clue, hand)


def play_until_draws(game: Game, draws: int) -> Chronicle:
    """Play the first legal move of each seat (through the API) until ``draws`` draws."""
    chronicle = Chronicle()
    position = game.client.get(game.url + "/position", headers=bearer(game.host)).json
    state = import_position(position)
    seen = 0
    while seen < draws:
        seat = state.turn
        assert seat is not None, "the round ended first"
        move = legal_moves(state, seat)[0]
        chronicle.note(state, seat, move)
        seen += move.action == Action.DRAW
        r = game.move(seat, move.to_json())
        assert r.status_code == 200, r.json
        apply(state, seat, move)
    return chronicle
