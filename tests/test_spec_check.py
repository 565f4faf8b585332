"""The check of every answer against the OpenAPI document (tests/spec_check.py) can fail: a
field a real server sends that the document does not declare is reported, in a JSON body, in a
JSON page's entries and in each message of an SSE or NDJSON stream, as is such a header; and
the hooks of tests/conftest.py see the answers of both ``requests`` and Flask's test client."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import requests
from flask import Flask

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.api.etag import IF_MATCH, IF_NONE_MATCH
from service.api.gamelog.schemas import LAST_EVENT_ID
from service.api.idempotency import HEADER as IDEMPOTENCY_KEY
from tests.spec_check import COLLECTED, NDJSON, SSE, Checker, spec_without

FINISHED_WITHIN_SECONDS = 60


def finished_game(base: str) -> str:
    """A one-round game of two server bots, played to its end by the server."""
    created = requests.post(
        base + "/api/v1/games",
        json={
            "players": [{"name": "a", "bot": "random"}, {"name": "b", "bot": "greedy"}],
            "options": {"set": 6, "rounds": 1},
            "auto_deal": True,
        },
        timeout=10,
    ).json()
    game_id: str = created["game_id"]
    deadline = time.monotonic() + FINISHED_WITHIN_SECONDS
    while requests.get(f"{base}/api/v1/games/{game_id}", timeout=10).json()["status"] != (
        "game_over"
    ):
        assert time.monotonic() < deadline, "the bots did not finish the game"
        time.sleep(0.2)
    return game_id


def answer(base: str, path: str, accept: str = "application/json") -> requests.Response:
    r = requests.get(base + path, headers={"Accept": accept}, timeout=30)
    assert r.status_code == 200, r.text
    return r


def problems(checker: Checker, path: str, r: requests.Response) -> list[str]:
    return checker.check_body("GET", path, 200, r.headers["Content-Type"], r.content)


def test_an_undeclared_field_of_a_real_answer_is_reported(live_server: str) -> None:
    game_id = finished_game(live_server)
    spec = Checker().spec
    view_path, events_path = f"/api/v1/games/{game_id}", f"/api/v1/games/{game_id}/events"
    view = answer(live_server, view_path)
    pages = answer(live_server, events_path)
    streams = [answer(live_server, events_path, media) for media in (SSE, NDJSON)]
    assert all(not problems(Checker(), events_path, r) for r in [pages, *streams])
    assert not problems(Checker(), view_path, view)

    no_opened = Checker(spec_without(spec, "Player", "opened"))
    assert any("'opened' was unexpected" in p for p in problems(no_opened, view_path, view))
    no_train = Checker(spec_without(spec, "TilePlayedEvent", "train"))
    for r in [pages, *streams]:
        found = problems(no_train, events_path, r)
        assert any("'train' was unexpected" in p for p in found), r.headers["Content-Type"]


@contextmanager
def checked_with(checker: Checker) -> Iterator[None]:
    """The suite's hooks check with ``checker`` for a while; what they found is dropped."""
    kept = COLLECTED.checker
    COLLECTED.take()
    COLLECTED.checker = checker
    try:
        yield
    finally:
        COLLECTED.checker = kept
        COLLECTED.take()


def found_by_hooks(send: Any) -> list[str]:
    send()
    return COLLECTED.take()


def test_a_header_of_a_real_answer_the_document_does_not_declare_is_reported(
    live_server: str,
) -> None:
    game_id = finished_game(live_server)
    path = f"/api/v1/games/{game_id}"
    r = requests.get(live_server + path, timeout=10)
    checker = Checker()
    assert "ETag" in r.headers and checker.check_headers("GET", path, 200, r.headers) == []
    bare = Checker(copy.deepcopy(checker.spec))
    bare.spec["paths"]["/api/v1/games/{game_id}"]["get"]["responses"]["200"].pop("headers")
    assert bare.check_headers("GET", path, 200, r.headers) == [
        f"GET {path} 200: header ETag not declared"
    ]


def test_the_hooks_see_answers_of_requests_and_of_the_flask_test_client(
    live_server: str, redis_server: RedisServer
) -> None:
    game_id = finished_game(live_server)
    app: Flask = create_app({"REDIS_URL": redis_server.url})
    client = app.test_client()
    no_rounds = Checker(spec_without(Checker().spec, "Score", "rounds"))
    path = f"/api/v1/games/{game_id}/score"
    with checked_with(no_rounds):
        by_requests = found_by_hooks(lambda: requests.get(live_server + path, timeout=10))
        by_flask = found_by_hooks(lambda: client.get(path))
        by_stream = found_by_hooks(
            lambda: list(
                requests.get(
                    f"{live_server}/api/v1/games/{game_id}/events",
                    headers={"Accept": NDJSON},
                    stream=True,
                    timeout=30,
                ).iter_lines()
            )
        )
    assert any("'rounds' was unexpected" in p for p in by_requests)
    assert any("'rounds' was unexpected" in p for p in by_flask)
    assert not by_stream  # the entries carry no score: nothing to report there
    no_type = Checker(spec_without(Checker().spec, "Entry", "by"))
    with checked_with(no_type):
        streamed = found_by_hooks(
            lambda: list(
                requests.get(
                    f"{live_server}/api/v1/games/{game_id}/events",
                    headers={"Accept": SSE},
                    stream=True,
                    timeout=30,
                ).iter_lines()
            )
        )
    assert any("'by' was unexpected" in p for p in streamed)


def examples(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """Every example of a body the document shows, with its schema and where it is."""
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            if not isinstance(op, dict):
                continue
            bodies = [("request", op.get("requestBody", {}))]
            bodies += list(op.get("responses", {}).items())
            for status, body in bodies:
                for media, content in body.get("content", {}).items():
                    if "example" in content and "schema" in content:
                        where = f"{method.upper()} {path} {status} {media}"
                        yield where, content["schema"], content["example"]


def test_every_example_the_document_shows_fits_its_schema() -> None:
    # A mock server, the /docs page and a reader copying an example take it as the truth.
    checker = Checker()
    shown = list(examples(checker.spec))
    assert len(shown) >= 8
    found = [
        error for where, schema, value in shown for error in checker.errors(schema, value, where)
    ]
    assert found == []


def declared_headers(spec: dict[str, Any]) -> dict[str, set[str]]:
    """Each request header the document declares, with the operations that take it."""
    shared = spec["components"].get("parameters", {})
    found: dict[str, set[str]] = {}
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            for parameter in op.get("parameters", []) if isinstance(op, dict) else []:
                if "$ref" in parameter:
                    parameter = shared[parameter["$ref"].rsplit("/", 1)[1]]
                if parameter["in"] == "header":
                    found.setdefault(parameter["name"], set()).add(f"{method.upper()} {path}")
    return found


def test_every_request_header_the_service_reads_is_declared_where_it_is_read() -> None:
    # A generated client sends only the headers the document names: one left out is a
    # feature its users never find (a reconnecting stream starting over from the first entry).
    declared = declared_headers(Checker().spec)
    assert "GET /api/v1/games/{game_id}/events" in declared.get(LAST_EVENT_ID, set())
    assert "POST /api/v1/games/{game_id}/moves" in declared.get(IF_MATCH, set())
    assert "GET /api/v1/games/{game_id}" in declared.get(IF_NONE_MATCH, set())
    assert "POST /api/v1/games" in declared.get(IDEMPOTENCY_KEY, set())
