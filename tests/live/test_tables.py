"""Tables: a person against server bots, open seats and invites, takeovers, turn clocks."""

from __future__ import annotations

import itertools
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import pytest
import requests

from tests.live.helpers import TIMEOUT, assert_replays, auth, create, entries, view

BOTS3 = [
    {"name": f"cpu{i}", "bot": level} for i, level in enumerate(("random", "greedy", "planner"))
]


def join(base: str, gid: str, invite: str, name: str = "bo") -> requests.Response:
    return requests.post(
        f"{base}/api/v1/games/{gid}/join", json={"invite": invite, "name": name}, timeout=TIMEOUT
    )


def put_seat(base: str, gid: str, seat: int, body: Any, token: str | None) -> requests.Response:
    return requests.put(
        f"{base}/api/v1/games/{gid}/seats/{seat}", json=body, headers=auth(token), timeout=TIMEOUT
    )


def act(base: str, gid: str, token: str, rng: random.Random) -> dict[str, Any]:
    legal = requests.get(f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token), timeout=30)
    assert legal.status_code == 200, legal.text
    moves = legal.json()["moves"]
    assert moves, "bots always hand the turn back to the person"
    done = requests.post(
        f"{base}/api/v1/games/{gid}/moves", json=rng.choice(moves), headers=auth(token), timeout=30
    )
    assert done.status_code == 200, done.text
    body: dict[str, Any] = done.json()
    return body


@pytest.mark.slow
def test_a_person_plays_a_whole_game_against_three_bots_with_only_legal_moves_and_moves(
    live: str,
) -> None:
    created = create(live, players=["ann", *BOTS3], auto_deal=True)
    gid, token = created["game_id"], created["seats"][0]["token"]
    assert [s["token"] is None for s in created["seats"]] == [False, True, True, True]
    assert created["status"] == "in_round", "the last seat was filled at creation: dealt at once"
    rng, status, requests_made = random.Random(5), created["status"], 0
    while status != "game_over":
        body = act(live, gid, token, rng)
        requests_made += 2
        status = body["status"]
        # The answer counts the bots' moves after the person's: the turn is back with seat 0
        # (or the game is over).
        assert body["turn"] in (0, None)
    log = entries(live, gid, token)["entries"]
    assert {"player", "bot", "auto"} <= {e["by"] for e in log}
    assert sum(e["action"] == {"action": "deal"} for e in log) == 13
    assert log[-1]["events"][-1]["type"] == "game_over"
    assert requests_made == 2 * sum(e["by"] == "player" for e in log)
    assert assert_replays(live, gid) == sum(e["seat"] is not None for e in log)


def test_join_flow_and_the_join_race(live: str) -> None:
    created = create(live, players=["ann", {"open": True}, {"open": True}])
    gid, seats = created["game_id"], created["seats"]
    assert [s["invite"] is not None for s in seats] == [False, True, True]
    assert seats[1]["invite_url"].endswith(f"/#/join/{gid}/{seats[1]['invite']}")
    host = created["host_token"]
    deal = requests.post(f"{live}/api/v1/games/{gid}/deal", headers=auth(host), timeout=TIMEOUT)
    assert (deal.status_code, deal.json()["code"]) == (409, "seats_open")
    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda i: join(live, gid, seats[1]["invite"], f"p{i}"), range(10)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [201] + [409] * 9
    assert {a.json()["code"] for a in answers if a.status_code == 409} == {"invite_used"}
    joined = next(a.json() for a in answers if a.status_code == 201)
    assert joined["seat"] == 1
    me = view(live, gid, joined["token"])
    assert me["players"][1]["name"] == joined["name"] and me["players"][1]["open"] is False
    assert me["players"][2]["open"] is True
    assert join(live, gid, seats[1]["invite"]).json()["code"] == "invite_used"
    assert join(live, gid, "no-such-invite").json()["code"] == "invite_not_found"
    assert join(live, gid, seats[2]["invite"], "cy").status_code == 201
    dealt = requests.post(f"{live}/api/v1/games/{gid}/deal", headers=auth(host), timeout=TIMEOUT)
    assert dealt.status_code == 200


def test_takeover_mid_round_moves_at_once_and_reopen_revokes_the_token(live: str) -> None:
    created = create(live, players=["ann", "bo"], auto_deal=True, seed=11)
    gid, host = created["game_id"], created["host_token"]
    tokens = [s["token"] for s in created["seats"]]
    on_turn = view(live, gid)["turn"]
    took = put_seat(live, gid, on_turn, {"bot": "greedy"}, host)
    assert took.status_code == 200, took.text
    body = took.json()
    assert body["changed"] == {
        "seat": on_turn,
        "bot": "greedy",
        "open": False,
        "invite": None,
        "invite_url": None,
    }
    # It was the seat's turn: the bot played it in the same request.
    bot_moves = [e for e in entries(live, gid)["entries"] if e["by"] == "bot"]
    assert bot_moves and bot_moves[0]["seat"] == on_turn
    assert body["turn"] != on_turn
    old = requests.get(f"{live}/api/v1/games/{gid}", headers=auth(tokens[on_turn]), timeout=30)
    assert old.status_code == 401
    reopened = put_seat(live, gid, on_turn, {"open": True}, host).json()["changed"]
    assert reopened["open"] is True and reopened["invite"]
    back = join(live, gid, reopened["invite"], "again")
    assert back.status_code == 201 and back.json()["seat"] == on_turn
    assert view(live, gid, back.json()["token"])["hand"]
    # The host acts for no seat: its entries' seat is null, the seat changed is in the action.
    changes = [
        e for e in entries(live, gid)["entries"] if e["action"]["action"] in ("seat", "join")
    ]
    assert [(e["by"], e["seat"], e["action"]["seat"]) for e in changes] == [
        ("host", None, on_turn), ("host", None, on_turn), ("player", on_turn, on_turn),
    ]  # fmt: skip


def test_seat_changes_refuse_bad_input(live: str) -> None:
    created = create(live, players=["ann", "bo"])
    gid, host, seat = created["game_id"], created["host_token"], created["seats"][0]["token"]
    assert put_seat(live, gid, 0, {"bot": "greedy"}, None).status_code == 401
    assert put_seat(live, gid, 0, {"bot": "greedy"}, seat).status_code == 403
    assert put_seat(live, gid, 5, {"bot": "greedy"}, host).json()["code"] == "seat_not_found"
    unknown = put_seat(live, gid, 0, {"bot": "grandmaster"}, host)
    assert unknown.status_code == 422 and "planner" in str(unknown.json()["errors"])
    for body in ({}, {"open": False}, {"bot": "random", "open": True}, {"name": "x"}):
        assert put_seat(live, gid, 0, body, host).status_code == 422, body
    assert view(live, gid)["version"] == 1, "refused changes change nothing"


@pytest.mark.parametrize(
    "players",
    [
        ["ann", {"name": "cpu", "bot": "grandmaster"}],
        ["ann", {"open": False}],
        ["ann", {"name": ""}],
        ["ann", {"name": "x" * 41}],
        ["ann", {"name": "a\nb"}],
        ["ann", {"name": "cpu", "bot": "planner", "open": True}],
        ["ann", 7],
    ],
)
def test_create_refuses_malformed_seats(live: str, players: list[Any]) -> None:
    r = requests.post(f"{live}/api/v1/games", json={"players": players}, timeout=TIMEOUT)
    assert r.status_code == 422, r.text


@pytest.mark.parametrize("seconds", [-1, 3, 86401, 1.5, "30"])
def test_turn_seconds_outside_its_range_is_422(live: str, seconds: Any) -> None:
    # The test servers lower the minimum to 1 s; 3 is refused only with the default minimum.
    body = {"players": ["ann", "bo"], "turn_seconds": seconds}
    r = requests.post(f"{live}/api/v1/games", json=body, timeout=TIMEOUT)
    assert r.status_code == (201 if seconds == 3 else 422), r.text


def test_bots_lists_the_levels_with_their_measured_strength(live: str) -> None:
    levels = requests.get(f"{live}/api/v1/bots", timeout=TIMEOUT).json()
    names = [level["name"] for level in levels]
    assert {"random", "greedy", "planner"} <= set(names)
    for level in levels:
        assert level["description"]
        assert level["strength"] is None or 0 <= level["strength"] <= 1
        if level["strength"] is not None:
            low, high = level["strength_interval"]
            assert 0 <= low <= level["strength"] <= high <= 1


def test_an_overdue_turn_is_played_once_for_watchers_on_two_instances(
    live_pair: tuple[str, str],
) -> None:
    """Nobody requests the game: two long-polls, one per instance, get the clock's entries
    within a second of the deadline, and each overdue turn is applied exactly once."""
    created = create(live_pair[0], players=["ann", "bo"], auto_deal=True, turn_seconds=1)
    gid = created["game_id"]
    start = view(live_pair[0], gid)
    deadline = start["clock"]["deadline"]
    assert deadline is not None
    got: dict[str, Any] = {}

    def wait(base: str) -> None:
        got[base] = (entries(base, gid, after=start["version"], wait=10), time.monotonic())

    began = time.monotonic()
    pollers = [threading.Thread(target=wait, args=(base,)) for base in live_pair]
    for poller in pollers:
        poller.start()
    for poller in pollers:
        poller.join(20)
    for page, at in got.values():
        assert page["entries"] and page["entries"][0]["by"] == "clock"
        assert at - began < 1 + 1.5, "the clock's entries came within deadline + 1 s"
    time.sleep(2.5)  # more turns run out meanwhile; then compare the whole log
    log = entries(live_pair[1], gid)["entries"]
    assert [e["version"] for e in log] == list(range(1, len(log) + 1))
    # Exactly once: each turn is one run of clock entries, and a turn is only played after it
    # lasted its full second, so two runs never start within a second of each other (a turn
    # applied by both instances would show two runs at once).
    starts, previous = [], None
    for entry in log:
        new_turn = previous is None or (previous["by"], previous["seat"]) != (
            "clock",
            entry["seat"],
        )
        if entry["by"] == "clock" and new_turn:
            starts.append(datetime.fromisoformat(entry["at"].replace("Z", "+00:00")))
        previous = entry
    assert len(starts) >= 2, [(e["by"], e["seat"]) for e in log]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(starts)]
    assert min(gaps) >= 0.95, gaps
