"""A move naming the version this process last saw skips reading the game; when that copy was
behind, the answer is still exactly the one a plain read gives."""

from __future__ import annotations

from typing import Any

import redis
from flask.testing import FlaskClient

from service.api.codes import Problem
from service.api.records import KNOWN
from service.store import Change, GameRecord, GameStore
from service.store import keys as K

from .conftest import Game, bearer, dealt_game


def calls(r: redis.Redis, command: str) -> int:
    stats: dict[str, Any] = r.info("commandstats")
    return int(stats.get(f"cmdstat_{command}", {}).get("calls", 0))


def turn_and_move(game: Game) -> tuple[int, dict[str, Any], int]:
    view = game.view()
    seat = view["turn"]
    return seat, game.legal(seat)[0], view["version"]


def known_turn(client: FlaskClient) -> tuple[Game, int, dict[str, Any], int, GameRecord]:
    """A dealt game whose record this process knows (legal-moves read it)."""
    game = dealt_game(client)
    seat, move, version = turn_and_move(game)
    known = KNOWN.get(game.id, version)
    assert known is not None
    return game, seat, move, version, known


def test_a_move_on_a_known_version_reads_nothing(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game = dealt_game(client)
    seat, move, version = turn_and_move(game)  # legal-moves read the game: it is known
    before = calls(redis_client, "hgetall")
    r = game.move(seat, move, **{"If-Match": f'"{version}"'})
    assert r.status_code == 200, r.json
    assert calls(redis_client, "hgetall") == before
    assert game.version() == r.json["version"] > version


def test_a_copy_that_fell_behind_answers_as_a_read_does(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game, seat, move, version, stale = known_turn(client)
    # Another instance changes the game; this process still knows the old record.
    GameStore(redis_client).save(game.id, version, Change(stale.state, [b"\x00"]))
    r = game.move(seat, move, **{"If-Match": f'"{version}"'})
    assert r.status_code == 412, r.json
    assert (r.json["code"], r.json["version"]) == (Problem.STALE_VERSION, version + 1)
    assert int(redis_client.hget(K.game_key(game.id), "v") or 0) == version + 1


def test_a_token_revoked_behind_a_known_copy_is_refused_as_unknown(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game, seat, move, version, stale = known_turn(client)
    r = client.put(f"{game.url}/seats/{seat}", json={"bot": "random"}, headers=bearer(game.host))
    assert r.status_code == 200, r.json
    KNOWN.keep(stale)  # as if another instance had made the change
    moved = int(redis_client.hget(K.game_key(game.id), "v") or 0)
    r = game.move(seat, move, **{"If-Match": f'"{version}"'})
    assert r.status_code == 401, r.json
    assert r.json["code"] == "invalid_token"
    assert int(redis_client.hget(K.game_key(game.id), "v") or 0) == moved


def test_a_tag_that_names_the_known_version_only_as_a_number_is_stale_as_on_a_read(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    # Tags compare as strings: "02" is not the tag of version 2, on any process.
    game, seat, move, version, _ = known_turn(client)
    r = game.move(seat, move, **{"If-Match": f'"0{version}"'})
    assert r.status_code == 412, r.json
    assert (r.json["code"], r.json["version"]) == (Problem.STALE_VERSION, version)
    assert int(redis_client.hget(K.game_key(game.id), "v") or 0) == version


def test_a_tag_of_thousands_of_digits_is_stale_not_an_error(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    game, seat, move, version, _ = known_turn(client)
    r = game.move(seat, move, **{"If-Match": '"' + "9" * 5000 + '"'})
    assert r.status_code == 412, r.json
    assert r.json["code"] == Problem.STALE_VERSION
    assert int(redis_client.hget(K.game_key(game.id), "v") or 0) == version
