"""The Python client's default retries against a real server stopped, then started again on
the same port: a call made while it is down goes through once it is back, within the default
policy's 15 s; a policy given a shorter time gives up within that time."""

from __future__ import annotations

import errno
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from mexican_train_client import Client, RetryPolicy, TransportError

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer

#: How long the server is down while the call retries: well past a second of retries, short
#: of the default policy's 15 s.
DOWN_SECONDS = 8.0
#: Gunicorn binds its port beside the test's hold on it (both with SO_REUSEPORT).
REUSE_PORT = {"GUNICORN_CMD_ARGS": "--reuse-port"}


@contextmanager
def held_port() -> Iterator[int]:
    """A loopback port bound, never listened on, for the block: connections to it are refused
    unless a server started with SO_REUSEPORT listens there too, and no other process can take
    it meanwhile (a port freed for the server's 8 s down could be another test's by then)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as hold:
        hold.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        hold.bind(("127.0.0.1", 0))
        yield int(hold.getsockname()[1])


def taken(port: int) -> bool:
    """Whether another server's socket is refused the port: one bound as most servers bind
    (SO_REUSEADDR: the stopped server's connections left in TIME_WAIT do not keep it out)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            other.bind(("127.0.0.1", port))
        except OSError as err:
            assert err.errno == errno.EADDRINUSE, err
            return True
    return False


def test_a_call_rides_out_a_server_restart_with_the_default_policy(
    redis_server: RedisServer,
) -> None:
    with held_port() as port:
        server = Gunicorn(redis_server.url, port=port, workers=1, env=REUSE_PORT)
        server.start()
        restarted = threading.Thread(target=lambda: (time.sleep(DOWN_SECONDS), server.start()))
        try:
            with Client(server.url) as client:
                assert client.healthz()
                server.stop()  # connections refused from now on
                started = time.monotonic()
                restarted.start()
                assert taken(port), "the port is free for another process while the server is down"
                created = client.create_game(["ann", "bo"])
                took = time.monotonic() - started
                assert created["game_id"]
                assert DOWN_SECONDS <= took < 20, took
                assert client.requests > 3  # it retried, and did not sleep one long wait
        finally:
            restarted.join(60)
            server.stop()


def test_a_shorter_give_up_time_is_kept() -> None:
    policy = RetryPolicy(give_up_after=1.0)
    with (
        held_port() as port,  # nothing listens there
        Client(f"http://127.0.0.1:{port}", retry=policy) as client,
    ):
        started = time.monotonic()
        with pytest.raises(TransportError):
            client.view("nosuchgame")
        assert time.monotonic() - started < 4
