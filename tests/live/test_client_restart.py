"""The Python client's default retries against a real server stopped, then started again on
the same port: a call made while it is down goes through once it is back, within the default
policy's 15 s (past them it would have raised); a policy given a shorter time gives up while
one with the default still retries."""

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
        back = threading.Event()

        def restart() -> None:
            time.sleep(DOWN_SECONDS)
            back.set()  # before it listens: nothing can answer the call before this is set
            server.start()

        restarted = threading.Thread(target=restart)
        try:
            with Client(server.url) as client:
                assert client.healthz()
                server.stop()  # connections refused from now on
                restarted.start()
                assert taken(port), "the port is free for another process while the server is down"
                created = client.create_game(["ann", "bo"])
                assert back.is_set(), "answered while the server was down"
                assert client.view(created["game_id"])["game_id"] == created["game_id"]
                assert client.requests > 3  # it retried, and did not sleep one long wait
        finally:
            restarted.join(60)
            server.stop()


def test_a_shorter_give_up_time_is_kept() -> None:
    policy = RetryPolicy(give_up_after=1.0)
    with held_port() as port:  # nothing listens there
        url = f"http://127.0.0.1:{port}"
        outcome: list[BaseException] = []
        with Client(url) as patient:
            waiting = threading.Thread(target=gives_up, args=(patient, outcome))
            waiting.start()  # the default policy's call, started first
            with Client(url, retry=policy) as client, pytest.raises(TransportError):
                client.view("nosuchgame")
            # The time ended it, not the count of tries; and it ended while the call under
            # the default policy, begun earlier, still retried.
            assert client.requests < policy.attempts
            assert waiting.is_alive(), "the shorter give-up time ended no sooner than the default"
            waiting.join(60)
        assert [type(err) for err in outcome] == [TransportError]


def gives_up(client: Client, outcome: list[BaseException]) -> None:
    """Call a server that never answers; keep what the call raised."""
    try:
        client.view("nosuchgame")
    except BaseException as err:  # the test asserts on what it was
        outcome.append(err)
