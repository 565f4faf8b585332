"""The Python client's default retries against a real server stopped, then started again on
the same port: a call made while it is down goes through once it is back, within the default
policy's 15 s; a policy given a shorter time gives up within that time."""

from __future__ import annotations

import threading
import time

import pytest
from mexican_train_client import Client, RetryPolicy, TransportError

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer, free_port

#: How long the server is down while the call retries: well past a second of retries, short
#: of the default policy's 15 s.
DOWN_SECONDS = 8.0


def test_a_call_rides_out_a_server_restart_with_the_default_policy(
    redis_server: RedisServer,
) -> None:
    server = Gunicorn(redis_server.url, port=free_port(), workers=1)
    server.start()
    restarted = threading.Thread(target=lambda: (time.sleep(DOWN_SECONDS), server.start()))
    try:
        with Client(server.url) as client:
            assert client.healthz()
            server.stop()  # connections refused from now on
            started = time.monotonic()
            restarted.start()
            created = client.create_game(["ann", "bo"])
            took = time.monotonic() - started
            assert created["game_id"]
            assert DOWN_SECONDS <= took < 20, took
            assert client.requests > 3  # it retried, and did not sleep one long wait
    finally:
        restarted.join(60)
        server.stop()


def test_a_shorter_give_up_time_is_kept() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with Client(url, retry=RetryPolicy(give_up_after=1.0)) as client:
        started = time.monotonic()
        with pytest.raises(TransportError):
            client.view("nosuchgame")
        assert time.monotonic() - started < 4
