"""Slow clients (headers a line every 2 s, more connections than the app has request threads)
hold nothing but nginx connections: other clients through nginx are answered at once, because
nginx reads a whole request before it passes it to gunicorn. Straight at gunicorn, the same
clients hold its threads: the control shows what the proxy is for."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from tests.e2e.conftest import Stack

pytestmark = pytest.mark.e2e

SLOW_CLIENTS = 12  # the stack has 2 instances x 2 workers x 2 threads = 8 request threads
LINE_EVERY = 2.0  # seconds between two header lines of a slow client
PROBES = 8


@contextmanager
def slow_clients(url: str, n: int) -> Iterator[None]:
    """``n`` connections that send a request's header lines one every LINE_EVERY seconds and
    never finish it, until the block ends."""
    parts = urlsplit(url)
    stop = threading.Event()
    sockets = [socket.create_connection((parts.hostname, parts.port), timeout=5) for _ in range(n)]

    def trickle(sock: socket.socket, i: int) -> None:
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: slow\r\n")
            line = 0
            while not stop.wait(LINE_EVERY):
                sock.sendall(b"X-Slow-%d-%d: x\r\n" % (i, line))
                line += 1
        except OSError:
            pass  # the server gave up on us: fine, that is one way to cope

    threads = [threading.Thread(target=trickle, args=(s, i)) for i, s in enumerate(sockets)]
    for t in threads:
        t.start()
    try:
        time.sleep(LINE_EVERY + 0.5)  # every slow client has sent at least two lines
        yield
    finally:
        stop.set()
        for t in threads:
            t.join()
        for s in sockets:
            s.close()


def probe(url: str) -> list[float | None]:
    """Seconds each of PROBES normal requests took (None: no answer within 1 s)."""
    took: list[float | None] = []
    for _ in range(PROBES):
        start = time.monotonic()
        try:
            r = requests.get(url + "/healthz", timeout=1.0)
            took.append(time.monotonic() - start if r.status_code == 200 else None)
        except requests.RequestException:
            took.append(None)
        time.sleep(0.25)
    return took


def test_slow_clients_through_nginx_do_not_block_others(stack: Stack) -> None:
    with slow_clients(stack.url, SLOW_CLIENTS):
        took = probe(stack.url)
        # Creating and reading a game, too: the whole path to Redis is free.
        created = requests.post(
            stack.url + "/api/v1/games", json={"players": ["a", "b"]}, timeout=1
        )
    assert None not in took, took
    assert created.status_code == 201


def test_control_the_same_clients_straight_at_gunicorn_block_it(stack: Stack) -> None:
    """One worker with 2 threads, as exposed without the proxy: the slow clients take both
    threads, and a normal request waits until they give up (the test above could fail)."""
    env = {"GUNICORN_THREADS": "2", "LOG_LEVEL": "critical"}
    with start_gunicorn(stack.redis.url, workers=1, env=env) as base:
        assert None not in probe(base)
        with slow_clients(base, 4):
            took = probe(base)
    assert took.count(None) >= PROBES // 2, took
