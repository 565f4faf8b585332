"""Readers that hang up leak nothing: after 1,000 of them the streams pool holds as many client
connections and Redis clients as before (a leak of one per reader would show as hundreds)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import psutil
import pytest
import redis

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import Game, auth, create

DISCONNECTS = 1000
#: The server notices a reader gone at its next write: a keep-alive at most 10 s later.
SETTLE_SECONDS = 40


def connections_to(port: int) -> int:
    """Established TCP connections whose local end is the server's port."""
    return sum(
        1
        for c in psutil.net_connections("tcp")
        if c.laddr and c.laddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


def redis_clients(client: redis.Redis) -> int:
    return len(client.client_list())


def hang_up(port: int, gid: str, token: str, variant: int) -> None:
    """One reader: a stream (SSE, NDJSON) or a long-poll, dropped after its first bytes or
    before any answer."""
    accept, query = [
        ("text/event-stream", "after=0"),
        ("application/x-ndjson", "after=0"),
        ("application/json", "after=1&wait=30"),  # waits: nothing will be new
        ("text/event-stream", "after=0&access_token=" + token),
    ][variant % 4]
    request = (
        f"GET /api/v1/games/{gid}/events?{query} HTTP/1.1\r\nHost: t\r\nAccept: {accept}\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in auth(token if variant % 8 == 1 else None).items())
        + "\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        if variant % 4 != 2 and variant % 3:
            sock.recv(1)  # the stream has started (a long-poll answers nothing for 30 s)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")


def settled(measure: Callable[[], int], target: int) -> int:
    deadline = time.monotonic() + SETTLE_SECONDS
    while (now := measure()) > target and time.monotonic() < deadline:
        time.sleep(0.5)
    return now


@pytest.mark.slow
def test_a_thousand_readers_hanging_up_leak_no_connection(redis_server: RedisServer) -> None:
    env = {**LIVE_ENV, "GUNICORN_POOL": "streams", "STREAM_WORKERS": "1"}
    client = redis.Redis.from_url(redis_server.url)
    with start_gunicorn(redis_server.url, env=env) as base:
        port = urlsplit(base).port
        assert port is not None
        game = Game(create(base, players=["ann", "bo"]))
        token = game.tokens[0]
        assert token is not None
        with ThreadPoolExecutor(32) as pool:
            list(pool.map(lambda i: hang_up(port, game.id, token, i), range(100)))  # warm up
            warm_sockets = settled(lambda: connections_to(port), 0)
            warm_redis = redis_clients(client)
            list(pool.map(lambda i: hang_up(port, game.id, token, i), range(DISCONNECTS)))
        after_sockets = settled(lambda: connections_to(port), warm_sockets)
        after_redis = redis_clients(client)
        print(
            f"\nserver connections {warm_sockets} -> {after_sockets}, "
            f"redis clients {warm_redis} -> {after_redis}"
        )
        assert after_sockets <= warm_sockets == 0
        assert after_redis <= warm_redis + 2
        # Still serving.
        page = create(base, players=["x", "y"])
        assert page["version"] == 1
    client.close()
