"""Redis loses a game's last changes after publishing them (a restart from an AOF that missed
its last second: `appendfsync everysec`; a failover to a replica behind). Emulated on a real
Redis by putting the game's keys back as they were before those changes (DUMP, then RESTORE),
with real gunicorn and a real stream open meanwhile."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service.store import keys
from tests.eventually import eventually
from tests.live.helpers import SSE, create, play_turn, sse_entries, view

pytestmark = pytest.mark.slow

ENV = {"LOG_LEVEL": "warning", "GUNICORN_THREADS": "8"}


@pytest.fixture()
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def test_a_stream_sent_entries_redis_lost_ends_and_the_stored_log_is_served(
    redis_server: RedisServer,
) -> None:
    """A stream was sent three entries Redis then lost. It must end (its client resumes
    from the log as stored), and what is served afterwards is the stored log. Before, the
    stream stayed open and silent (the game's next changes came at versions it had been
    sent: it heard nothing of them), and the process served the lost entries to every reader."""
    client = redis.Redis.from_url(redis_server.url)
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        game = create(base, players=["ann", "bo"], auto_deal=True, seed=5)
        gid, tokens, rng = game["game_id"], [s["token"] for s in game["seats"]], random.Random(5)
        got: list[int] = []
        ended = threading.Event()

        def follow() -> None:
            url = f"{base}/api/v1/games/{gid}/events"
            with (
                contextlib.suppress(requests.RequestException),
                requests.get(url, headers={"Accept": SSE}, stream=True, timeout=60) as r,
            ):
                got.extend(entry["version"] for entry in sse_entries(r))
            ended.set()

        def move() -> None:
            play_turn(base, gid, tokens[view(base, gid)["turn"]], rng)

        threading.Thread(target=follow, daemon=True).start()
        for _ in range(3):
            move()
        kept = view(base, gid)["version"]
        saved = [(key, client.dump(key)) for key in (keys.game_key(gid), keys.log_key(gid))]
        for _ in range(3):
            move()
        top = view(base, gid)["version"]
        eventually(lambda: top in got, 10, "the stream never had the entries Redis loses")
        for key, dumped in saved:
            assert isinstance(dumped, bytes)
            client.restore(key, 0, dumped, replace=True)
        assert view(base, gid)["version"] == kept
        restored = datetime.now(UTC)
        eventually(ended.is_set, 15, "the stream that was sent lost entries stays open")
        move()  # the game goes on from what is stored
        page = requests.get(f"{base}/api/v1/games/{gid}/events", timeout=10).json()
        assert page["version"] == client.llen(keys.log_key(gid)) == kept + 1
        assert [e["version"] for e in page["entries"]] == list(range(1, kept + 2))
        newest = datetime.fromisoformat(page["entries"][-1]["at"].replace("Z", "+00:00"))
        assert newest >= restored - timedelta(seconds=1), "a lost entry was served"
