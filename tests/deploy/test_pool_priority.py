"""The two pools' CPU priority on a shared machine (deploy/gunicorn.conf.py, NICENESS): the API
pool's workers yield to the streams pool's, and neither pool is a session of its own, where
Linux's autogroup scheduling would share the CPU between whole sessions whatever the nice
values say (docs/design.md, "10,000 watchers")."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer


def workers_of(server: Gunicorn) -> list[psutil.Process]:
    assert server.proc is not None
    return psutil.Process(server.proc.pid).children()


@pytest.mark.parametrize(("pool", "niceness"), [("api", 5), ("streams", 0)])
def test_each_pools_workers_run_at_its_niceness(
    redis_server: RedisServer, tmp_path: Path, pool: str, niceness: int
) -> None:
    server = Gunicorn(redis_server.url, pool=pool, workers=1, log_path=tmp_path / "log")
    server.start()
    try:
        workers = workers_of(server)
        assert workers, "no worker"
        base = os.nice(0)  # the niceness this test runs at, which the pools inherit
        assert [w.nice() for w in workers] == [base + niceness] * len(workers)
        assert all(os.getsid(w.pid) == os.getsid(0) for w in workers)  # no session of its own
        assert os.getpgid(server.proc.pid) == server.proc.pid  # a group: killed together
    finally:
        server.stop()


def test_gunicorn_nice_overrides_the_pools_value(redis_server: RedisServer, tmp_path: Path) -> None:
    server = Gunicorn(
        redis_server.url, env={"GUNICORN_NICE": "2"}, workers=1, log_path=tmp_path / "log"
    )
    server.start()
    try:
        assert [w.nice() for w in workers_of(server)] == [os.nice(0) + 2]
    finally:
        server.stop()
