"""The real image (``make test-image``): the Dockerfile built unchanged with buildah, its CMD run
against a test Redis: ready, a full bot game played through it, gunicorn running as uid 10001."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests
from mexican_train_client import Client

from devstack.redis_server import RedisServer, free_port
from service.tournament.runner import game_specs, play_http, play_local
from tests.image import image

pytestmark = [pytest.mark.slow, pytest.mark.image]


def test_image_builds_runs_as_uid_10001_and_plays_a_game(tmp_path: Path) -> None:
    image.ensure_tools()
    timings: dict[str, float] = {}
    with image.machine_lock():
        started = time.monotonic()
        how = image.base_image()
        timings[f"base ({how})"] = time.monotonic() - started
        started = time.monotonic()
        image.build()
        timings["build"] = time.monotonic() - started
        config = image.image_config()
        assert config["User"] == "10001:10001"
        with RedisServer() as redis:
            port = free_port()
            env = {"REDIS_URL": redis.url, "PORT": str(port), "WEB_CONCURRENCY": "2"}
            started = time.monotonic()
            with image.running(env, port, tmp_path / "image.log") as proc:
                timings["ready"] = time.monotonic() - started
                base = f"http://127.0.0.1:{port}"
                assert requests.get(base + "/readyz", timeout=5).json() == {"status": "ready"}
                (spec,) = game_specs(["planner", "greedy"], 1, base_seed=80_000)
                with Client(base) as client:
                    result = play_http(client, spec)
                assert result.digest == play_local(spec).digest
                gunicorns = [
                    p for p in image.descendants(proc.pid) if "gunicorn" in image.cmdline(p)
                ]
                assert len(gunicorns) >= 3, "master and two workers"
                assert {image.uid_of(p) for p in gunicorns} == {10001}
    print("\nimage: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
