"""Streams through nginx on their own pool, surviving the death of a streams instance.

Readers (SSE and NDJSON; the public, seats by query token and header, the host) follow one game
through nginx while it is played; a third of the way in, one streams instance is killed with
SIGKILL. Every reader must resume from its last entry on the other instance and end holding
every entry of the game exactly once, in order, its stream closed after the last one.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import pytest
import requests

from tests.e2e.conftest import Stack
from tests.live.helpers import auth, ndjson_entries, sse_entries
from tests.metrics import metric_total

pytestmark = pytest.mark.e2e

SSE, NDJSON = "text/event-stream", "application/x-ndjson"


class Reader(threading.Thread):
    def __init__(self, base: str, gid: str, media: str, token: str | None, query: bool) -> None:
        super().__init__(daemon=True)
        self.base, self.gid, self.media = base, gid, media
        self.token, self.query = token, query
        self.versions: list[int] = []
        self.connections = 0
        self.cut = 0  # streams that broke off (an error), not ended

    def run(self) -> None:
        while not self.over():
            self.connections += 1
            try:
                self.follow()
            except requests.RequestException:
                self.cut += 1
                time.sleep(0.1)  # the instance died under us: resume where we were

    def over(self) -> bool:
        return getattr(self, "_over", False)

    def follow(self) -> None:
        last = self.versions[-1] if self.versions else 0
        headers = {"Accept": self.media, "Last-Event-ID": str(last)}
        params: dict[str, Any] = {"after": last}
        if self.token and self.query:
            params["access_token"] = self.token
        elif self.token:
            headers.update(auth(self.token))
        url = f"{self.base}/api/v1/games/{self.gid}/events"
        with requests.get(url, headers=headers, params=params, stream=True, timeout=(3, 30)) as r:
            assert r.status_code == 200, r.text
            parse = sse_entries if self.media == SSE else ndjson_entries
            for entry in parse(r):
                self.versions.append(entry["version"])
                if any(e["type"] == "game_over" for e in entry["events"]):
                    self._over = True


def open_streams(instance: Any) -> float:
    """The streams an instance of the streams pool holds open now."""
    text = requests.get(instance.url + "/metrics", timeout=10).text
    return metric_total(text, "open_streams", pool="streams")


def play(base: str, created: dict[str, Any], rng: random.Random) -> int:
    """One random move of the seat on turn; the new version (0 when the game is over)."""
    gid = created["game_id"]
    view = requests.get(f"{base}/api/v1/games/{gid}", timeout=10).json()
    if view["status"] == "game_over":
        return 0
    token = created["seats"][view["turn"]]["token"]
    legal = requests.get(f"{base}/api/v1/games/{gid}/legal-moves", headers=auth(token), timeout=10)
    move = rng.choice(legal.json()["moves"])
    done = requests.post(
        f"{base}/api/v1/games/{gid}/moves", json=move, headers=auth(token), timeout=10
    )
    assert done.status_code == 200, done.text
    return int(done.json()["version"])


@pytest.mark.parametrize("stop", ["sigkill", "sigterm"])
def test_readers_resume_on_the_other_streams_instance_and_miss_nothing(
    stack: Stack, stop: str
) -> None:
    """SIGKILL (a crash) cuts the streams; SIGTERM (a rollout) ends them cleanly, and nginx
    passes the clean end on: no reader sees an error either way."""
    body = {"players": ["a", "b", "c"], "auto_deal": True, "options": {"rounds": 2}, "seed": 4}
    created = requests.post(f"{stack.url}/api/v1/games", json=body, timeout=10).json()
    gid, seats, host = created["game_id"], created["seats"], created["host_token"]
    readers = [
        Reader(stack.url, gid, SSE, None, False),
        Reader(stack.url, gid, SSE, seats[0]["token"], True),
        Reader(stack.url, gid, SSE, host, False),
        Reader(stack.url, gid, NDJSON, seats[1]["token"], False),
        Reader(stack.url, gid, NDJSON, None, False),
        Reader(stack.url, gid, SSE, seats[2]["token"], True),
    ]
    for reader in readers:
        reader.start()
    rng, moves, killed = random.Random(3), 0, False
    while version := play(stack.url, created, rng):
        moves += 1
        if moves == 40 and not killed:
            # The instance holding most streams: nginx may send every reader to one of the two
            # (the other just restarted by the previous case, and marked failed a while).
            target = max(stack.streams, key=open_streams)
            if stop == "sigkill":
                target.kill9()
            else:
                target.stop()  # SIGTERM: the pool drains its streams and exits
            killed = True
    final = requests.get(f"{stack.url}/api/v1/games/{gid}", timeout=10).json()["version"]
    for reader in readers:
        reader.join(30)
        assert not reader.is_alive(), "the stream did not close after the game's last entry"
        assert reader.versions == list(range(1, final + 1))
    assert killed and version == 0
    assert sum(r.connections for r in readers) > len(readers), "no reader lost its instance"
    if stop == "sigterm":
        assert [r.cut for r in readers] == [0] * len(readers), "a stream was cut, not ended"
    target.start()
