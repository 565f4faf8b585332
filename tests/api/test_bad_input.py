"""Bad input on every endpoint: a documented 4xx problem, and the game does not change."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from service.api.lobby.schemas import MAX_LISTED
from service.api.records import DECODED, DECODED_TABLES
from service.api.remembered import Remembered
from service.store import keys
from service.store.lobby import Lobby, TableKind
from service.store.tokens import new_game_id
from tests.api.conftest import Game, bearer, dealt_game, new_game

PROBLEM_KEYS = {"type", "title", "status", "detail", "code"}


def check(r: Any, status: int, code: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.json)
    assert r.headers["Content-Type"] == "application/problem+json"
    body: dict[str, Any] = r.json
    assert set(body) >= PROBLEM_KEYS
    assert body["status"] == status
    if code is not None:
        assert body["code"] == code, body
    return body


@pytest.fixture()
def game(client: FlaskClient) -> Game:
    return dealt_game(client, seed=11)


def turn_token(game: Game) -> str:
    return game.seats[game.view()["turn"]]


POST_ACTIONS = ["play", "draw", "mark", "end-turn", "moves", "deal"]


@pytest.mark.parametrize("action", POST_ACTIONS)
def test_malformed_json_everywhere(client: FlaskClient, game: Game, action: str) -> None:
    v = game.version()
    token = game.host if action == "deal" else turn_token(game)
    nasty = [
        "{",
        '{"tile": [1, 2], ',
        "[1, 2",
        "\xff\xfe",
        "nul",
        '{"tile": [NaN, 1], "train": "0"}',  # not JSON, though Python's parser takes it
        '{"tile": [1, 2], "train": "0", "n": ' + "9" * 5000 + "}",  # beyond int() limits
        "[" * 20000 + "]" * 20000,  # nesting that would blow the recursion limit
    ]
    for raw in nasty:
        r = client.post(
            f"{game.url}/{action}",
            data=raw.encode("latin-1"),
            headers={**bearer(token), "Content-Type": "application/json"},
        )
        check(r, 400, "malformed_json")
    r = client.post(
        f"{game.url}/{action}",
        data="tile=1",
        headers={**bearer(token), "Content-Type": "text/plain"},
    )
    check(r, 415, "unsupported_media_type")
    r = client.post(f"{game.url}/{action}", json={"surprise": 1}, headers=bearer(token))
    body = check(r, 422, "validation_failed")
    assert "surprise" in body["errors"]
    assert game.version() == v


PLAY_BODIES: list[tuple[Any, int, str]] = [
    # A play without its tile or train lacks what its action needs, on /play as on /moves.
    ({}, 422, "invalid_move"),
    ({"tile": [1, 2]}, 422, "invalid_move"),
    ({"train": "0"}, 422, "invalid_move"),
    ({"tile": "1-2", "train": "0"}, 422, "validation_failed"),
    ({"tile": [1, 2, 3], "train": "0"}, 422, "validation_failed"),
    ({"tile": [1], "train": "0"}, 422, "validation_failed"),
    ({"tile": ["1", "2"], "train": "0"}, 422, "validation_failed"),
    ({"tile": [1.5, 2], "train": "0"}, 422, "validation_failed"),
    ({"tile": [True, 2], "train": "0"}, 422, "validation_failed"),
    ({"tile": [None, 2], "train": "0"}, 422, "validation_failed"),
    ({"tile": [10**30, 2], "train": "0"}, 422, "validation_failed"),
    ({"tile": [-1, 2], "train": "0"}, 422, "validation_failed"),
    ({"tile": [1e308, 2], "train": "0"}, 422, "validation_failed"),
    ({"tile": [1, 2], "train": 0}, 422, "validation_failed"),
    ({"tile": [1, 2], "train": ""}, 422, "validation_failed"),
    ({"tile": [1, 2], "train": "x" * 10000}, 422, "validation_failed"),
    ({"tile": [1, 2], "train": "0", "seat": 1}, 422, "validation_failed"),
    ({"tile": [17, 18], "train": "0"}, 422, "tile_not_in_set"),  # double-9 set
    ({"tile": [1, 2], "train": "7"}, 422, "unknown_train"),
    ({"tile": [1, 2], "train": "bogus"}, 422, "unknown_train"),
    ([1, 2], 422, "validation_failed"),
    ("play", 422, "validation_failed"),
    (None, 422, "invalid_move"),  # no body at all
    ({"action": "draw"}, 422, "validation_failed"),  # /play's action is play
]


@pytest.mark.parametrize("suffix", ["stream-tickets", "transfers"])
def test_bodyless_posts_refuse_a_body(client: FlaskClient, game: Game, suffix: str) -> None:
    token = turn_token(game)
    json_type = {**bearer(token), "Content-Type": "application/json"}
    for raw, status, code in [
        (b"{", 400, "malformed_json"),
        (b"\xff\xfe", 400, "malformed_json"),
        (b'{"x": 1}', 422, "validation_failed"),
        (b"[]", 422, "validation_failed"),
    ]:
        check(client.post(f"{game.url}/{suffix}", data=raw, headers=json_type), status, code)
    r = client.post(f"{game.url}/{suffix}", data=b"{}", headers=json_type)
    assert r.status_code == 201, r.json


@pytest.mark.parametrize(("body", "status", "code"), PLAY_BODIES)
def test_bad_play_bodies(
    client: FlaskClient, game: Game, body: Any, status: int, code: str
) -> None:
    v = game.version()
    r = client.post(f"{game.url}/play", json=body, headers=bearer(turn_token(game)))
    check(r, status, code)
    assert game.version() == v


MOVE_BODIES: list[tuple[Any, str]] = [
    ({"action": "jump"}, "validation_failed"),
    ({"action": 1}, "validation_failed"),
    ({}, "validation_failed"),
    ({"action": "play"}, "invalid_move"),
    ({"action": "play", "tile": [1, 2]}, "invalid_move"),
    ({"action": "draw", "tile": [1, 2]}, "invalid_move"),
    ({"action": "play", "tile": [1, 2], "train": "nope"}, "unknown_train"),
    ({"action": "play", "tile": [15, 15], "train": "0"}, "tile_not_in_set"),
]


@pytest.mark.parametrize(("body", "code"), MOVE_BODIES)
def test_bad_move_objects(client: FlaskClient, game: Game, body: Any, code: str) -> None:
    v = game.version()
    r = client.post(f"{game.url}/moves", json=body, headers=bearer(turn_token(game)))
    check(r, 422, code)
    assert game.version() == v


def test_illegal_and_out_of_turn(client: FlaskClient, game: Game) -> None:
    v = game.version()
    view = game.view()
    turn = view["turn"]
    waiting = game.seats[(turn + 1) % 3]
    for action in ["draw", "mark", "end-turn"]:
        check(client.post(f"{game.url}/{action}", headers=bearer(waiting)), 409, "not_your_turn")
    legal = game.legal(turn)
    hand = game.view(game.seats[turn])["hand"]
    # A tile the seat does not hold, on its own train.
    held = {tuple(sorted(t)) for t in hand}
    missing = next([a, b] for a in range(10) for b in range(a, 10) if (a, b) not in held and a != b)
    r = client.post(
        f"{game.url}/play",
        json={"tile": missing, "train": str(turn)},
        headers=bearer(game.seats[turn]),
    )
    check(r, 409)
    if not any(m["action"] == "end_turn" for m in legal):
        check(client.post(f"{game.url}/end-turn", headers=bearer(game.seats[turn])), 409)
    check(game.deal(), 409, "round_in_progress")
    assert game.version() == v


BODIES: dict[str, Any] = {"/play": {"tile": [1, 2], "train": "0"}, "/moves": {"action": "mark"}}


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("GET", ""),
        ("GET", "/legal-moves"),
        ("GET", "/score"),
        ("GET", "/position"),
        ("POST", "/deal"),
        ("POST", "/play"),
        ("POST", "/draw"),
        ("POST", "/mark"),
        ("POST", "/end-turn"),
        ("POST", "/moves"),
    ],
)
def test_unknown_games(client: FlaskClient, game: Game, method: str, suffix: str) -> None:
    for gid in ["AAAAAAAAAAAA", "x", "..%2F..", "a" * 300, "%7Bx%7D"]:
        r = client.open(
            f"/api/v1/games/{gid}{suffix}",
            method=method,
            headers=bearer(game.host),
            json=BODIES.get(suffix),
        )
        check(r, 404)


def test_create_refusals(client: FlaskClient) -> None:
    bad: list[tuple[Any, int, str]] = [
        ({}, 422, "validation_failed"),
        ({"players": "ann"}, 422, "validation_failed"),
        ({"players": ["ann"]}, 422, "invalid_rules"),
        ({"players": [""] * 3}, 422, "validation_failed"),
        ({"players": ["a"] * 21}, 422, "validation_failed"),
        ({"players": ["a", "b"], "preset": "nope"}, 422, "invalid_rules"),
        ({"players": ["a", "b"], "options": {"set": 99}}, 422, "invalid_rules"),
        ({"players": ["a", "b"], "options": {"hand_size": 10**40}}, 422, "invalid_rules"),
        ({"players": ["a", "b"], "options": {"nonsense": True}}, 422, "invalid_rules"),
        ({"players": ["a", "b"], "seed": -1}, 422, "validation_failed"),
        ({"players": ["a", "b"], "seed": 2**70}, 422, "validation_failed"),
        ({"players": ["a", "b"], "seed": "7"}, 422, "validation_failed"),
        ({"players": ["a", "b"], "extra": 1}, 422, "validation_failed"),
        ({"players": ["a", "b"], "position": {}}, 422, "validation_failed"),
        ({"position": {}}, 422, "invalid_position"),
        ({"position": {"format": "mexican-train-position/1"}}, 422, "invalid_position"),
        ({"position": []}, 422, "validation_failed"),
        ([], 422, "validation_failed"),
    ]
    for body, status, code in bad:
        check(client.post("/api/v1/games", json=body), status, code)
    check(
        client.post("/api/v1/games", data=b"{", headers={"Content-Type": "application/json"}),
        400,
        "malformed_json",
    )


@pytest.mark.parametrize(
    ("field", "value", "detail"),
    [
        ("seed", 7, "a position carries its own players and rules"),
        ("preset", "standard", "a position carries its own players and rules"),
        ("public", True, "a game made from a position takes no table options"),
        ("turn_seconds", 30, "a game made from a position takes no table options"),
        ("auto_deal", True, "a game made from a position takes no table options"),
    ],
)
def test_a_field_beside_a_position_is_refused_for_what_it_is(
    client: FlaskClient, field: str, value: Any, detail: str
) -> None:
    body = {"position": {"format": "mexican-train-position/1"}, field: value}
    r = client.post("/api/v1/games", json=body)
    check(r, 422, "validation_failed")
    assert r.get_json()["errors"][field] == [detail]


def test_deep_free_form_json_with_an_idempotency_key_is_refused_as_without_one(
    client: FlaskClient,
) -> None:
    # options and position are free-form objects; the key names its request by the body, and
    # the body must not fail to be named (orjson reads deeper JSON than it writes).
    deep = "[" * 300 + "]" * 300
    key = {"Content-Type": "application/json", "Idempotency-Key": "k-" + "7" * 30}
    for raw, code in [
        ('{"players": ["a", "b"], "options": {"set": ' + deep + "}}", "invalid_rules"),
        (
            '{"position": {"format": "mexican-train-position/1", "x": ' + deep + "}}",
            "invalid_position",
        ),
    ]:
        check(client.post("/api/v1/games", data=raw.encode(), headers=key), 422, code)


def test_oversized_body(client: FlaskClient, game: Game) -> None:
    v = game.version()
    huge = {"tile": [1, 2], "train": "0", "pad": "x" * (70 * 1024)}
    check(
        client.post(f"{game.url}/play", json=huge, headers=bearer(turn_token(game))),
        413,
        "body_too_large",
    )
    check(client.post("/api/v1/games", json={"players": ["a"] * 20000}), 413, "body_too_large")
    assert game.version() == v


def test_bad_headers(client: FlaskClient, game: Game) -> None:
    v = game.version()
    token = turn_token(game)
    too_long = "k" * 256
    for bad_key in ['"unterminated', '"a"b"', "", f'"{too_long}"', too_long, "a b", "é", '"é"']:
        r = client.post(f"{game.url}/mark", headers={**bearer(token), "Idempotency-Key": bad_key})
        check(r, 400, "malformed_idempotency_key")
    for bad_tag in ["7", "W/", '"7', "abc, def"]:
        r = client.post(f"{game.url}/mark", headers={**bearer(token), "If-Match": bad_tag})
        check(r, 400, "malformed_precondition")
    check(client.get(game.url, headers={"If-None-Match": "nope"}), 400, "malformed_precondition")
    assert game.version() == v


def test_routes_and_methods(client: FlaskClient, game: Game) -> None:
    check(client.get("/api/v1/nothing"), 404, "not_found")
    r = client.get(f"{game.url}/play")
    check(r, 405, "method_not_allowed")
    assert "POST" in r.headers["Allow"]
    check(client.delete(game.url), 405, "method_not_allowed")
    check(client.put("/api/v1/games"), 405, "method_not_allowed")


def test_chunked_body_that_is_not_json(live_server: str) -> None:
    """A body sent with Transfer-Encoding: chunked (no Content-Length) is held to the same
    415 as any other: it must not be ignored (and the deal applied) on a real server."""
    import requests

    api = live_server + "/api/v1/games"
    created = requests.post(api, json={"players": ["ann", "bo"]}, timeout=10).json()
    url = f"{api}/{created['game_id']}"
    host = bearer(created["host_token"])

    def chunks() -> Any:
        yield b"deal=please"

    r = requests.post(
        url + "/deal", data=chunks(), headers={**host, "Content-Type": "text/plain"}, timeout=10
    )
    assert r.status_code == 415 and r.headers["Content-Type"] == "application/problem+json"
    assert r.json()["code"] == "unsupported_media_type"
    r = requests.post(api, data=chunks(), timeout=10)  # no Content-Type at all
    assert r.status_code == 415 and r.headers["Content-Type"] == "application/problem+json"
    assert r.json()["code"] == "unsupported_media_type"
    assert requests.get(url, timeout=10).json()["version"] == 1
    # A chunked JSON body is still read.
    r = requests.post(
        url + "/deal",
        data=iter([b"{", b"}"]),
        headers={**host, "Content-Type": "application/json"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    # An empty chunked body is no body; a huge one is 413 like any other.
    r = requests.post(url + "/deal", data=iter([]), headers=host, timeout=10)
    assert r.status_code == 409, r.text  # round in progress: the body was not the problem
    big = iter([b"x" * 65536] * 64)
    r = requests.post(
        url + "/deal", data=big, headers={**host, "Content-Type": "text/plain"}, timeout=10
    )
    assert r.status_code == 413, r.text
    # Nor is a chunked JSON body over the limit cut to the limit and read: valid JSON padded
    # with spaces would otherwise be accepted whatever its size.
    padded = [b'{"players": ["ann", "bo"]}'] + [b" " * 65536] * 4
    r = requests.post(
        api, data=iter(padded), headers={"Content-Type": "application/json"}, timeout=10
    )
    assert r.status_code == 413, r.text
    assert r.headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize(
    "chunks",
    [
        b"zz\r\n{}\r\n0\r\n\r\n",  # a size that is not hexadecimal
        b"2\r\n{}XX0\r\n\r\n",  # a chunk without its CRLF
        b"-2\r\n{}\r\n0\r\n\r\n",
    ],
)
def test_a_malformed_chunked_body_is_a_problem_and_ends_the_connection(
    live_server: str, chunks: bytes
) -> None:
    """gunicorn's chunked reader raises its own parse errors out of the app's body read."""
    import socket
    from urllib.parse import urlsplit

    import requests

    api = live_server + "/api/v1/games"
    created = requests.post(api, json={"players": ["ann", "bo"]}, timeout=10).json()
    path = f"/api/v1/games/{created['game_id']}/deal"
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {created['host_token']}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    where = urlsplit(live_server)
    with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
        sock.sendall(head.encode() + chunks)
        answer = b""
        while chunk := sock.recv(65536):  # the server closes the connection after its answer
            answer += chunk
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # one answer, then the connection ends
    status, _, rest = answer.partition(b"\r\n")
    assert status.split(b" ")[1] == b"400", answer
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in headers.lower(), answer
    assert b'"code":"malformed_request"' in body, answer
    assert requests.get(f"{api}/{created['game_id']}", timeout=10).json()["version"] == 1


# Each refused body or query, and the field its `errors` must name at the top level.
NAMED_FIELDS: list[tuple[str, str, Any, str]] = [
    ("POST", "/api/v1/games", {"players": ["a", "b"], "turn_seconds": 3}, "turn_seconds"),
    ("POST", "/api/v1/games", {"players": ["a", "b"], "seed": "7"}, "seed"),
    ("POST", "/api/v1/lobby/seek", {"name": "a", "players": 2, "turn_seconds": 3}, "turn_seconds"),
    ("POST", "/api/v1/lobby/seek", {"name": "a", "players": 15}, "players"),
    ("GET", "/api/v1/lobby?players=x", None, "players"),
]


@pytest.mark.parametrize(("method", "path", "body", "field"), NAMED_FIELDS)
def test_validation_errors_map_each_field_to_its_messages(
    client: FlaskClient, method: str, path: str, body: Any, field: str
) -> None:
    """docs/api.md §9: `errors` is field -> messages, whichever check refused the field (the
    request's location, `json` or `query`, is never a key of its own)."""
    r = client.open(path, method=method, json=body)
    errors = check(r, 422, "validation_failed")["errors"]
    assert set(errors) == {field}, errors
    assert all(isinstance(m, str) for m in errors[field]), errors


# A boolean field sent as a string or a number, and the field `errors` must name.
NOT_BOOLEANS: list[tuple[str, Any, str]] = [
    ("/api/v1/games", {"players": ["a", {"open": True}], "public": "yes"}, "public"),
    ("/api/v1/games", {"players": ["a", "b"], "auto_deal": 1}, "auto_deal"),
    ("/api/v1/games", {"players": ["a", "b"], "rated": "false"}, "rated"),
    ("/api/v1/lobby/seek", {"name": "a", "players": 2, "rated": "yes"}, "rated"),
    ("/api/v1/lobby/seek", {"name": "a", "players": 2, "rated": 0}, "rated"),
]


@pytest.mark.parametrize(("path", "body", "field"), NOT_BOOLEANS)
def test_a_boolean_is_json_true_or_false(
    client: FlaskClient, path: str, body: Any, field: str
) -> None:
    """The document types these fields boolean: "yes", "false", 1 or 0 are refused as any
    other value of the wrong type, and nothing is made (no game, no lobby table)."""
    errors = check(client.post(path, json=body), 422, "validation_failed")["errors"]
    assert set(errors) == {field}, errors
    assert client.get("/api/v1/lobby").json == {"tables": []}


def test_a_seat_change_opens_only_with_json_true(client: FlaskClient) -> None:
    game = new_game(client, players=["a", "b"])
    for value in (1, "true", "yes"):
        r = client.put(f"{game.url}/seats/1", json={"open": value}, headers=bearer(game.host))
        assert set(check(r, 422, "validation_failed")["errors"]) == {"open"}, value
    assert game.version() == 1


def test_a_lobby_filter_left_empty_filters_nothing(client: FlaskClient) -> None:
    """API.md writes the listing as ``GET /lobby?preset=&players=&turn_seconds=``, and a search
    form sends a field left blank that way: an empty filter is no filter (it was 422); a value
    that is no preset, count or clock is still refused."""
    made = client.post(
        "/api/v1/games", json={"players": ["ann", {"open": True}], "public": True}
    ).json
    assert made is not None
    for query in ("preset=", "players=", "turn_seconds=", "preset=&players=&turn_seconds="):
        r = client.get("/api/v1/lobby?" + query)
        assert r.status_code == 200, (query, r.json)
        assert made["game_id"] in [t["game_id"] for t in r.json["tables"]], query
    listed = client.get("/api/v1/lobby?preset=standard&players=&turn_seconds=0").json
    assert made["game_id"] in [t["game_id"] for t in listed["tables"]]
    other = client.get("/api/v1/lobby?players=&preset=classic").json
    assert made["game_id"] not in [t["game_id"] for t in other["tables"]]
    for query in ("preset=bogus", "players=1", "players=x", "turn_seconds=-1"):
        check(client.get("/api/v1/lobby?" + query), 422, "validation_failed")


def listed_copies(client: FlaskClient, redis_client: redis.Redis, n: int) -> list[str]:
    """``n`` public 3-player tables with an open seat, listed newer than every table so far,
    newest first: copies of one made through the API, written straight to Redis (hundreds of
    creations would take seconds each)."""
    body = {"players": ["bo", {"open": True}, {"open": True}], "public": True}
    made = client.post("/api/v1/games", json=body).json
    assert made is not None
    fields = redis_client.hgetall(keys.game_key(made["game_id"]))
    newest = max(score for _, score in redis_client.zrange(keys.LOBBY, 0, -1, withscores=True))
    ids = [made["game_id"]] + [new_game_id() for _ in range(n - 1)]
    pipe = redis_client.pipeline()
    for game_id in ids:
        pipe.hset(keys.game_key(game_id), mapping=fields)
    pipe.execute()
    listed = {game_id: newest + 1 + i for i, game_id in enumerate(ids)}
    Lobby(redis_client, bucket_ttl=3600).add(TableKind("standard", 3, 0), listed)
    return ids[::-1]


def test_a_lobby_filter_finds_its_table_behind_many_newer_ones_of_other_kinds(
    client: FlaskClient, redis_client: redis.Redis
) -> None:
    """The listing filters the lobby, not a first page of it: a 2-player table made before
    2 * 100 + 1 public 3-player ones is listed for ``?players=2``, and only it."""
    body: dict[str, Any] = {"players": ["ann", {"open": True}], "public": True}
    older = client.post("/api/v1/games", json=body).json
    assert older is not None
    listed_copies(client, redis_client, 2 * MAX_LISTED + 1)
    listed = client.get("/api/v1/lobby?players=2").json["tables"]
    assert [t["game_id"] for t in listed] == [older["game_id"]]
    everything = client.get("/api/v1/lobby").json["tables"]
    assert len(everything) == MAX_LISTED
    assert older["game_id"] not in [t["game_id"] for t in everything]


def test_a_lobby_filter_skips_no_table_when_newer_ones_leave_between_its_reads(
    client: FlaskClient, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing reads on past a table gone (expired) among the newest that fit; a table that
    leaves the lobby while the listing reads it (filled, reopened elsewhere) moves the older
    ones up: the next read still starts right after the last table read."""
    body: dict[str, Any] = {"players": ["ann", {"open": True}, {"open": True}], "public": True}
    older = client.post("/api/v1/games", json=body).json
    assert older is not None
    newer = listed_copies(client, redis_client, MAX_LISTED)
    # As its expiry does: one among the newest, which the lobby's round (oldest first) does
    # not meet before the listing reads it.
    redis_client.delete(keys.game_key(newer.pop(MAX_LISTED // 2)))
    read = Lobby.page

    def read_then_one_leaves(self: Lobby, *args: Any, **kwargs: Any) -> Any:
        page = read(self, *args, **kwargs)
        redis_client.zrem(keys.lobby_key(players=3), newer.pop(0))  # one read already fills
        return page

    monkeypatch.setattr(Lobby, "page", read_then_one_leaves)
    listed = client.get("/api/v1/lobby?players=3").json["tables"]
    assert len(listed) == MAX_LISTED and listed[-1]["game_id"] == older["game_id"]


def test_a_lobby_listing_keeps_no_decoded_game(
    client: FlaskClient, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A listing reads up to 1000 games: the process's copies of decoded states and tables,
    256 each and kept for the games it plays, are left as they were."""
    listed_copies(client, redis_client, 3)
    for decoded in (DECODED, DECODED_TABLES):
        monkeypatch.setattr(decoded, "kept", Remembered(256))
    assert len(client.get("/api/v1/lobby").json["tables"]) == 3
    assert (len(DECODED.kept), len(DECODED_TABLES.kept)) == (0, 0)


def test_a_leaderboard_parameter_left_empty_takes_its_default(client: FlaskClient) -> None:
    """API.md writes the leaderboard as ``GET /leaderboard?kind=people|bots&limit=``, as it
    writes the lobby's filters: a parameter sent without a value is one left out, so its
    default applies; a value outside its range is still refused."""
    for query in ("limit=", "kind=", "kind=&limit=", "kind=people&limit="):
        r = client.get("/api/v1/leaderboard?" + query)
        assert r.status_code == 200, (query, r.json)
        assert r.json == {"kind": "people", "players": []}, query
    assert client.get("/api/v1/leaderboard?kind=bots&limit=").json["kind"] == "bots"
    for query in ("limit=0", "limit=101", "limit=x", "kind=aliens"):
        check(client.get("/api/v1/leaderboard?" + query), 422, "validation_failed")


@pytest.mark.parametrize(
    ("suffix", "query", "role", "field"),
    [
        ("/samples", "n=1&n=200", "seat", "n"),
        ("/samples", "seed=1&seed=-1", "seat", "seed"),
        ("/events", "after=0&after=99", "host", "after"),
        ("/events", "limit=1&limit=0", "host", "limit"),
        ("/api/v1/lobby", "players=2&players=x", None, "players"),
        ("/api/v1/leaderboard", "limit=5&limit=-1", None, "limit"),
    ],
)
def test_a_query_parameter_sent_twice_is_refused(
    client: FlaskClient, game: Game, suffix: str, query: str, role: str | None, field: str
) -> None:
    """Which of two values counts is a guess a proxy or a cache in front may make otherwise,
    and the other value would go unchecked: the request is refused instead."""
    url = (game.url + suffix if role else suffix) + "?" + query
    token = {"seat": game.seats[0], "host": game.host}.get(role or "")
    headers = {**(bearer(token) if token else {}), "Accept": "application/json"}
    body = check(client.get(url, headers=headers), 422, "validation_failed")
    assert field in body["errors"], body
