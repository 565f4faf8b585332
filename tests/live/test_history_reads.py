"""A finished game's history is rendered once per process and version: anyone may read it, and
a whole log replayed and rendered costs tens of milliseconds a request."""

from __future__ import annotations

from typing import Any

import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import auth, create, send
from tests.players.helpers import play_out


def log_reads(client: redis.Redis) -> int:
    stats: dict[str, Any] = client.info("commandstats")
    return int(stats.get("cmdstat_lrange", {}).get("calls", 0))


def test_a_finished_games_history_is_rendered_once_per_process_and_version() -> None:
    with RedisServer() as server, start_gunicorn(server.url, workers=2, env=LIVE_ENV) as base:
        players = ["ann", {"name": "cpu", "bot": "greedy"}]
        game = create(base, players=players, options={"rounds": 1, "set": 6, "hand_size": 5})
        play_out(base, game, seed=3)
        url = f"{base}/api/v1/games/{game['game_id']}/history"
        client = redis.Redis.from_url(server.url)
        before = log_reads(client)
        bodies = {requests.get(url, timeout=10).content for _ in range(8)}
        assert len(bodies) == 1
        assert log_reads(client) - before <= 2  # once in each of the two processes
        # A rematch entry moves the version: the history shows it.
        ann = game["seats"][0]["token"]
        made = send("POST", f"{base}/api/v1/games/{game['game_id']}/rematch", headers=auth(ann))
        assert made.status_code == 201, made.text
        for _ in range(4):
            last = requests.get(url, timeout=10).json()["entries"][-1]
            assert last["action"] == {"action": "rematch", "game_id": made.json()["game_id"]}
