"""A compare-and-set whose reply is lost: Redis ran it, then the connection broke before the
service read the answer (tests/faults/late_link.py breaks it there). The request cannot know
whether its change is stored, so it answers 503 and looks at what is stored, as after a
timeout; it must not send the change again, which would find its own change, answer that
another action came first, and (for a seek) give the seeker a second seat."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.store import keys, scripts
from tests.api.conftest import Game, bearer
from tests.eventually import eventually
from tests.faults.late_link import LateLink

pytestmark = pytest.mark.usefixtures("own_owed")


@pytest.fixture()
def link(redis_server: RedisServer, redis_client: redis.Redis) -> Iterator[LateLink]:
    with LateLink(redis_server.port) as linked:
        yield linked


@pytest.fixture()
def linked_client(link: LateLink) -> FlaskClient:
    return create_app({"REDIS_URL": link.url, "GAME_TTL_SECONDS": 3600}).test_client()


def cas_sha(redis_client: redis.Redis) -> bytes:
    return str(redis_client.script_load(scripts.COMPARE_AND_SET)).encode()


def test_a_move_whose_reply_was_lost_is_not_told_another_came_first(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    r = linked_client.post("/api/v1/games", json={"players": ["ann", "bo"], "seed": 4})
    game = Game(linked_client, r.json)  # type: ignore[arg-type]
    view: Any = game.deal().json
    seat, version = view["turn"], view["version"]
    move = game.legal(seat)[0]
    link.lose_reply_of_next(cas_sha(redis_client))
    r = game.move(seat, move)
    assert link.lost.is_set()
    assert (r.status_code, r.json["code"]) == (503, "storage_unavailable"), r.json  # type: ignore[index]
    assert game.version() == version + 1  # stored once: a retry of it is judged afresh


def test_a_seek_whose_seat_reply_was_lost_takes_no_second_seat(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    client = linked_client
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    link.lose_reply_of_next(cas_sha(redis_client))
    r = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"})
    assert link.lost.is_set()
    assert r.status_code == 503, r.json
    # Seat 1 was taken under a token nobody holds: it opens again, for the seeker's retry.
    url = f"/api/v1/games/{first['game_id']}"

    def seats() -> list[tuple[str, bool]]:
        players = client.get(url, headers=bearer(first["token"])).json["players"]  # type: ignore[index]
        return [(p["name"], p["open"]) for p in players]

    eventually(lambda: seats()[1][1], 30, f"seat 1 never opened again: {seats()}")
    again: Any = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"}).json
    assert (again["game_id"], again["seat"]) == (first["game_id"], 1)
    assert [open_ for _, open_ in seats()] == [False, False, True]


def test_a_seek_whose_new_tables_reply_was_lost_is_a_503_and_leaves_no_seat_held(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """The seek makes its table under the id its claim drew; Redis makes it, and the reply is
    lost. Sent again, the creation found its own table and refused the id (a 500)."""
    client = linked_client
    seek = {"name": "ann", "players": 2}
    link.lose_reply_of_next(str(redis_client.script_load(scripts.CREATE_GAME)).encode())
    r = client.post("/api/v1/lobby/seek", json=seek)
    assert link.lost.is_set()
    assert (r.status_code, r.json["code"]) == (503, "storage_unavailable"), r.json  # type: ignore[index]
    made = [k for k in redis_client.scan_iter(match="mt:{*}") if k.count(b":") == 1]
    assert len(made) == 1  # the table was made once
    game_id = made[0].decode()[4:-1]

    def seat_open() -> bool:
        players = client.get(f"/api/v1/games/{game_id}").json["players"]  # type: ignore[index]
        return bool(players[0]["open"])

    eventually(seat_open, 30, "the seat taken under a token nobody holds never opened")


def claims_of(redis_client: redis.Redis, bucket: str, game_id: str) -> int:
    """The seats the seek bucket counts as claimed at ``game_id``."""
    return int(redis_client.hget(keys.seek_keys(bucket)[1], game_id) or 0)


def test_a_seek_whose_claim_reply_was_lost_claims_one_seat(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """Redis claims seat 1 for the second seeker and the reply is lost; sent again, the claim
    must answer seat 1 again, not claim seat 2 too (which would fill the table's count: the
    third seeker would be given a new table, and seat 1 would wait for nobody)."""
    client = linked_client
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    link.lose_reply_of_next(str(redis_client.script_load(scripts.CLAIM_SEEK_SEAT)).encode())
    second: Any = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"}).json
    assert link.lost.is_set()
    assert (second["game_id"], second["seat"]) == (first["game_id"], 1), second
    assert claims_of(redis_client, "standard|3|0|0", first["game_id"]) == 2
    third: Any = client.post("/api/v1/lobby/seek", json={**seek, "name": "cy"}).json
    assert (third["game_id"], third["seat"]) == (first["game_id"], 2), third


def test_a_named_seek_whose_claim_reply_was_lost_is_seated_not_refused(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """Sent again, the claim must not find its own seeker recorded at the table and answer
    409 already_seated to a player seated nowhere."""
    client = linked_client
    made: Any = client.post("/api/v1/players", json={"name": "bo"}).json
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    link.lose_reply_of_next(str(redis_client.script_load(scripts.CLAIM_SEEK_SEAT)).encode())
    named = {**seek, "name": "bo", "player_token": made["player_token"]}
    r = client.post("/api/v1/lobby/seek", json=named)
    assert link.lost.is_set()
    assert r.status_code == 201, r.json
    assert (r.json["game_id"], r.json["seat"]) == (first["game_id"], 1)  # type: ignore[index]


def test_a_seat_given_back_whose_reply_was_lost_is_given_back_once(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """The second seeker's sit is lost with its connection (never run: 503), so its claim is
    given back; Redis gives it back and the reply is lost. Sent again, the give-back must
    not lower the table's count twice, below the seat its first seeker holds."""
    client = linked_client
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    assert claims_of(redis_client, "standard|3|0|0", first["game_id"]) == 1
    link.hold_next(cas_sha(redis_client), deliver=False)
    link.lose_reply_of_next(str(redis_client.script_load(scripts.GIVE_BACK_SEAT)).encode())
    r = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"})
    assert (r.status_code, r.json["code"]) == (503, "storage_unavailable"), r.json  # type: ignore[index]
    assert link.held.is_set() and link.lost.is_set()
    assert claims_of(redis_client, "standard|3|0|0", first["game_id"]) == 1


def retry_gets_the_late_claims_seat(
    client: FlaskClient,
    link: LateLink,
    redis_client: redis.Redis,
    refused: Any,
    first: dict[str, Any],
    keyed: dict[str, str],
) -> None:
    """bo's seek was answered 503 while its claim ran late (seat 1 of ``first``'s 3-seat
    table): once that claim ran, bo's retry with the same key must get seat 1, and the third
    seeker seat 2, not a new table."""
    seek = {"name": "bo", "players": 3}
    assert (refused.status_code, refused.json["code"]) == (503, "storage_unavailable"), refused.json
    assert link.delivered.wait(10)
    eventually(
        lambda: claims_of(redis_client, "standard|3|0|0", first["game_id"]) == 2,
        10,
        "the late claim never ran",
    )
    again: Any = client.post("/api/v1/lobby/seek", json=seek, headers=keyed).json
    assert (again["game_id"], again["seat"]) == (first["game_id"], 1), again
    third: Any = client.post("/api/v1/lobby/seek", json={**seek, "name": "cy"}).json
    assert (third["game_id"], third["seat"]) == (first["game_id"], 2), third


def test_a_seek_retried_after_its_claim_ran_late_is_given_the_seat_that_claim_holds(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """The second seeker's claim reaches Redis only after its request timed out (503), and
    claims seat 1. Its retry with the same Idempotency-Key must sit there: claiming anew, it
    would take seat 2, leave seat 1 to nobody, and send the third seeker to a new table."""
    client = linked_client
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    link.hold_next(str(redis_client.script_load(scripts.CLAIM_SEEK_SEAT)).encode())
    keyed = {"Idempotency-Key": "seek-retried-after-a-late-claim-0001"}
    r = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"}, headers=keyed)
    retry_gets_the_late_claims_seat(client, link, redis_client, r, first, keyed)


def test_a_seek_retried_after_its_new_table_was_made_unanswered_sits_at_that_table(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """The seek makes its table (the creation's reply lost: 503) and cannot take the table out
    of its bucket (that write lost with its connection), so its claim of the new table stays.
    The retry with the same Idempotency-Key finds that claim: the table exists, and the retry
    must sit there rather than try to make it again, which the store refuses (the id is
    taken)."""
    client = linked_client
    seek = {"name": "ann", "players": 3}
    keyed = {"Idempotency-Key": "seek-retried-after-its-table-was-made-01"}
    link.lose_reply_of_next(str(redis_client.script_load(scripts.CREATE_GAME)).encode())
    closing = str(redis_client.script_load(scripts.CLOSE_SEEK_TABLE)).encode()
    link.hold_next(closing, deliver=False)
    r = client.post("/api/v1/lobby/seek", json=seek, headers=keyed)
    assert (r.status_code, r.json["code"]) == (503, "storage_unavailable"), r.json  # type: ignore[index]
    assert link.lost.is_set() and link.held.is_set()
    made = [k for k in redis_client.scan_iter(match="mt:{*}") if k.count(b":") == 1]
    assert len(made) == 1
    again = client.post("/api/v1/lobby/seek", json=seek, headers=keyed)
    assert again.status_code == 201, again.json
    assert again.json["game_id"] == made[0].decode()[4:-1]  # type: ignore[index]


def test_a_seek_retried_after_a_late_claim_of_a_later_attempt_is_given_that_seat(
    linked_client: FlaskClient, link: LateLink, redis_client: redis.Redis
) -> None:
    """The keyed seek's first claim names a table that is never made (its maker died: the
    seek waits for it, then takes it out of the bucket), so the seek claims again; that second
    claim reaches Redis only after the request timed out (503), and claims seat 1 of the first
    seeker's table. The retry with the same Idempotency-Key must sit there, whichever attempt
    made the claim: claiming anew, it would take seat 2, leave seat 1 to nobody, and send the
    third seeker to a new table."""
    client = linked_client
    seek = {"name": "ann", "players": 3}
    first: Any = client.post("/api/v1/lobby/seek", json=seek).json
    order, claims = keys.seek_keys("standard|3|0|0")
    redis_client.zadd(order, {"ghost0000": 1})  # first in line, its maker gone
    redis_client.hset(claims, "ghost0000", 1)
    claim_sha = str(redis_client.script_load(scripts.CLAIM_SEEK_SEAT)).encode()

    def ghost_claimed() -> bool:
        return claims_of(redis_client, "standard|3|0|0", "ghost0000") == 2

    def hold_the_second_claim() -> None:
        eventually(ghost_claimed, 10, "the first attempt never claimed a seat of ghost0000")
        link.hold_next(claim_sha)

    holder = threading.Thread(target=hold_the_second_claim)
    holder.start()
    keyed = {"Idempotency-Key": "seek-retried-after-a-later-late-claim-01"}
    r = client.post("/api/v1/lobby/seek", json={**seek, "name": "bo"}, headers=keyed)
    holder.join()
    retry_gets_the_late_claims_seat(client, link, redis_client, r, first, keyed)
