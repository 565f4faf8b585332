"""The OpenAPI document: committed == served, docs served, and schemathesis against it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

ROOT = Path(__file__).resolve().parents[2]


def test_committed_spec_is_the_served_one(live_server: str) -> None:
    served = requests.get(live_server + "/api/v1/openapi.json", timeout=10)
    assert served.status_code == 200
    committed = (ROOT / "openapi" / "openapi.json").read_bytes()
    assert served.content.strip() == committed.strip(), "run `make spec` and commit the result"


def test_spec_documents_every_error_as_a_problem(live_server: str) -> None:
    spec = requests.get(live_server + "/api/v1/openapi.json", timeout=10).json()
    responses = spec["components"]["responses"]
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method == "parameters":
                continue
            codes = set(op["responses"])
            if path.startswith("/api/v1/games/{game_id}"):
                assert {"401", "404"} & codes, (path, method)
            if method == "post":
                assert {"413", "415", "422"} <= codes, (path, method)
            for code, resp in op["responses"].items():
                if code.isdigit() and int(code) >= 400:
                    ref = resp["$ref"].rsplit("/", 1)[-1]
                    assert "application/problem+json" in responses[ref]["content"]


def test_swagger_ui_is_served_locally(live_server: str) -> None:
    page = requests.get(live_server + "/docs", timeout=10)
    assert page.status_code == 200 and 'id="swagger-ui"' in page.text
    assert "/docs/static/swagger-ui/swagger-ui-bundle.js" in page.text
    # Every script, stylesheet and icon is a path on this service, never another host.
    urls = re.findall(r'(?:src|href)="([^"]*)"', page.text)
    assert urls and all(url.startswith("/docs/static/") for url in urls), urls
    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "unsafe-inline" not in policy
    asset = requests.get(live_server + "/docs/static/swagger-ui/swagger-ui-bundle.js", timeout=10)
    assert asset.status_code == 200 and len(asset.content) > 100_000
    missing = requests.get(live_server + "/docs/static/../app.py", timeout=10)
    assert missing.status_code == 404


def test_vendored_swagger_ui_matches_its_recorded_checksums() -> None:
    """The vendored files are upstream's, unchanged: VENDORED.md lists their SHA-256."""
    folder = ROOT / "service" / "api" / "static" / "docs" / "swagger-ui"
    recorded = dict(
        reversed(line.split("  ", 1))
        for line in (folder / "VENDORED.md").read_text().splitlines()
        if re.fullmatch(r"[0-9a-f]{64}  \S+", line)
    )
    on_disk = {p.name for p in folder.iterdir()} - {"VENDORED.md"}
    assert set(recorded) == on_disk
    for name, digest in recorded.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


@pytest.fixture(scope="module")
def real_game(live_server: str) -> dict[str, Any]:
    """A dealt game, so that part of the generated requests reach real game logic."""
    created = requests.post(
        live_server + "/api/v1/games", json={"players": ["a", "b", "c"], "seed": 5}, timeout=10
    ).json()
    requests.post(
        f"{live_server}/api/v1/games/{created['game_id']}/deal",
        headers={"Authorization": f"Bearer {created['host_token']}"},
        timeout=10,
    )
    return created


# The committed document (test_committed_spec_is_the_served_one ties it to the served one).
# Loaded eagerly: schemathesis' lazy from_fixture loader breaks on pytest 9 (node._nodeid).
schema = schemathesis.openapi.from_path(ROOT / "openapi" / "openapi.json")


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_fuzz_the_api(case: Any, live_server: str, real_game: dict[str, Any]) -> None:
    # Half of the cases aim at a real game with a real token (seat to move, another seat, or
    # the host), the rest keep the generated id and token: every path stays reachable.
    if "game_id" in (case.path_parameters or {}):
        pick = hash(repr(case.body)) % 4
        if pick:
            case.path_parameters["game_id"] = real_game["game_id"]
            tokens = [s["token"] for s in real_game["seats"]] + [real_game["host_token"]]
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[pick]}"}
    if case.path.endswith("/events"):
        # Streams stay open until the game ends and a long-poll may wait a minute: the fuzzer
        # reads pages that answer at once (tests/live covers the streams and waits).
        case.headers = {**(case.headers or {}), "Accept": "application/json"}
        wait = (case.query or {}).get("wait")
        if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > 1:
            case.query["wait"] = 1
    case.call_and_validate(
        base_url=live_server,
        checks=[
            not_a_server_error,
            status_code_conformance,
            content_type_conformance,
            response_headers_conformance,
            response_schema_conformance,
        ],
    )
