"""A Redis that hangs (SIGSTOP for 10 s, then SIGCONT) while bots play: every request fails fast
with a 503 problem instead of holding a worker, /readyz says so, nothing is half-written, and
everything recovers without help."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.faults.load import Journal, play_during, specs, total_actions, wait_for

pytestmark = pytest.mark.slow

HANG_SECONDS = 10.0
FAST = 2.0  # every answer, refused or not, within this many seconds
CLIENTS = 4  # bot threads; the server has 6 threads (3 workers x 2), so none queues


@dataclass(frozen=True)
class Probe:
    sent: float
    seconds: float
    status: int
    code: str | None


def probe_ready(url: str) -> Probe:
    sent = time.monotonic()
    r = requests.get(url + "/readyz", timeout=10)
    code = r.json().get("code") if r.status_code != 200 else None
    return Probe(sent, time.monotonic() - sent, r.status_code, code)


def test_hung_redis_fails_fast_and_recovers_by_itself() -> None:
    with RedisServer() as redis, start_gunicorn(redis.url, workers=3) as url:
        assert redis.proc is not None
        pid = redis.proc.pid
        games = specs(12, base_seed=50_000)
        total = total_actions(games)
        probes: list[Probe] = []
        window: dict[str, float] = {}

        def hang_redis(journal: Journal) -> None:
            wait_for(journal, total // 4)
            os.kill(pid, signal.SIGSTOP)
            window["stopped"] = time.monotonic()
            try:
                while time.monotonic() < window["stopped"] + HANG_SECONDS:
                    probes.append(probe_ready(url))
                    time.sleep(0.2)
            finally:
                os.kill(pid, signal.SIGCONT)
                window["resumed"] = time.monotonic()
            window["applied_at_resume"] = journal.applied
            while (probe := probe_ready(url)).status != 200:
                probes.append(probe)
                assert time.monotonic() < window["resumed"] + 5, "not ready again after SIGCONT"
                time.sleep(0.1)
            probes.append(probe)
            window["ready_again"] = time.monotonic()

        played, journal = play_during(url, games, hang_redis, concurrency=CLIENTS)

    stopped, resumed = window["stopped"], window["resumed"]
    assert window["applied_at_resume"] < total, "games were still being played after the hang"
    # Every answer came fast, and every failure was the storage problem a client may retry.
    slow = [a for a in journal.answers if a.seconds > FAST]
    assert not slow, slow[:5]
    failures = [a for a in journal.answers if a.status >= 500]
    for a in failures:
        assert (a.status, a.content_type, a.code) == (
            503,
            "application/problem+json",
            "storage_unavailable",
        ), a
        assert a.retry_after == "1"
    during = [a for a in journal.answers if stopped + FAST < a.sent < resumed - FAST]
    assert during and all(a.status == 503 for a in during), "requests got through a stopped Redis"
    # /readyz: never slow, not ready from the first probe after the stop until SIGCONT.
    assert all(p.seconds < FAST for p in probes), probes
    hung = [p for p in probes if stopped <= p.sent < resumed - FAST]
    assert hung and all((p.status, p.code) == (503, "redis_unavailable") for p in hung), hung
    assert hung[0].sent + hung[0].seconds < stopped + FAST
    refused = [a.seconds for a in failures]
    print(
        f"\nhung Redis {HANG_SECONDS:.0f} s: {len(journal.answers)} answers, {len(failures)} 503s "
        f"(slowest {max(refused):.3f} s, median {sorted(refused)[len(refused) // 2]:.3f} s); "
        f"/readyz 503 after {hung[0].sent + hung[0].seconds - stopped:.2f} s, ready again "
        f"{window['ready_again'] - resumed:.2f} s after SIGCONT; {len(played)} games finished"
    )
