"""The client's ``events()`` against a server whose streams live shorter than a quiet game's
pause (``STREAM_MAX_SECONDS`` is an operator's setting, from 1 s): each stream the server ends
is opened again from the last entry, however long nothing happens, and the next entry comes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from mexican_train_client import Client, Media, RetryPolicy, TransportError

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from tests.live.conftest import LIVE_ENV
from tests.live.helpers import stand_in_streams

#: Gives up on failing connections after 2 s: a quiet stretch three times as long, with streams
#: of 1 s, must not count as failing.
PATIENCE = RetryPolicy(give_up_after=2)
QUIET_SECONDS = 6


@pytest.fixture(scope="module")
def short_lived() -> Iterator[str]:
    env = {**LIVE_ENV, "STREAM_MAX_SECONDS": "1"}
    with RedisServer() as redis, start_gunicorn(redis.url, env=env) as url:
        yield url


def test_streams_ended_by_their_lifetime_are_opened_again_through_a_quiet_stretch(
    short_lived: str,
) -> None:
    with Client(short_lived, retry=PATIENCE) as client:
        game = client.create_game(["ann", "bo"])
        gid = game["game_id"]
        after = client.view(gid)["version"]
        got: list[Any] = []

        def read() -> None:
            try:
                got.append(next(iter(client.events(gid, after=after))))
            except Exception as exc:  # what the test reports
                got.append(exc)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        time.sleep(QUIET_SECONDS)  # nothing happens; the server ends a stream each second
        dealt = client.deal(gid, token=game["host_token"])
        reader.join(timeout=30)
    assert len(got) == 1 and isinstance(got[0], dict), got
    assert got[0]["version"] == dealt["version"] and got[0]["action"]["action"] == "deal"


#: More streams ended at once in a row than doublings a float holds (2**1024 is past it): each
#: one's back-off doubles its bound until the policy's cap.
QUICK_ENDS = 1100


def test_a_long_run_of_streams_ended_at_once_ends_only_on_a_real_failure() -> None:
    """Every stream ended at once is opened again after a back-off, however many in a row;
    once the server stops answering, the reader gives up with TransportError (its policy's
    ``give_up_after``), not with an error of its own back-off."""
    quick = RetryPolicy(base=1e-6, cap=1e-5, give_up_after=1)
    with (
        stand_in_streams(QUICK_ENDS, Media.SSE.value, b"") as (url, served),
        Client(url, retry=quick) as client,
        pytest.raises(TransportError),
    ):
        next(iter(client.events("somegame", after=1)))
    assert served[0] > QUICK_ENDS, served
