"""The Prometheus multiprocess folder of a real gunicorn whose workers come and go (gunicorn
recycles an API worker every ~20,000 requests, ``max_requests``): it stays bounded, and the
counts of the workers that left are still reported."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import requests

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from tests.eventually import eventually
from tests.metrics import metric_total

WORKERS = 2
RECYCLES = 6
PER_ROUND = 20
ENDPOINT = "/api/v1/games/<game_id>"


def _workers(master: int) -> set[int]:
    found = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True)
    return {int(pid) for pid in found.stdout.split()}


def _replaced(master: int, gone: int) -> bool:
    now = _workers(master)
    return gone not in now and len(now) == WORKERS


def test_recycled_workers_leave_their_counts_but_not_their_files(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    folder = tmp_path / "metrics"
    folder.mkdir()
    server = Gunicorn(
        redis_server.url,
        workers=WORKERS,
        env={"PROMETHEUS_MULTIPROC_DIR": str(folder)},
        log_path=tmp_path / "app.log",
    )
    with server:
        assert server.proc is not None
        master = server.proc.pid
        for _ in range(RECYCLES):
            for _ in range(PER_ROUND):
                assert (
                    requests.get(server.url + "/api/v1/games/nosuch", timeout=5).status_code == 404
                )
            gone = min(_workers(master))
            os.kill(gone, signal.SIGTERM)  # as gunicorn's own recycling: the worker exits
            eventually(lambda gone=gone: _replaced(master, gone), 20, "the worker was not replaced")
        text = requests.get(server.url + "/metrics", timeout=5).text
        files = sorted(p.name for p in folder.glob("*.db"))
    sent = RECYCLES * PER_ROUND
    labels = {"method": "GET", "endpoint": ENDPOINT, "status": "404"}
    assert metric_total(text, "http_requests_total", **labels) == sent
    assert metric_total(text, "http_request_duration_seconds_count", **labels) == sent
    assert metric_total(text, "http_request_duration_seconds_bucket", le="+Inf", **labels) == sent
    # Each live worker's files and one archive per type, not two more files per worker gone.
    assert len(files) <= 3 * WORKERS + 2, files
