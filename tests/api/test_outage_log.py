"""The app's log through a Redis outage: every request fails with the same error, and the log
gets one line a second of it per process, with the count of the lines held back, not one line
per request, and those held back told even when no request follows. A real gunicorn on a real
Redis that the test stops."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import requests

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from tests.eventually import eventually

REQUESTS = 200
SUPPRESSED = " identical lines suppressed)"
TOLD = " identical lines were suppressed)"


def redis_errors(log: Path) -> list[str]:
    lines: list[dict[str, Any]] = [
        json.loads(raw) for raw in log.read_text().splitlines() if raw.startswith("{")
    ]
    return [
        line["message"]
        for line in lines
        if line.get("event") == "log" and line["message"].startswith("redis error: ")
    ]


def held_back(message: str) -> int:
    if not message.endswith(SUPPRESSED):
        return 0
    return int(message[: -len(SUPPRESSED)].rsplit("(", 1)[1])


def told(message: str) -> int:
    """How many requests' lines ``message`` stands for: a line told at a period's end (with
    no identical one to carry the count) stands for those held back only."""
    if message.endswith(TOLD):
        return int(message[: -len(TOLD)].rsplit("(", 1)[1])
    return 1 + held_back(message)


def test_an_outage_logs_one_line_a_second_not_one_per_request(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    redis = RedisServer().start()
    try:
        with Gunicorn.instance(redis.url, log, workers=1) as app:
            redis.stop()
            started = time.monotonic()
            for _ in range(REQUESTS):
                r = requests.get(app.url + "/api/v1/games/nosuchgame", timeout=10)
                assert r.status_code == 503
            took = time.monotonic() - started
            time.sleep(1.1)  # past the period: this one is throttled from the last line told
            assert requests.get(app.url + "/api/v1/games/nosuchgame", timeout=10).status_code == 503
            # The lines held back are told at their period's end, with no request after them:
            # none is lost without a trace.
            eventually(
                lambda: sum(told(m) for m in redis_errors(log)) >= REQUESTS + 1,
                10,
                f"held-back lines untold: {redis_errors(log)}",
            )
    finally:
        redis.stop()
    messages = redis_errors(log)
    # One a second per distinct error text (refused, timed out...), with room for the edges.
    assert len(messages) <= 2 * (took + 4), (len(messages), took, messages)
    assert any(told(m) > 1 for m in messages), messages
    assert sum(told(m) for m in messages) == REQUESTS + 1, messages
