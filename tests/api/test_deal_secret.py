"""Through the API: a game whose randomness the server picked keeps its deal secret out of every
response but the host's position, which still reproduces it; a chosen seed reproduces deals."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from tests.api.conftest import Game, bearer, new_game


def _import(client: FlaskClient, position: dict[str, Any]) -> Game:
    r = client.post("/api/v1/games", json={"position": position})
    assert r.status_code == 201, r.json
    return Game(client, r.json)


def _deal(game: Game) -> tuple[bytes, list[Any]]:
    """The deal's answer, and every seat's hand right after it."""
    r = game.deal()
    assert r.status_code == 200
    return r.data, [game.view(token)["hand"] for token in game.seats]


def test_no_seat_response_carries_the_secret_and_the_host_can_reproduce(
    client: FlaskClient,
) -> None:
    created = client.post("/api/v1/games", json={"players": ["ann", "bo", "cy"]})
    game = Game(client, created.json)  # type: ignore[arg-type]
    undealt = client.get(game.url + "/position", headers=bearer(game.host)).json
    secret, seed = undealt["deal_secret"], undealt["seed"]
    assert isinstance(secret, str) and len(secret) == 32
    dealt, hands = _deal(game)
    seen = [created.data, dealt, client.get(game.url).data]
    turn = game.view()["turn"]
    seen.append(game.move(turn, game.legal(turn)[0]).data)
    for token in game.seats:
        for path in ("", "/legal-moves", "/score", "/samples?n=3"):
            r = client.get(game.url + path, headers=bearer(token))
            assert r.status_code == 200, (path, r.json)
            seen.append(r.data)
    for body in seen:
        assert secret.encode() not in body and str(seed).encode() not in body
    # The host's position deals the same hands again; the seed without the secret does not.
    assert _deal(_import(client, undealt))[1] == hands
    assert _deal(_import(client, {**undealt, "deal_secret": None}))[1] != hands


def test_a_chosen_seed_deals_the_same_hands_every_time(client: FlaskClient) -> None:
    first, second = new_game(client, seed=31337), new_game(client, seed=31337)
    assert _deal(first)[1] == _deal(second)[1]
    position = client.get(first.url + "/position", headers=bearer(first.host)).json
    assert position["seed"] == 31337 and position["deal_secret"] is None
