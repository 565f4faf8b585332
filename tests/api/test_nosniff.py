"""Every answer of the service says ``X-Content-Type-Options: nosniff``: a JSON answer echoes
names players chose, and a browser that sniffed one as HTML or a script would run them."""

from __future__ import annotations

import requests

from tests.live.helpers import SSE


def test_every_answer_forbids_sniffing_its_type(live_server: str) -> None:
    api = f"{live_server}/api/v1"
    created = requests.post(f"{api}/games", json={"players": ["<b>ann</b>", "bo"]}, timeout=10)
    assert created.status_code == 201, created.text
    gid = created.json()["game_id"]
    answers = {
        "created": created,
        "view": requests.get(f"{api}/games/{gid}", timeout=10),
        "bots": requests.get(f"{api}/bots", timeout=10),
        "spec": requests.get(f"{api}/openapi.json", timeout=10),
        "health": requests.get(f"{live_server}/healthz", timeout=10),
        "no such game": requests.get(f"{api}/games/nope", timeout=10),
        "no such path": requests.get(f"{api}/nowhere", timeout=10),
        "method": requests.delete(f"{api}/bots", timeout=10),
        "no token": requests.post(f"{api}/games/{gid}/deal", timeout=10),
        "bad JSON": requests.post(
            f"{api}/games", data=b"{", headers={"Content-Type": "application/json"}, timeout=10
        ),
        "invalid": requests.post(f"{api}/games", json={"players": []}, timeout=10),
        "not JSON": requests.post(f"{api}/games", data=b"x", timeout=10),
        "not modified": requests.get(
            f"{api}/games/{gid}", headers={"If-None-Match": '"1"'}, timeout=10
        ),
    }
    with requests.get(
        f"{api}/games/{gid}/events", headers={"Accept": SSE}, stream=True, timeout=10
    ) as stream:
        answers["stream"] = stream
    statuses = {what: r.status_code for what, r in answers.items()}
    assert statuses["no such game"] == 404 and statuses["bad JSON"] == 400, statuses
    missing = {
        w: r.status_code
        for w, r in answers.items()
        if r.headers.get("X-Content-Type-Options") != "nosniff"
    }
    assert not missing, missing
