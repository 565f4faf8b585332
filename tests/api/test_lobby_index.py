"""The lobby's listing reads only tables that fit its filters: the lobby keeps a sorted set per
combination of filters, which every listing and delisting keeps in step, on a real Redis."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.api.lobby.listing import ROUND
from service.store import keys
from tests.api.conftest import bearer

TWO = {"players": ["ann", {"open": True}], "public": True}
THREE = {"players": ["bo", {"open": True}, {"open": True}], "public": True}
#: Every key of the lobby's listing, all in the lobby's slot.
LOBBY_KEY = re.compile(rb"^mt:\{lobby\}:(by:(any|[a-z0-9=,]+)|kinds|tables|round)$")
#: Commands of the counting itself or of a connection's setup, not of a listing.
NOT_COUNTED = ("info", "config", "client", "hello", "ping")


def made(client: FlaskClient, body: dict[str, Any], n: int = 1) -> list[dict[str, Any]]:
    out = []
    for _ in range(n):
        r = client.post("/api/v1/games", json=body)
        assert r.status_code == 201, r.json
        out.append(r.json)
    return out


def listed(client: FlaskClient, query: str = "") -> list[str]:
    r = client.get("/api/v1/lobby" + query)
    assert r.status_code == 200, r.json
    return [t["game_id"] for t in r.json["tables"]]  # type: ignore[index]


def test_a_filter_finds_its_table_behind_1500_newer_tables_of_other_kinds(
    client: FlaskClient,
) -> None:
    """However many newer tables of other kinds the lobby holds, a filter lists its table."""
    (older,) = made(client, TWO)
    made(client, THREE, 1500)
    assert listed(client, "?players=2") == [older["game_id"]]
    assert listed(client, "?players=2&preset=standard&turn_seconds=0") == [older["game_id"]]
    threes = listed(client, "?players=3")
    assert len(threes) == 100 and older["game_id"] not in threes


@pytest.fixture()
def own() -> Iterator[tuple[Flask, redis.Redis]]:
    """The app on a Redis of this test's own: nothing else sends it a command."""
    with RedisServer() as server:
        app = create_app({"REDIS_URL": server.url, "GAME_TTL_SECONDS": 3600})
        admin = redis.Redis.from_url(server.url)
        yield app, admin
        admin.close()


def commands_of(admin: redis.Redis, client: FlaskClient, query: str) -> tuple[int, list[str]]:
    """The commands Redis counted for one listing (INFO commandstats), and what it listed."""
    admin.config_resetstat()
    ids = listed(client, query)
    stats = admin.info("commandstats")
    names = [name.removeprefix("cmdstat_") for name in stats]
    calls = sum(
        int(stats[f"cmdstat_{name}"]["calls"]) for name in names if not name.startswith(NOT_COUNTED)
    )
    return calls, ids


def test_a_filtered_listing_costs_as_many_commands_however_many_tables_do_not_fit(
    own: tuple[Flask, redis.Redis],
) -> None:
    """One fitting table: a listing for it issues as many Redis commands behind 1500 newer
    tables of another kind as behind a few, and only a few: its own reads, and the look at
    ``ROUND`` tables of the lobby's round (a full one behind as few as behind many)."""
    app, admin = own
    client = app.test_client()
    (fitting,) = made(client, TWO)
    made(client, THREE, 2 * ROUND)  # each listing below looks at ROUND of them in turn
    listed(client, "?players=2")  # the first listing: the process's connections and scripts
    alone, ids = commands_of(admin, client, "?players=2")
    assert ids == [fitting["game_id"]]
    made(client, THREE, 1500)
    crowded, ids = commands_of(admin, client, "?players=2")
    # The round's share: its script, the 3 commands it runs, and a read of each table.
    assert crowded == alone <= 4 + 4 + ROUND, (alone, crowded)
    assert ids == [fitting["game_id"]]


def lobby_sets_of(admin: redis.Redis, game_id: str) -> set[str]:
    """The lobby's sets that list ``game_id``; every lobby key is in the lobby's slot."""
    found = set()
    for key in admin.scan_iter(match="*lobby*"):
        assert LOBBY_KEY.match(key), key
        if admin.type(key) == b"zset" and admin.zscore(key, game_id) is not None:
            found.add(key.decode())
    return found


def sets_of_two_player_standard() -> set[str]:
    """The sets a 2-player standard table without a turn clock is listed in: its preset or
    any, 2 players or any, no clock or any."""
    return {
        keys.lobby_key(preset, players, turn)
        for preset, players, turn in itertools.product(("standard", None), (2, None), (0, None))
    }


def test_a_table_is_in_every_set_of_its_kind_while_listed_and_in_none_once_it_left(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    """Listed: in all 8 sets of its kind (one per combination of filters); filled: in none;
    its seat reopened: in all 8 again; expired: a listing that meets it in one set takes it
    out of all of them."""
    (table,) = made(client, TWO)
    gid, every = table["game_id"], sets_of_two_player_standard()
    assert len(every) == 8
    assert lobby_sets_of(redis_client, gid) == every
    assert redis_client.hexists(keys.LOBBY_KINDS, gid)
    game = f"/api/v1/games/{gid}"
    joined = client.post(game + "/join", json={"invite": table["seats"][1]["invite"], "name": "x"})
    assert joined.status_code == 201, joined.json
    assert lobby_sets_of(redis_client, gid) == set()
    assert not redis_client.hexists(keys.LOBBY_KINDS, gid)
    reopened = client.put(
        game + "/seats/1", json={"open": True}, headers=bearer(table["host_token"])
    )
    assert reopened.status_code == 200, reopened.json
    assert lobby_sets_of(redis_client, gid) == every
    assert listed(client, "?preset=standard&players=2&turn_seconds=0") == [gid]
    (newer,) = made(client, THREE)
    redis_client.delete(keys.game_key(gid))  # as its expiry does
    assert listed(client, "?players=2") == []
    assert lobby_sets_of(redis_client, gid) == set()
    assert not redis_client.hexists(keys.LOBBY_KINDS, gid)
    assert listed(client) == [newer["game_id"]]


def test_tables_listed_without_their_kind_are_sorted_into_its_sets_by_the_next_listing(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    """Tables listed by a version that kept one set for the whole lobby (``mt:{lobby}:tables``
    alone): the next listing, of any filter, lists the open ones in the sets of their kind and
    filters them, and drops those gone or full."""
    (two,) = made(client, TWO)
    (three,) = made(client, THREE)
    (full,) = made(client, TWO)
    filled = {"invite": full["seats"][1]["invite"], "name": "x"}
    assert client.post(f"/api/v1/games/{full['game_id']}/join", json=filled).status_code == 201
    scores = {t["game_id"]: n + 1.0 for n, t in enumerate((two, three, full))}
    scores["gone00000000"] = 10.0
    for key in redis_client.scan_iter(match="mt:{lobby}:*"):
        redis_client.delete(key)
    redis_client.zadd(keys.LOBBY_UNSORTED, scores)  # the lobby as that version left it
    assert listed(client, "?players=2") == [two["game_id"]]
    assert redis_client.exists(keys.LOBBY_UNSORTED) == 0
    assert lobby_sets_of(redis_client, two["game_id"]) == sets_of_two_player_standard()
    assert len(lobby_sets_of(redis_client, three["game_id"])) == 8
    assert redis_client.zscore(keys.lobby_key(players=3), three["game_id"]) == 2.0
    assert lobby_sets_of(redis_client, full["game_id"]) == set()
    assert listed(client) == [three["game_id"], two["game_id"]]


def test_a_table_gone_behind_a_hundred_newer_open_ones_leaves_the_lobby(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    """A table that expired behind more open tables than a listing shows, in every set it is
    in, is met all the same by the listings that follow: it does not stay in the lobby's keys
    for ever."""
    made(client, THREE, 50)
    (gone,) = made(client, THREE)
    made(client, THREE, 100)
    redis_client.delete(keys.game_key(gone["game_id"]))  # as its expiry does
    for _ in range(10):
        for query in ("", "?players=3", "?preset=standard&players=3&turn_seconds=0"):
            assert gone["game_id"] not in listed(client, query)
    assert lobby_sets_of(redis_client, gone["game_id"]) == set()
    assert not redis_client.hexists(keys.LOBBY_KINDS, gone["game_id"])
