"""A 204 answer has no content (RFC 9110 §15.3.5), so it names no type of content: the
service's 204s (a webhook removed, the stream of a finished game that will send nothing more)
carry no Content-Type and no body, as a real gunicorn sends them."""

from __future__ import annotations

import requests

from tests.live.helpers import SSE, auth, create, send
from tests.players.helpers import new_player, play_out

NDJSON = "application/x-ndjson"


def removed_webhook(base: str) -> requests.Response:
    ann = new_player(base, "ann")
    hooks = f"{base}/api/v1/players/{ann['player_id']}/webhooks"
    # A host the stack allows (tests/players/conftest.py); nothing is sent before the removal.
    made = send(
        "POST", hooks, json={"url": "http://127.0.0.1:9/turns"}, headers=auth(ann["player_token"])
    )
    assert made.status_code == 201, made.text
    url = f"{hooks}/{made.json()['webhook_id']}"
    return send("DELETE", url, headers=auth(ann["player_token"]))


def ended_streams(base: str) -> dict[str, requests.Response]:
    """A finished game's streams past its rematch entry: nothing more will ever be sent."""
    game = create(base, players=["ann", "bo"], options={"rounds": 1, "set": 6, "hand_size": 5})
    play_out(base, game, seed=3)
    gid, ann = game["game_id"], game["seats"][0]["token"]
    made = send("POST", f"{base}/api/v1/games/{gid}/rematch", headers=auth(ann))
    assert made.status_code == 201, made.text
    final = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()["version"]
    url = f"{base}/api/v1/games/{gid}/events"
    return {
        media: requests.get(url, headers={"Accept": media, "Last-Event-ID": str(final)}, timeout=10)
        for media in (SSE, NDJSON)
    }


def test_no_204_carries_a_content_type(server: str) -> None:
    answers = {"webhook removed": removed_webhook(server), **ended_streams(server)}
    assert {what: r.status_code for what, r in answers.items()} == dict.fromkeys(answers, 204)
    typed = {
        what: r.headers["Content-Type"]
        for what, r in answers.items()
        if "Content-Type" in r.headers
    }
    assert not typed, typed
    assert all(r.content == b"" for r in answers.values())
