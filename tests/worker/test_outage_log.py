"""The worker's log through a Redis outage: each of its loops says so about once a second, not
once per poll."""

from __future__ import annotations

import json
import time
from pathlib import Path

from devstack.redis_server import RedisServer
from devstack.worker import worker

#: How long Redis is away while the worker runs.
OUTAGE_SECONDS = 4.0


def test_a_redis_outage_costs_a_line_a_second_per_loop(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    redis = RedisServer().start()
    try:
        with worker({"REDIS_URL": redis.url}, log):
            redis.stop()
            time.sleep(OUTAGE_SECONDS)
    finally:
        redis.stop()
    records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    by_logger: dict[str, int] = {}
    for record in records:
        if record["level"] == "warning":
            by_logger[record["logger"]] = by_logger.get(record["logger"], 0) + 1
    assert by_logger, "the outage was not logged"
    # About one a second, with room for a slow start and the stop (one a poll was 16).
    assert all(n <= OUTAGE_SECONDS + 3 for n in by_logger.values()), by_logger
