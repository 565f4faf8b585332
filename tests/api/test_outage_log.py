"""The app's log through a Redis outage: every request fails with the same error, and the log
gets one line a second of it per process, with the count of the lines held back, not one line
per request. A real gunicorn on a real Redis that the test stops."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import requests

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer

REQUESTS = 200
SUPPRESSED = " identical lines suppressed)"


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
            time.sleep(1.1)  # past the period: the next line tells what was held back
            assert requests.get(app.url + "/api/v1/games/nosuchgame", timeout=10).status_code == 503
            time.sleep(0.5)  # the line reaches the file
    finally:
        redis.stop()
    messages = redis_errors(log)
    assert messages, "the outage was not logged"
    # One a second per distinct error text (refused, timed out...), with room for the edges.
    assert len(messages) <= 2 * (took + 2), (len(messages), took, messages)
    # The last line carries the count of those held back: none is lost without a trace.
    assert held_back(messages[-1]) > 0, messages[-1]
    assert sum(1 + held_back(m) for m in messages) == REQUESTS + 1, messages
