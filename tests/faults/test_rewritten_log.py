"""Redis restarts from an AOF that lost a game's last three changes, and the game took three
other changes since: the stored version is the one the streams process held, with other entries
at its last versions. Done for real: a redis-server stopped and started again on its own files,
those of another history of the game (three other moves from the same position), with real
gunicorn and a real stream open meanwhile."""

from __future__ import annotations

import contextlib
import random
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.eventually import eventually
from tests.live.helpers import SSE, create, play_turn, sse_entries, view

pytestmark = pytest.mark.slow

ENV = {"LOG_LEVEL": "warning", "GUNICORN_THREADS": "8"}
LOST = 3


@pytest.fixture()
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(data_dir=str(tmp_path / "data"), persist=True) as server:
        yield server


def restart_from(server: RedisServer, files: Path | None = None, keep: Path | None = None) -> None:
    """Stop Redis (its AOF written out), keep a copy of its files in ``keep``, and start it
    again on the files of ``files`` if given."""
    server.stop()
    data = Path(server.data_dir)
    if keep is not None:
        shutil.copytree(data, keep)
    if files is not None:
        shutil.rmtree(data)
        shutil.copytree(files, data)
    server.start()


def brief(entries: list[dict[str, Any]]) -> list[tuple[int, str, Any]]:
    return [(e["version"], e["at"], e["action"]) for e in entries]


def test_a_log_that_lost_changes_and_took_as_many_new_ones_is_served_as_stored(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """A stream was sent three entries; Redis restarts from files where those three changes
    are lost and three others took their versions. The stream must end (it was sent entries
    that no longer exist), and the process must serve the stored log. Before, the version
    looked unchanged: the feed kept the lost entries, served them to every reader, and the
    stream went on as if nothing had happened."""
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        game = create(base, players=["ann", "bo"], auto_deal=True, seed=9)
        gid, tokens, host = game["game_id"], [s["token"] for s in game["seats"]], game["host_token"]

        def moves(n: int, rng: random.Random) -> None:
            for _ in range(n):
                assert play_turn(base, gid, tokens[view(base, gid)["turn"]], rng) is not None

        moves(2, random.Random(1))
        kept = view(base, gid)["version"]
        restart_from(redis_server, keep=tmp_path / "before")
        moves(LOST, random.Random(2))  # the history Redis will come back with
        restart_from(redis_server, tmp_path / "before", keep=tmp_path / "other")
        assert view(base, gid)["version"] == kept

        got: list[dict[str, Any]] = []
        ended = threading.Event()

        def follow() -> None:
            url = f"{base}/api/v1/games/{gid}/events"
            with (
                contextlib.suppress(requests.RequestException),
                requests.get(url, headers={"Accept": SSE}, stream=True, timeout=60) as r,
            ):
                got.extend(sse_entries(r))
            ended.set()

        threading.Thread(target=follow, daemon=True).start()
        moves(LOST, random.Random(3))  # the history the stream is sent, which Redis loses
        top = kept + LOST
        eventually(lambda: len(got) == top, 10, "the stream never had the entries Redis loses")
        restart_from(redis_server, tmp_path / "other")
        assert view(base, gid)["version"] == top

        eventually(ended.is_set, 15, "the stream that was sent lost entries stays open")
        stored = requests.get(
            f"{base}/api/v1/games/{gid}/history", headers={"Authorization": f"Bearer {host}"}
        ).json()["entries"]
        assert brief(got[kept:]) != brief(stored[kept:]), "the test lost no entry"
        served = requests.get(
            f"{base}/api/v1/games/{gid}/events",
            headers={"Authorization": f"Bearer {host}"},
            timeout=10,
        ).json()["entries"]
        assert brief(served) == brief(stored), "the lost entries were served"
        moves(1, random.Random(4))  # the game goes on from what is stored
        page = requests.get(f"{base}/api/v1/games/{gid}/events", params={"after": top}).json()
        assert [e["version"] for e in page["entries"]] == [top + 1]
