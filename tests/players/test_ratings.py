"""Rated games rate every seat once, as openskill's Plackett-Luce model does from the result
(winners rank 1, the others by total, equal totals sharing a rank), also when the request that
ended the game is sent again; leaderboards list people and bots apart."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis
import requests
from openskill.models import PlackettLuce

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.live.helpers import SSE, answered, auth, create, entries, send, sse_entries
from tests.players.conftest import ENV
from tests.players.helpers import new_player, play_out, player
from tests.redis_clients import keys_not_starting, user_without


def expected_ratings(
    before: list[dict[str, Any]], score: dict[str, Any]
) -> list[tuple[float, float]]:
    """openskill on its own, from the score: the test's reading of the contract's ranking."""
    model = PlackettLuce()
    winners = set(score["winners"])
    totals = [p["total"] for p in score["players"]]
    others = sorted({t for s, t in enumerate(totals) if s not in winners})
    ranks = [1.0 if s in winners else 2.0 + others.index(t) for s, t in enumerate(totals)]
    teams = [[model.rating(mu=p["rating"]["mu"], sigma=p["rating"]["sigma"])] for p in before]
    return [(team[0].mu, team[0].sigma) for team in model.rate(teams, ranks=ranks)]


@pytest.mark.parametrize("seats", [2, 4, 14])
def test_a_rated_game_rates_every_seat_once_as_openskill_does(server: str, seats: int) -> None:
    people = [new_player(server, f"p{i}") for i in range(seats)]
    before = [player(server, p["player_id"]) for p in people]
    game = create(
        server,
        players=[{"name": p["name"], "player_token": p["player_token"]} for p in people],
        rated=True,
        options={"rounds": 1},
    )
    key, token, last = play_out(server, game, seed=seats)
    score = requests.get(f"{server}/api/v1/games/{game['game_id']}/score", timeout=10).json()
    after = [player(server, p["player_id"]) for p in people]
    expected = expected_ratings(before, score)
    for seat, ((mu, sigma), got) in enumerate(zip(expected, after, strict=True)):
        assert abs(got["rating"]["mu"] - mu) < 1e-9 and abs(got["rating"]["sigma"] - sigma) < 1e-9
        assert got["rating"]["display"] == pytest.approx(mu - 3 * sigma, abs=1e-9)
        assert (got["games"], got["wins"]) == (1, int(seat in score["winners"]))
    # The game-ending request, sent again with its key: the kept answer, and no second rating.
    again = send(
        "POST",
        f"{server}/api/v1/games/{game['game_id']}/moves",
        json=last["move"],
        headers={**auth(token), "Idempotency-Key": key},
    )
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert [player(server, p["player_id"]) for p in people] == after


def test_ratings_redis_refused_are_made_by_the_next_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # The app's own Redis user may not touch players once the game is made: the move that ends
    # it is stored, then its ratings are refused, as when Redis goes away in between.
    with RedisServer() as redis_server:
        admin = redis.Redis.from_url(redis_server.url)
        app_url = user_without(redis_server, admin)
        with start_gunicorn(app_url, env=ENV, with_worker=False) as base:
            people = [new_player(base, f"p{i}") for i in range(2)]
            game = create(
                base,
                players=[{"name": p["name"], "player_token": p["player_token"]} for p in people],
                rated=True,
                options={"rounds": 1},
            )
            user_without(redis_server, admin, keys=keys_not_starting("mt:{player:"))
            answers = answered(monkeypatch)
            play_out(base, game, seed=3)
            assert set(answers) == {200}  # the game-ending move's too, on its first try
            user_without(redis_server, admin)
            assert [player(base, p["player_id"])["games"] for p in people] == [0, 0]
            view = requests.get(f"{base}/api/v1/games/{game['game_id']}", timeout=10)
            assert view.status_code == 200 and view.json()["status"] == "game_over"
            assert [player(base, p["player_id"])["games"] for p in people] == [1, 1]


def test_a_rated_game_of_bots_that_ends_within_its_creation_rates_them(server: str) -> None:
    """A table of bots alone that deals by itself may play its whole (short) game within the
    create request's bot budget: that game ends too, and rates its seats once."""
    bots = ("bot-random", "bot-greedy")
    before = [player(server, b)["games"] for b in bots]
    seats = [{"name": "r", "bot": "random"}, {"name": "g", "bot": "greedy"}]
    options = {"rounds": 1, "set": 6}
    game = create(server, players=seats, rated=True, auto_deal=True, options=options)
    assert game["status"] == "game_over"  # ended in the creation's own answer
    assert [player(server, b)["games"] for b in bots] == [n + 1 for n in before]
    view = requests.get(f"{server}/api/v1/games/{game['game_id']}", timeout=10)
    assert view.status_code == 200  # the game's next read rates nothing twice
    assert [player(server, b)["games"] for b in bots] == [n + 1 for n in before]


def test_a_rated_game_needs_a_player_or_a_bot_in_every_seat(server: str) -> None:
    ann = new_player(server, "ann")
    seats = [{"name": "ann", "player_token": ann["player_token"]}, "bo"]
    game = create(server, players=seats, rated=True)
    r = send(
        "POST", f"{server}/api/v1/games/{game['game_id']}/deal", headers=auth(game["table_token"])
    )
    assert (r.status_code, r.json()["code"]) == (422, "unrated_seat")
    twice = [seats[0], {"name": "ann2", "player_token": ann["player_token"]}]
    r = send("POST", f"{server}/api/v1/games", json={"players": twice, "rated": True})
    assert (r.status_code, r.json()["code"]) == (422, "validation_failed")
    r = send(
        "POST",
        f"{server}/api/v1/games",
        json={"players": [{"name": "x", "player_token": "p.nope.x"}, "y"]},
    )
    assert (r.status_code, r.json()["code"]) == (422, "validation_failed")


def test_a_seat_of_a_rated_game_reopened_before_the_deal_is_joined_by_a_player_only(
    server: str,
) -> None:
    ann, bo, cy = (new_player(server, name) for name in ("ann", "bo", "cy"))
    seats = [{"name": p["name"], "player_token": p["player_token"]} for p in (ann, bo)]
    game = create(server, players=seats, rated=True)
    gid, table = game["game_id"], auth(game["table_token"])
    url = f"{server}/api/v1/games/{gid}"
    opened = send("PUT", f"{url}/seats/0", json={"open": True}, headers=table)
    assert opened.status_code == 200, opened.text
    invite = opened.json()["changed"]["invite"]
    version = requests.get(url, timeout=10).json()["version"]
    anonymous = send("POST", f"{url}/join", json={"invite": invite, "name": "anon"})
    assert (anonymous.status_code, anonymous.json()["code"]) == (422, "unrated_seat")
    assert requests.get(url, timeout=10).json()["version"] == version  # nothing changed
    joined = send(
        "POST", f"{url}/join",
        json={"invite": invite, "name": "cy", "player_token": cy["player_token"]},
    )  # fmt: skip
    assert joined.status_code == 201, joined.text


def test_a_dealt_rated_game_reopens_no_seat_so_no_second_account_reads_its_hand(
    server: str,
) -> None:
    """The table token is kept by a seated player: were it to reopen another seat mid-game and
    join it with a second account of its own, that account would read the seat's hand."""
    ann, bo, alt = (new_player(server, name) for name in ("ann", "bo", "alt"))
    seats = [{"name": p["name"], "player_token": p["player_token"]} for p in (ann, bo)]
    game = create(server, players=seats, rated=True, auto_deal=True)
    gid, table = game["game_id"], auth(game["table_token"])
    url = f"{server}/api/v1/games/{gid}"
    bo_token = game["seats"][1]["token"]
    dealt = requests.get(url, headers=auth(bo_token), timeout=10).json()
    assert dealt["status"] == "in_round" and dealt["hand"]
    opened = send("PUT", f"{url}/seats/1", json={"open": True}, headers=table)
    if opened.status_code == 200:  # what the refusal prevents, spelled out when it fails
        joined = send(
            "POST", f"{url}/join",
            json={"invite": opened.json()["changed"]["invite"], "name": "alt",
                  "player_token": alt["player_token"]},
        )  # fmt: skip
        seen = requests.get(url, headers=auth(joined.json()["token"]), timeout=10).json()
        assert seen["hand"] != dealt["hand"], "a second account read the reopened seat's hand"
    assert (opened.status_code, opened.json()["code"]) == (409, "rated_game_dealt")
    after = requests.get(url, headers=auth(bo_token), timeout=10).json()
    assert (after["version"], after["hand"]) == (dealt["version"], dealt["hand"])
    handed = send("PUT", f"{url}/seats/1", json={"bot": "random"}, headers=table)
    assert handed.status_code == 200, handed.text  # a bot may still take the seat over


def test_the_leaderboards_list_people_and_bots_apart(server: str) -> None:
    ann, bo = new_player(server, "ann"), new_player(server, "bo")
    for game_number in range(5):
        seats = [
            {"name": "ann", "player_token": ann["player_token"]},
            {"name": "bo", "player_token": bo["player_token"]},
            {"name": "cpu", "bot": "greedy"},
        ]
        game = create(server, players=seats, rated=True, options={"rounds": 3})
        play_out(server, game, seed=game_number)
    people = requests.get(f"{server}/api/v1/leaderboard", timeout=10).json()
    bots = requests.get(f"{server}/api/v1/leaderboard", params={"kind": "bots"}, timeout=10).json()
    listed = {p["player_id"]: p for p in people["players"]}
    assert people["kind"] == "people" and {ann["player_id"], bo["player_id"]} <= set(listed)
    displays = [p["rating"]["display"] for p in people["players"]]
    assert displays == sorted(displays, reverse=True)
    assert [p["player_id"] for p in bots["players"]] == ["bot-greedy"]
    assert bots["players"][0]["games"] >= 5 and bots["players"][0]["kind"] == "bot"
    levels = requests.get(f"{server}/api/v1/bots", timeout=10).json()
    assert {level["player_id"] for level in levels} >= {"bot-greedy", "bot-planner"}
    bad = requests.get(f"{server}/api/v1/leaderboard", params={"limit": 101}, timeout=10)
    assert (bad.status_code, bad.json()["code"]) == (422, "validation_failed")
    missing = requests.get(f"{server}/api/v1/players/nobody-here1", timeout=10)
    assert (missing.status_code, missing.json()["code"]) == (404, "player_not_found")


def drawn_tiles(base: str, gid: str, token: str) -> list[list[int]]:
    """The tiles the token is shown drawn by any seat, from the game's JSON log."""
    page = entries(base, gid, token)
    return [
        event["tile"]
        for entry in page["entries"]
        for event in entry["events"]
        if event["type"] == "tile_drawn" and "tile" in event
    ]


def play_until_both_drew(base: str, game: dict[str, Any]) -> None:
    """Deal, then play (drawing whenever a seat may) until each seat has drawn a tile."""
    gid, tokens = game["game_id"], [s["token"] for s in game["seats"]]
    send("POST", f"{base}/api/v1/games/{gid}/deal", headers=auth(game["table_token"]))
    drew: set[int] = set()
    while drew != {0, 1}:
        view = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
        assert view["status"] != "game_over", "the game ended before both seats drew"
        if view["status"] == "round_over":
            send("POST", f"{base}/api/v1/games/{gid}/deal", headers=auth(game["table_token"]))
            continue
        seat = view["turn"]
        moves = send(
            "GET", f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(tokens[seat])
        ).json()["moves"]
        move = next((m for m in moves if m["action"] == "draw"), moves[0])
        drew |= {seat} if move["action"] == "draw" else set()
        r = send("POST", f"{base}/api/v1/games/{gid}/moves", json=move, headers=auth(tokens[seat]))
        assert r.status_code == 200, r.text


def test_nobody_at_a_rated_table_sees_a_hidden_tile_through_its_host_token(server: str) -> None:
    people = [new_player(server, name) for name in ("ann", "bo")]
    seats = [{"name": p["name"], "player_token": p["player_token"]} for p in people]
    seeded = send(
        "POST", f"{server}/api/v1/games", json={"players": seats, "rated": True, "seed": 7}
    )
    assert (seeded.status_code, seeded.json()["code"]) == (422, "validation_failed")
    assert "seed" in seeded.json()["errors"]
    game = create(server, players=seats, rated=True, options={"rounds": 3})
    gid, host = game["game_id"], game["host_token"]
    play_until_both_drew(server, game)
    assert len(drawn_tiles(server, gid, game["seats"][0]["token"])) >= 1  # its own draws
    assert drawn_tiles(server, gid, host) == []
    for path in ("position", "history"):
        hidden = send("GET", f"{server}/api/v1/games/{gid}/{path}", headers=auth(host))
        assert (hidden.status_code, hidden.json()["code"]) == (409, "game_not_over"), path
    ticket = send("POST", f"{server}/api/v1/games/{gid}/stream-tickets", headers=auth(host))
    assert ticket.status_code == 201, ticket.text
    stream = requests.get(
        f"{server}/api/v1/games/{gid}/events",
        params={"access_token": ticket.json()["ticket"]},
        headers={"Accept": SSE},
        stream=True,
        timeout=10,
    )
    assert stream.status_code == 200
    version = requests.get(f"{server}/api/v1/games/{gid}", timeout=10).json()["version"]
    shown = []
    for entry in sse_entries(stream):
        shown.append(entry)
        if entry["version"] == version:
            break
    stream.close()
    drawn = [e for entry in shown for e in entry["events"] if e["type"] == "tile_drawn"]
    assert len(drawn) >= 2 and all("tile" not in e for e in drawn)
    play_out(server, game, seed=3)
    assert len(drawn_tiles(server, gid, host)) >= 2  # once it is over, the host sees them all
    after = send("GET", f"{server}/api/v1/games/{gid}/position", headers=auth(host))
    assert after.status_code == 200 and any(after.json()["hands"])


def test_a_new_player_is_named_by_the_location_of_its_record(server: str) -> None:
    """201 Created names what it made: a client follows Location to the player's record,
    also from a replay of the same Idempotency-Key."""
    key = {"Idempotency-Key": f'"{uuid.uuid4()}"'}
    made = [send("POST", f"{server}/api/v1/players", json={"name": "ann"}, headers=key)]
    made.append(send("POST", f"{server}/api/v1/players", json={"name": "ann"}, headers=key))
    player_id = made[0].json()["player_id"]
    for r in made:
        assert (r.status_code, r.headers.get("Location")) == (201, f"/api/v1/players/{player_id}")
    record = requests.get(server + made[1].headers["Location"], timeout=10)
    assert (record.status_code, record.json()["name"]) == (200, "ann")
