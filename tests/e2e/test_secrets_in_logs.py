"""No secret reaches a log: after a full run through nginx and two instances (bot games, tokens in
headers and in ``?access_token=``, refused tokens, bad requests), no token or invite handed out
appears in nginx's access or error log, the app's JSON lines, gunicorn's log or its access log."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from devstack.stack import build_stack
from service.tournament.runner import game_specs, play_http
from tests.e2e.nginx import ensure_nginx
from tests.e2e.test_limits import session_from
from tests.faults.load import CountingClient, Journal

pytestmark = pytest.mark.e2e


def secrets_in(doc: Any) -> Iterator[str]:
    """Every string under a key that names a token or an invite, however deep."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            if isinstance(value, str) and ("token" in key or "invite" in key):
                yield value
            else:
                yield from secrets_in(value)
    elif isinstance(doc, list):
        for item in doc:
            yield from secrets_in(item)


def test_no_token_or_invite_in_any_log(tmp_path: Path) -> None:
    ensure_nginx()
    env = {"ACCESS_LOG": "-", "RATE_LIMIT_PER_MINUTE": "100000"}
    with build_stack(tmp_path, env) as stack:
        created: list[dict[str, Any]] = []
        with CountingClient(stack.url, Journal()) as client:
            bots = ["greedy", "random", "planner"]
            for spec in game_specs(bots, 4, base_seed=70_000, options={"rounds": 2}):
                play_http(client, spec)
                assert client.created is not None
                created.append(dict(client.created))
        url = stack.url + "/api/v1/games/"
        for game in created:
            gid, seat = game["game_id"], game["seats"][0]["token"]
            other = created[0]["host_token"] if game is not created[0] else game["host_token"]
            # A token in the query, as EventSource clients must send it, on the streams route
            # and elsewhere; a token of another game.
            requests.get(f"{url}{gid}/events", params={"access_token": seat}, timeout=10)
            requests.get(f"{url}{gid}", params={"access_token": seat}, timeout=10)
            bad = requests.get(url + gid, headers={"Authorization": f"Bearer {other}"}, timeout=10)
            assert bad.status_code in (200, 401)
        logs = {
            "nginx access": stack.nginx.access_log,
            "nginx error": stack.nginx.error_log,
            **{f"app {i + 1}": inst.log_path for i, inst in enumerate(stack.instances)},
            **{f"streams {i + 1}": inst.log_path for i, inst in enumerate(stack.streams)},
        }
        texts = {name: Path(path).read_text() for name, path in logs.items()}
    secrets = {s for game in created for s in secrets_in(game)}
    assert len(secrets) == 4 * (3 + 2), "every seat token, the host and table tokens of each game"
    # The logs are real and full: every game id is there, from nginx and from the app.
    for game in created:
        assert game["game_id"] in texts["nginx access"]
        assert any(game["game_id"] in texts[f"app {i}"] for i in (1, 2))
    assert '"path": "/api/v1/games/' in texts["app 1"] + texts["app 2"], "gunicorn access log on"
    # The streams pool served the token-in-query reads, and logged them.
    assert "/events" in texts["streams 1"] + texts["streams 2"]
    leaks = [(name, s[:8]) for name, text in texts.items() for s in secrets if s in text]
    assert not leaks, leaks


def test_no_token_or_ticket_in_any_log_after_upstream_failures_and_rate_limits(
    tmp_path: Path,
) -> None:
    """nginx's error log prints the request line, query included, on an upstream failure and
    on a rate-limit refusal: a stream's credential in ``?access_token=`` (a ticket, or a token
    as older clients send it) must not reach it, nor any other log of the stack."""
    ensure_nginx()
    with build_stack(tmp_path, {"ACCESS_LOG": "-"}) as stack:
        created = requests.post(
            stack.url + "/api/v1/games", json={"players": ["ann", "bo"]}, timeout=10
        ).json()
        gid, seat = created["game_id"], created["seats"][0]["token"]
        events = f"{stack.url}/api/v1/games/{gid}/events"
        bearer = {"Authorization": f"Bearer {seat}"}

        def new_ticket() -> str:
            url = f"{stack.url}/api/v1/games/{gid}/stream-tickets"
            issued = requests.post(url, headers=bearer, timeout=10)
            assert issued.status_code == 201, issued.text
            return str(issued.json()["ticket"])

        tickets = [new_ticket() for _ in range(3)]

        # Rate-limit refusals, from a client address nginx does not exempt: more than its burst
        # (100) at once, from several threads, so that a slow machine still passes 50 a second.
        def hit(credential: str) -> int:
            with session_from("127.0.0.2") as s:
                return s.get(events, params={"access_token": credential}, timeout=10).status_code

        with ThreadPoolExecutor(16) as pool:
            refused = list(pool.map(hit, [seat, tickets[0]] * 200))
        assert 429 in refused, "nginx refused nothing: the test proves nothing"
        # Upstream failures: every streams instance is down.
        for instance in stack.streams:
            instance.stop()
        failed = [
            requests.get(events, params={"access_token": credential}, timeout=30).status_code
            for credential in [seat, *tickets[1:]]
        ]
        assert set(failed) == {503}, failed
        error_log = Path(stack.nginx.error_log).read_text()
        logs = {
            "nginx access": Path(stack.nginx.access_log).read_text(),
            "nginx error": error_log,
            **{
                f"app {i}": Path(inst.log_path).read_text()
                for i, inst in enumerate(stack.instances)
            },
            **{
                f"streams {i}": Path(inst.log_path).read_text()
                for i, inst in enumerate(stack.streams)
            },
        }
    secrets = [seat, created["host_token"], created["table_token"], *tickets]
    assert f"/api/v1/games/{gid}/events" in logs["nginx access"]
    leaks = [(name, s[:8]) for name, text in logs.items() for s in secrets if s in text]
    assert not leaks, leaks
