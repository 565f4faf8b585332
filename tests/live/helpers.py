"""Small HTTP helpers for the live-play tests: create tables, play a seat, read streams."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import orjson
import requests

TIMEOUT = 30


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def create(base: str, **body: Any) -> dict[str, Any]:
    r = requests.post(f"{base}/api/v1/games", json=body, timeout=TIMEOUT)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def entries(base: str, gid: str, token: str | None = None, **params: Any) -> dict[str, Any]:
    r = requests.get(
        f"{base}/api/v1/games/{gid}/events", params=params, headers=auth(token), timeout=90
    )
    assert r.status_code == 200, r.text
    page: dict[str, Any] = r.json()
    return page


def play_turn(base: str, gid: str, token: str, rng: random.Random) -> dict[str, Any] | None:
    """One random legal move of the seat, or None when it is not its turn."""
    r = requests.get(f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token), timeout=30)
    assert r.status_code == 200, r.text
    moves = r.json()["moves"]
    if not moves:
        return None
    done = requests.post(
        f"{base}/api/v1/games/{gid}/moves",
        json=rng.choice(moves),
        headers=auth(token),
        timeout=TIMEOUT,
    )
    assert done.status_code == 200, done.text
    body: dict[str, Any] = done.json()
    return body


def sse_entries(response: requests.Response) -> Iterator[dict[str, Any]]:
    """The entries of an SSE response, checking each message's id against its version."""
    event_id = None
    for raw in response.iter_lines():
        line = raw.decode()
        if line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("data: "):
            entry: dict[str, Any] = orjson.loads(line[6:])
            assert entry["version"] == event_id
            yield entry


def ndjson_entries(response: requests.Response) -> Iterator[dict[str, Any]]:
    for raw in response.iter_lines():
        if raw.strip():
            yield orjson.loads(raw)
