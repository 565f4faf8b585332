"""The worker's own ``/metrics`` (``WORKER_METRICS_PORT``): a real worker on a real Redis, a
table of bots whose hand-over to the worker was lost, so that a sweep finds it and re-queues it,
and the worker plays it to its end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer, free_port
from devstack.worker import worker
from tests.eventually import eventually
from tests.live.helpers import create, view
from tests.metrics import metric_total
from tests.worker.test_sweep import ENV, QUEUE, SWEEP


def scrape(port: int) -> str:
    return requests.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text


@pytest.fixture()
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def test_the_workers_counters_move_as_it_sweeps_and_plays(redis_server: RedisServer) -> None:
    client = redis.Redis.from_url(redis_server.url)
    port = free_port()
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        players: list[Any] = [{"name": f"b{n}", "bot": "hard"} for n in range(4)]
        game = create(base, players=players, auto_deal=True, seed=3, options={"rounds": 2})
        gid = game["game_id"]
        assert view(base, gid)["status"] != "game_over"
        client.delete(*QUEUE)  # the hand-over lost: only a sweep finds the game
        env = {**ENV, **SWEEP, "REDIS_URL": redis_server.url, "WORKER_METRICS_PORT": str(port)}
        with worker(env):
            eventually(lambda: view(base, gid)["status"] == "game_over", 120, "not played")
            text = scrape(port)
            assert metric_total(text, "worker_sweeps_total") >= 1
            assert metric_total(text, "worker_games_requeued_total") >= 1
            played = view(base, gid)["version"] - game["version"]
            assert metric_total(text, "worker_turns_played_total") == played
            # The game was owed a move for over the grace when the first sweep read it; once
            # played, the sweeps find nothing owed.
            eventually(
                lambda: metric_total(scrape(port), "worker_oldest_due_seconds") == 0,
                5,
                "a game owed nothing still counts as lag",
            )


def test_the_worker_serves_no_metrics_unless_asked(redis_server: RedisServer) -> None:
    port = free_port()
    with worker({**ENV, "REDIS_URL": redis_server.url}), pytest.raises(requests.ConnectionError):
        scrape(port)


def test_the_worker_runs_with_the_images_multiprocess_folder_set_and_absent(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The image sets PROMETHEUS_MULTIPROC_DIR for gunicorn, whose master creates the folder;
    the worker's container has the same environment and an empty /tmp: it must start, serve
    its metrics from its own memory, and write nothing into such a folder."""
    port = free_port()
    absent = tmp_path / "prometheus"
    env = {
        **ENV,
        "REDIS_URL": redis_server.url,
        "WORKER_METRICS_PORT": str(port),
        "PROMETHEUS_MULTIPROC_DIR": str(absent),
    }
    with worker(env):
        assert "worker_sweeps_total" in scrape(port)
    assert not absent.exists()
