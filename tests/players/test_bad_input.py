"""Bad input on the players' loop endpoints: a problem with a stable code, and Redis unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
import requests

from devstack.redis_server import RedisServer
from tests.live.helpers import auth, create, send
from tests.players.helpers import new_player


@pytest.fixture()
def everything(redis_server: RedisServer) -> Iterator[Any]:
    """What Redis holds, as a comparable value (each key's serialized value)."""
    client = redis.Redis.from_url(redis_server.url)

    def snapshot() -> dict[bytes, bytes | None]:
        return {key: client.dump(key) for key in sorted(client.keys("*"))}

    yield snapshot
    client.close()


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("players", {}, "validation_failed"),
    ("players", {"name": ""}, "validation_failed"),
    ("players", {"name": "x" * 500}, "validation_failed"),
    ("players", {"name": 7}, "validation_failed"),
    ("players", ["ann"], "validation_failed"),
    ("webhooks", {}, "validation_failed"),
    ("webhooks", {"url": 5}, "validation_failed"),
    ("webhooks", {"url": "https://x.example", "events": []}, "validation_failed"),
    ("webhooks", {"url": "https://x.example", "events": ["spam"]}, "validation_failed"),
    ("webhooks", {"url": "https://x.example", "events": "your_turn"}, "validation_failed"),
    ("webhooks", {"url": "https://x.example/" + "a" * 3000}, "validation_failed"),
    ("webhooks", {"url": "http://localhost:9/x"}, "webhook_url_not_allowed"),
    ("webhooks", {"url": "https://x.example", "extra": 1}, "validation_failed"),
]


@pytest.mark.parametrize(("where", "body", "code"), BAD_BODIES)
def test_a_bad_body_is_a_problem_and_changes_nothing(
    server: str, everything: Any, where: str, body: Any, code: str
) -> None:
    ann = new_player(server, "ann")
    url = {
        "players": f"{server}/api/v1/players",
        "webhooks": f"{server}/api/v1/players/{ann['player_id']}/webhooks",
    }[where]
    before = everything()
    r = send("POST", url, json=body, headers=auth(ann["player_token"]))
    assert r.headers["Content-Type"] == "application/problem+json"
    assert (r.status_code, r.json()["code"]) == (422, code), r.text
    assert everything() == before


@pytest.mark.parametrize(
    ("method", "path", "code", "status"),
    [
        ("GET", "/api/v1/players/nosuchplayer", "player_not_found", 404),
        ("GET", "/api/v1/players/{lobby}", "player_not_found", 404),
        ("GET", "/api/v1/players/bot-nosuchlevel", "player_not_found", 404),
        ("POST", "/api/v1/players/nosuchplayer/webhooks", "not_this_player", 403),
        ("DELETE", "/api/v1/players/PLAYER/webhooks/wh_nosuch", "webhook_not_found", 404),
        ("GET", "/api/v1/leaderboard?kind=cats", "validation_failed", 422),
        ("GET", "/api/v1/lobby?turn_seconds=-1", "validation_failed", 422),
        ("GET", "/api/v1/lobby?players=%D9%A3", "validation_failed", 422),  # another script's 3
        ("GET", "/api/v1/leaderboard?limit=%D9%A3", "validation_failed", 422),
        ("POST", "/api/v1/games/nosuchgame0/rematch", "game_not_found", 404),
    ],
)
def test_bad_paths_and_queries_are_problems(
    server: str, everything: Any, method: str, path: str, code: str, status: int
) -> None:
    ann = new_player(server, "ann")
    before = everything()
    r = send(
        method,
        server + path.replace("PLAYER", ann["player_id"]),
        json={"url": "https://x.example"} if path.endswith("/webhooks") else None,
        headers=auth(ann["player_token"]),
    )
    assert (r.status_code, r.json()["code"]) == (status, code), r.text
    assert everything() == before


def test_a_refused_url_is_never_called(server: str) -> None:
    """Registration refused the URL, so it is not kept: nothing is ever sent to it."""
    ann = new_player(server, "ann")
    assert (
        send(
            "POST",
            f"{server}/api/v1/players/{ann['player_id']}/webhooks",
            json={"url": "http://localhost:9/turns"},
            headers=auth(ann["player_token"]),
        ).json()["code"]
        == "webhook_url_not_allowed"
    )
    players = [{"name": "ann", "player_token": ann["player_token"]}, {"name": "c", "bot": "greedy"}]
    create(server, players=players, auto_deal=True)
    hooks = requests.get(
        f"{server}/api/v1/players/{ann['player_id']}/webhooks",
        headers=auth(ann["player_token"]),
        timeout=10,
    )
    assert hooks.json() == {"webhooks": []}
