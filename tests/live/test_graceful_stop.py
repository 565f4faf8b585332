"""SIGTERM to a streams pool (a rollout, ``make run``'s Ctrl-C): its open streams end cleanly at
once, and a long-poll in flight is answered, so the pool exits in a moment instead of holding
them until its graceful timeout and cutting them then. Readers reconnect to another instance
and resume from their last entry."""

from __future__ import annotations

import http.client
import signal
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import requests

from devstack.gunicorn import Gunicorn
from devstack.managed import wait_until
from devstack.redis_server import RedisServer

#: Well above what the test allows for the stop: without the drain the streams would be held
#: this long and then cut.
GRACEFUL_TIMEOUT = 30
#: How long the pool may take to exit after SIGTERM (it has nothing left to wait for).
STOPPED_WITHIN = 8.0


def one_streams_worker(redis_server: RedisServer, tmp_path: Any) -> Gunicorn:
    """A started streams pool of one worker whose graceful timeout is GRACEFUL_TIMEOUT, logging
    to ``streams.log`` in ``tmp_path``; the caller stops it."""
    server = Gunicorn(
        redis_server.url,
        workers=1,
        pool="streams",
        env={"GRACEFUL_TIMEOUT": str(GRACEFUL_TIMEOUT), "STREAM_WORKERS": "1"},
        log_path=tmp_path / "streams.log",
    )
    server.start()
    return server


def test_sigterm_ends_open_streams_cleanly_and_the_pool_exits(
    redis_server: RedisServer, tmp_path: Any
) -> None:
    server = one_streams_worker(redis_server, tmp_path)
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


def refused(url: str) -> bool:
    """Whether a new connection to ``url``'s host and port is refused (nothing accepts there)."""
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def test_a_stream_asked_for_after_sigterm_in_a_worker_that_never_streamed_ends_cleanly(
    redis_server: RedisServer, live_server: str, tmp_path: Any
) -> None:
    """A stream asked for after SIGTERM, on a connection the worker accepted before (a kept-alive
    one; a connection accepted in the second before the worker stops accepting is the same), in a
    worker whose hub did not exist when the stop drained the hubs: it must end at once, cleanly,
    as the streams open at the stop do, and its reader resume elsewhere from its last entry. Not
    ended, it is held until the graceful timeout and then cut."""
    server = one_streams_worker(redis_server, tmp_path)
    try:
        created = requests.post(
            live_server + "/api/v1/games", json={"players": ["ann", "bo"]}, timeout=10
        ).json()
        events = f"/api/v1/games/{created['game_id']}/events"
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        conn.request("GET", "/healthz")  # the worker holds the connection, kept alive
        assert conn.getresponse().read() == b'{"status":"ok"}'
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM)
        wait_until(
            lambda: refused(server.url),
            alive=lambda: server.alive,
            timeout=10,
            interval=0.02,
            what="the stop of accepting",
            exited=lambda: (tmp_path / "streams.log").read_text()[-2000:],
        )
        time.sleep(0.3)  # the drain looks at the worker's stop every 0.1 s: it has run
        conn.request("GET", events, headers={"Accept": "text/event-stream"})
        answer = conn.getresponse()
        assert answer.status == 200
        try:
            body: bytes | Exception = answer.read()
        except http.client.IncompleteRead as exc:  # cut, not ended
            body = exc
        server.proc.wait(GRACEFUL_TIMEOUT + 10)
        conn.close()
    finally:
        server.stop()
    assert isinstance(body, bytes), f"the stream was cut: {body!r}"
    assert b"id: 1\n" in body and body.endswith(b"\n\n"), body
    host = {"Authorization": f"Bearer {created['host_token']}"}
    dealt = requests.post(
        f"{live_server}{events[: -len('/events')]}/deal", headers=host, timeout=10
    )
    assert dealt.status_code == 200, dealt.text
    with requests.get(
        live_server + events,
        headers={"Accept": "text/event-stream", "Last-Event-ID": "1"},
        stream=True,
        timeout=10,
    ) as resumed:
        first = next(line for line in resumed.iter_lines() if line.startswith(b"id: "))
    assert first == b"id: 2", "the resumed stream did not start after the last entry read"
