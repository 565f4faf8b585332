"""Live play on a Redis Cluster: the log, the wake-ups (SPUBLISH from the compare-and-set script
on the game's own channel, heard on its shard), streams, joins and bot seats, with games spread
over every master.

Moves go to the API pool, streams and long-polls to a streams pool (gevent), as nginx routes
them in production: in the API pool's few threads, waiting readers would hold up the moves.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from devstack.redis_cluster import LocalRedisCluster
from tests.live.helpers import SSE, auth, create, entries, sse_entries


@pytest.fixture(scope="module")
def streams_server(redis_cluster: LocalRedisCluster) -> Iterator[str]:
    from devstack.gunicorn import start_gunicorn

    env = {"REDIS_CLUSTER": "1", "GUNICORN_POOL": "streams", "STREAM_WORKERS": "2"}
    with start_gunicorn(redis_cluster.url, env=env) as base_url:
        yield base_url


def watch(base: str, gid: str, seen: list[int]) -> None:
    url = f"{base}/api/v1/games/{gid}/events"
    with requests.get(url, headers={"Accept": SSE}, stream=True, timeout=60) as r:
        seen.extend(e["version"] for e in sse_entries(r))


def long_poll(base: str, gid: str, after: int, out: dict[str, Any]) -> None:
    out["page"] = entries(base, gid, after=after, wait=10)
    out["at"] = time.monotonic()


def table(base: str) -> tuple[str, dict[int, str]]:
    """A table of a person, a server bot and an open seat that a second person joins."""
    bots = [{"name": "cpu", "bot": "greedy"}, {"open": True}]
    created = create(base, players=["ann", *bots], auto_deal=True, options={"rounds": 1})
    gid = created["game_id"]
    body = {"invite": created["seats"][2]["invite"], "name": "bo"}
    joined = requests.post(f"{base}/api/v1/games/{gid}/join", json=body, timeout=30).json()
    return gid, {0: created["seats"][0]["token"], 2: joined["token"]}


def move_and_time_the_wake_up(
    base: str, streams: str, gid: str, view: dict[str, Any], token: str
) -> float:
    """Play a random legal move while a long-poll waits; seconds until the long-poll answered."""
    poll: dict[str, Any] = {}
    poller = threading.Thread(target=long_poll, args=(streams, gid, view["version"], poll))
    poller.start()
    time.sleep(0.05)
    legal = requests.get(f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token), timeout=30)
    move = random.Random(view["version"]).choice(legal.json()["moves"])
    sent = time.monotonic()
    moved = requests.post(
        f"{base}/api/v1/games/{gid}/moves", json=move, headers=auth(token), timeout=30
    )
    assert moved.status_code == 200, moved.text
    poller.join(15)
    assert poll["page"]["entries"], "the long-poll woke with the move"
    return float(poll["at"] - sent)


def test_streams_and_long_polls_follow_games_on_every_master(
    live_server: str, streams_server: str
) -> None:
    for _ in range(6):  # random ids: these games land on several masters
        gid, tokens = table(live_server)
        seen: list[int] = []
        watcher = threading.Thread(target=watch, args=(streams_server, gid, seen))
        watcher.start()
        woke = []
        while True:
            view = requests.get(f"{live_server}/api/v1/games/{gid}", timeout=30).json()
            if view["status"] == "game_over":
                break
            token = tokens[view["turn"]]
            woke.append(move_and_time_the_wake_up(live_server, streams_server, gid, view, token))
        watcher.join(30)
        assert seen == list(range(1, view["version"] + 1))
        # Woken by the wake-up message, not by the once-a-second re-read.
        assert sorted(woke)[len(woke) // 2] < 0.5, woke
