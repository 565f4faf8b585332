"""Games whose hand-over to the worker was lost while their change was kept: the worker's sweep
finds them in the due sets their changes wrote (service/store/due.py) and queues them. Real
gunicorn, real Redis, the worker's own process. The loss is made as a failover of the queue's
master to a replica that never got the queue's writes leaves it (the ``{work}`` keys are gone,
the games' keys are whole), and as a process killed while it owed the write."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from devstack.gunicorn import Gunicorn, start_gunicorn
from devstack.redis_server import RedisServer
from devstack.worker import worker
from service.store import keys
from tests.eventually import eventually
from tests.live.helpers import create, view
from tests.redis_clients import keys_not_starting, user_without

pytestmark = pytest.mark.slow

ENV = {"MIN_TURN_SECONDS": "1", "LOG_LEVEL": "warning"}
SWEEP = {"WORKER_SWEEP_MS": "300", "WORKER_SWEEP_GRACE_MS": "1000"}
QUEUE = (keys.WORK_JOBS, keys.WORK_MORE, keys.WORK_DUE)


@pytest.fixture()
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


def test_a_table_of_bots_whose_queueing_was_lost_is_played_to_the_end(
    redis_server: RedisServer,
) -> None:
    """Four bots: the creation plays what its budget allows and queues the rest, then the
    queue is lost. Before the sweep, the worker had nothing to take and the game stayed at its
    version for ever."""
    client = redis.Redis.from_url(redis_server.url)
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        players: list[Any] = [{"name": f"b{n}", "bot": "hard"} for n in range(4)]
        game = create(base, players=players, auto_deal=True, seed=3, options={"rounds": 2})
        gid = game["game_id"]
        assert client.xlen(keys.WORK_JOBS) == 1, "the creation did not queue its game"
        client.delete(*QUEUE)  # the queue's master failed over to a replica without them
        stored = view(base, gid)["version"]
        assert view(base, gid)["status"] != "game_over"
        with worker({**ENV, **SWEEP, "REDIS_URL": redis_server.url}):
            eventually(
                lambda: view(base, gid)["status"] == "game_over",
                120,
                f"the bots' game stays near version {stored}: nobody queued it",
            )
        assert client.zscore(keys.DUE, gid) is None, "a finished game is owed nothing"


def test_a_turn_clock_whose_schedule_was_lost_still_runs_out(redis_server: RedisServer) -> None:
    """ann's turn is clocked (1 s); its schedule is lost with the queue. Her turn must still be
    played for her once the clock runs out."""
    client = redis.Redis.from_url(redis_server.url)
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        players: list[Any] = ["ann", {"name": "cpu", "bot": "random"}]
        game = create(base, players=players, auto_deal=True, turn_seconds=1, seed=5)
        gid = game["game_id"]
        eventually(lambda: view(base, gid)["turn"] == 0, 10, "ann's turn never came")
        before = view(base, gid)["version"]
        assert client.zscore(keys.WORK_DUE, gid) is not None, "ann's clock was not scheduled"
        client.delete(*QUEUE)
        with worker({**ENV, **SWEEP, "REDIS_URL": redis_server.url}):
            eventually(
                lambda: view(base, gid)["version"] > before,
                15,
                "ann's turn clock ran out and nobody played her turn",
            )


def test_a_game_owed_nothing_leaves_the_due_set(redis_server: RedisServer) -> None:
    """A person's unclocked turn owes the server nothing: the game is in no due set, and the
    sweep queues nothing for it."""
    client = redis.Redis.from_url(redis_server.url)
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        game = create(base, players=["ann", "bo"], auto_deal=True, seed=5)
        gid = game["game_id"]
        assert view(base, gid)["status"] == "in_round"
        assert client.zscore(keys.DUE, gid) is None
        with worker({**ENV, **SWEEP, "REDIS_URL": redis_server.url}):
            eventually(lambda: client.exists(keys.WORK_SWEEP) == 1, 10, "no sweep was made")
            assert client.xlen(keys.WORK_JOBS) == 0


def test_a_hand_over_owed_by_a_process_killed_meanwhile_is_made_by_the_sweep(
    redis_server: RedisServer,
) -> None:
    """The app may not write the queue's keys (an ACL), so the bots' creation owes its
    hand-over; the app is killed (SIGKILL) before Redis takes it again. Before the sweep, the
    owed write died with it and the game never moved again."""
    admin = redis.Redis.from_url(redis_server.url)
    app_url = user_without(redis_server, admin, keys=keys_not_starting("mt:{work}"))
    app = Gunicorn(app_url, env=ENV).start()
    try:
        players: list[Any] = [{"name": f"b{n}", "bot": "hard"} for n in range(4)]
        game = create(app.url, players=players, auto_deal=True, seed=3, options={"rounds": 2})
        gid = game["game_id"]
        stored = view(app.url, gid)["version"]
        app.kill9()
    finally:
        app.stop()
    assert admin.xlen(keys.WORK_JOBS) == 0, "the hand-over was made: nothing was owed"
    user_without(redis_server, admin)
    with (
        start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base,
        worker({**ENV, **SWEEP, "REDIS_URL": redis_server.url}),
    ):
        eventually(
            lambda: view(base, gid)["status"] == "game_over",
            120,
            f"the bots' game stays near version {stored}: its owed hand-over died",
        )


def test_a_table_of_bots_stored_without_a_due_entry_is_backfilled_and_played(
    redis_server: RedisServer,
) -> None:
    """A table of bots as an older release stored it, with no due entry (deleted here), whose
    hand-over was lost with the queue. Before the backfill, the sweep had nothing to find and
    the game stayed at its version for ever; a worker's start now gives it its entry."""
    client = redis.Redis.from_url(redis_server.url)
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        players: list[Any] = [{"name": f"b{n}", "bot": "hard"} for n in range(4)]
        game = create(base, players=players, auto_deal=True, seed=3, options={"rounds": 2})
        gid = game["game_id"]
        client.delete(*QUEUE, keys.WORK_BACKFILLED)
        assert client.zrem(keys.DUE, gid) == 1, "the creation wrote no due entry"
        stored = view(base, gid)["version"]
        assert view(base, gid)["status"] != "game_over"
        with worker({**ENV, **SWEEP, "REDIS_URL": redis_server.url}):
            eventually(
                lambda: view(base, gid)["status"] == "game_over",
                120,
                f"the bots' game stays near version {stored}: no due entry, nobody queued it",
            )
        assert client.exists(keys.WORK_BACKFILLED), "the pass was not marked done"
