"""Bad input never crashes anything: every operation of openapi/openapi.json, fed malformed and
edge-case requests (tests/api/fuzz_inputs.py) against a real gunicorn on a real Redis, answers
below 500 (a documented 503 aside), every 4xx is a problem body with a code of the service's
list, and a refused write leaves its game's version and log as they were."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
import requests
from hypothesis import HealthCheck, given, settings

from service.api.codes import Problem
from tests.api.fuzz_inputs import Operation, Request, operations, requests_for

CODES = {problem.value for problem in Problem}
OPERATIONS = operations()
# Enough to reach every branch of the drawing once or twice per operation, few enough that the
# module runs in about a minute (each write is sent to a dealt game of its own).
EXAMPLES = 25


@dataclass
class Table:
    """A dealt three-seat game made for one example, and the credentials of each role."""

    url: str
    game_id: str
    roles: dict[str, str]

    def snapshot(self, session: requests.Session, player: dict[str, str]) -> tuple[Any, ...]:
        """The game's version and its whole log, as the host reads them, and the durable
        player's webhooks (the writes under /players)."""
        game = f"{self.url}/api/v1/games/{self.game_id}"
        hooks = session.get(
            f"{self.url}/api/v1/players/{player['player_id']}/webhooks",
            headers={"Authorization": f"Bearer {player['player_token']}"},
            timeout=10,
        ).json()
        version = session.get(game, timeout=10).json()["version"]
        page = session.get(
            f"{game}/events",
            params={"after": 0},
            headers={"Authorization": f"Bearer {self.roles['host']}", "Accept": "application/json"},
            timeout=10,
        ).json()
        return version, page["entries"], hooks


def new_player(url: str) -> dict[str, str]:
    """A durable player, whose webhooks the fuzz's writes under /players aim at."""
    created = requests.post(url + "/api/v1/players", json={"name": "fuzz"}, timeout=10)
    assert created.status_code == 201
    body: dict[str, str] = created.json()
    return body


@pytest.fixture(scope="module")
def player(live_server: str) -> dict[str, str]:
    return new_player(live_server)


def new_table(session: requests.Session, url: str, player: dict[str, str]) -> Table:
    made = session.post(
        url + "/api/v1/games", json={"players": ["ann", "bo", "cy"], "seed": 7}, timeout=10
    )
    assert made.status_code == 201, made.text  # set-up, not the fuzz: say what refused it
    created = made.json()
    host, seats = created["host_token"], [s["token"] for s in created["seats"]]
    game = f"{url}/api/v1/games/{created['game_id']}"
    dealt = session.post(game + "/deal", headers={"Authorization": f"Bearer {host}"}, timeout=10)
    assert dealt.status_code == 200, dealt.text
    turn = dealt.json()["turn"]
    roles = {
        "turn": seats[turn],
        "other_seat": seats[(turn + 1) % len(seats)],
        "host": host,
        "player": player["player_token"],
    }
    return Table(url, created["game_id"], roles)


def target(request: Request, table: Table, player: dict[str, str]) -> str:
    """The request's URL: each ``{real}`` path id replaced by the table's, others quoted."""
    real = {
        "game_id": table.game_id,
        "seat": "1",
        "player_id": player["player_id"],
        "webhook_id": "none",
    }
    path = request.path
    for name, value in request.path_ids.items():
        path = path.replace("{" + name + "}", real[name] if value == "{real}" else quote(value))
    return table.url + path


def headers_of(request: Request, table: Table) -> dict[str, str]:
    headers = dict(request.headers)
    if request.auth in table.roles:
        headers["Authorization"] = f"Bearer {table.roles[request.auth]}"
    elif request.auth != "none":
        headers["Authorization"] = request.auth
    return headers


def bounded(request: Request) -> None:
    """A stream stays open until its game ends and a long-poll waits: the fuzz reads pages that
    answer at once (tests/live covers streams and waits)."""
    if request.path.endswith("/events"):
        request.headers["Accept"] = "application/json"
        request.query = [(name, value) for name, value in request.query if name != "wait"]


def send(
    session: requests.Session, request: Request, table: Table, player: dict[str, str]
) -> requests.Response:
    bounded(request)
    return session.request(
        request.method,
        target(request, table, player),
        params=request.query,
        headers=headers_of(request, table),
        data=request.data,
        timeout=30,
    )


def fuzz_settings(examples: int) -> settings:
    """Hypothesis' settings for a fuzz of ``examples`` drawn requests an operation: the same
    examples every run, no example database, slow servers allowed."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def check_answer(op: Operation, request: Request, answer: requests.Response) -> None:
    status = answer.status_code
    where = f"{request!r} -> {status}: {answer.text[:300]}"
    assert status < 500 or (status == 503 and "503" in op.statuses), where
    if status < 400:
        return
    assert answer.headers.get("Content-Type") == "application/problem+json", where
    body = answer.json()
    assert body["code"] in CODES and body["status"] == status, where
    assert Problem(body["code"]).status == status, where


@pytest.mark.parametrize("op", OPERATIONS, ids=[op.name for op in OPERATIONS])
def test_bad_input_is_a_problem_and_changes_nothing(
    op: Operation, live_server: str, player: dict[str, str]
) -> None:
    session = requests.Session()
    shared = new_table(session, live_server, player)

    @fuzz_settings(EXAMPLES)
    @given(request=requests_for(op))
    def fuzz(request: Request) -> None:
        # A write accepted may seat a bot that plays on: each write gets a game of its own.
        table = new_table(session, live_server, player) if op.writes else shared
        before = table.snapshot(session, player)
        answer = send(session, request, table, player)
        check_answer(op, request, answer)
        if op.writes and answer.status_code >= 400:
            after = table.snapshot(session, player)
            assert after == before, f"{request!r} refused, yet the game or the player changed"

    fuzz()
