"""SIGTERM to a streams pool (a rollout, ``make run``'s Ctrl-C): its open streams end cleanly at
once, and a long-poll in flight is answered, so the pool exits in a moment instead of holding
them until its graceful timeout and cutting them then. Readers reconnect to another instance
and resume from their last entry."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import requests

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer

#: Well above what the test allows for the stop: without the drain the streams would be held
#: this long and then cut.
GRACEFUL_TIMEOUT = 30
#: How long the pool may take to exit after SIGTERM (it has nothing left to wait for).
STOPPED_WITHIN = 8.0


def test_sigterm_ends_open_streams_cleanly_and_the_pool_exits(
    redis_server: RedisServer, tmp_path: Any
) -> None:
    server = Gunicorn(
        redis_server.url,
        workers=1,
        pool="streams",
        env={"GRACEFUL_TIMEOUT": str(GRACEFUL_TIMEOUT), "STREAM_WORKERS": "1"},
        log_path=tmp_path / "streams.log",
    )
    server.start()
    try:
        created = requests.post(
            server.url + "/api/v1/games", json={"players": ["ann", "bo"]}, timeout=10
        ).json()
        events = f"{server.url}/api/v1/games/{created['game_id']}/events"
        results: dict[str, Any] = {}

        def read(media: str) -> None:
            try:
                with requests.get(
                    events, headers={"Accept": media}, stream=True, timeout=(5, 60)
                ) as r:
                    results[media] = b"".join(r.iter_content(None))
            except requests.RequestException as exc:  # cut, not ended
                results[media] = exc

        def poll() -> None:
            try:
                r = requests.get(events, params={"after": 1, "wait": 55}, timeout=60)
                results["poll"] = (r.status_code, r.json())
            except requests.RequestException as exc:
                results["poll"] = (exc, None)

        readers = [
            threading.Thread(target=read, args=("text/event-stream",)),
            threading.Thread(target=read, args=("application/x-ndjson",)),
            threading.Thread(target=poll),
        ]
        for reader in readers:
            reader.start()
        time.sleep(1.5)  # every reader is waiting on the feed
        assert not results, results
        assert server.proc is not None
        stopped_at = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(GRACEFUL_TIMEOUT + 10)
        took = time.monotonic() - stopped_at
        for reader in readers:
            reader.join(10)
    finally:
        server.stop()
    assert took < STOPPED_WITHIN, f"the pool took {took:.1f} s to stop"
    sse = results["text/event-stream"]
    assert isinstance(sse, bytes), f"the SSE stream was cut: {sse!r}"
    assert b"id: 1\n" in sse and sse.endswith(b"\n\n")
    ndjson = results["application/x-ndjson"]
    assert isinstance(ndjson, bytes), f"the NDJSON stream was cut: {ndjson!r}"
    assert b'"version":1' in ndjson
    status, body = results["poll"]
    assert status == 200 and body["entries"] == [], f"the long-poll was cut: {status!r}"


def test_streams_ending_while_redis_is_away_log_no_traceback(tmp_path: Any) -> None:
    """A stream gives its open-stream slot back in Redis when it ends. One that ends while
    Redis is away (a Redis outage, and the instance stopped meanwhile) cannot: the slot expires
    by itself. That must not cost a traceback per stream ("Error handling request")."""
    log = tmp_path / "streams.log"
    redis = RedisServer().start()
    server = Gunicorn(
        redis.url,
        workers=1,
        pool="streams",
        env={"GRACEFUL_TIMEOUT": "10", "STREAM_WORKERS": "1"},
        log_path=log,
    )
    try:
        server.start()
        created = requests.post(
            server.url + "/api/v1/games", json={"players": ["ann", "bo"]}, timeout=10
        ).json()
        events = f"{server.url}/api/v1/games/{created['game_id']}/events"
        streams = [
            requests.get(events, headers={"Accept": "text/event-stream"}, stream=True, timeout=30)
            for _ in range(3)
        ]
        assert all(s.status_code == 200 for s in streams)
        redis.stop()
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)  # the streams end, Redis still away
        server.proc.wait(30)
        for s in streams:
            s.close()
    finally:
        server.stop()
        redis.stop()
    text = log.read_text()
    assert "Traceback" not in text and "Error handling request" not in text, text[-4000:]
