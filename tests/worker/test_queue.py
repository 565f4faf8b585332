"""The worker's queue on a real Redis (and, re-run from tests/cluster, on a cluster): jobs go to
one worker each, due games are queued once their time comes, a dead worker's jobs are claimed
by another, and a game's lease has one holder."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from redis.cluster import RedisCluster

from devstack.redis_server import RedisServer
from service.store.work import WorkQueue
from service.worker.loop import Outcome, Worker
from tests.redis_clients import flushed_client


@pytest.fixture(scope="module")
def _own_redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture(name="redis_client")
def _own_redis_client(_own_redis_server: RedisServer) -> Iterator[redis.Redis]:
    """A redis-server of this module's own: the session's is shared with the background worker
    of any live server the session started (tests/conftest.py), which takes the very jobs these
    tests look for. (Private names: tests/cluster re-runs this module with its cluster's
    ``redis_client``, and a star import leaves these out.)"""
    with flushed_client(_own_redis_server) as client:
        yield client


@pytest.fixture()
def queue(redis_client: redis.Redis | RedisCluster) -> WorkQueue:
    q = WorkQueue(redis_client)
    q.ensure_group()
    q.ensure_group()  # a second worker starting finds the group there
    return q


def test_each_job_goes_to_one_worker(queue: WorkQueue) -> None:
    for n in range(10):
        queue.enqueue(f"game{n:04d}")
    first = queue.take("w1", 4, 10)
    second = queue.take("w2", 100, 10)
    assert len(first) == 4 and len(second) == 6
    assert {j.game_id for j in first + second} == {f"game{n:04d}" for n in range(10)}
    assert queue.take("w3", 100, 10) == []
    assert queue.pending() == 10
    queue.done(first + second)
    assert queue.pending() == 0


def test_due_games_are_queued_when_their_time_comes(queue: WorkQueue) -> None:
    queue.schedule("late0001", 2_000)
    queue.schedule("soon0001", 1_000)
    queue.schedule("soon0001", 1_500)  # a newer deadline replaces the older
    assert queue.promote_due(999) == 0
    assert queue.promote_due(1_500) == 1
    assert [j.game_id for j in queue.take("w", 10, 10)] == ["soon0001"]
    assert queue.promote_due(1_600) == 0  # moved, not copied
    assert queue.promote_due(5_000) == 1
    assert [j.game_id for j in queue.take("w", 10, 10)] == ["late0001"]


def test_a_dead_workers_jobs_are_claimed_after_their_idle_time(queue: WorkQueue) -> None:
    queue.enqueue("game0001")
    taken = queue.take("dies", 10, 10)  # never acknowledged
    assert queue.claim_stale("alive", 60_000) == []  # not idle long enough yet
    time.sleep(0.05)
    claimed = queue.claim_stale("alive", 20)
    assert [j.job_id for j in claimed] == [j.job_id for j in taken]
    queue.done(claimed)
    time.sleep(0.05)
    assert queue.claim_stale("alive", 20) == []


def test_games_with_more_to_do_wait_for_new_work_and_due_turns(queue: WorkQueue) -> None:
    """Bot tables that used up a slice go behind new work and a person's due turn, however
    many of them there are; a turn of the worker takes one of them at a time."""
    order: list[str] = []

    def play(game: str, spent: Callable[[], bool]) -> Outcome:
        order.append(game)
        return Outcome(more=game.startswith("bots"), due_ms=None)

    worker = Worker(queue, play, "w1")
    for n in range(3):
        queue.enqueue(f"bots{n:04d}")
    worker.step()  # new work: all three tables play a slice, and each has more to do
    assert order == ["bots0000", "bots0001", "bots0002"]
    worker.step()
    assert order[3:] == ["bots0000"]  # one of them, then the first queue is looked at again
    queue.schedule("clock001", 0)  # a person's turn clock ran out
    queue.enqueue("new00001")
    worker.step()
    assert order[4:] == ["new00001", "clock001"]
    worker.step()
    worker.step()
    assert order[6:] == ["bots0001", "bots0002"]
    assert queue.pending() == 0


def test_a_dead_workers_unfinished_tables_are_claimed_too(queue: WorkQueue) -> None:
    queue.enqueue("bots0001", more=True)
    taken = queue.take("dies", 10, 10)
    assert [j.game_id for j in taken] == ["bots0001"]
    time.sleep(0.05)
    claimed = queue.claim_stale("alive", 20)
    assert [j.job_id for j in claimed] == [j.job_id for j in taken]
    queue.done(claimed)
    assert queue.pending() == 0


def test_a_lease_has_one_holder(queue: WorkQueue) -> None:
    assert queue.lease("game0001", "w1", 5_000)
    assert not queue.lease("game0001", "w2", 5_000)
    queue.release("game0001", "w2")  # not w2's: nothing happens
    assert not queue.lease("game0001", "w2", 5_000)
    queue.release("game0001", "w1")
    assert queue.lease("game0001", "w2", 5_000)
    assert queue.lease("game0002", "w1", 30)  # another game's lease is another lease
    time.sleep(0.06)
    assert queue.lease("game0002", "w3", 5_000)  # an expired lease is free


def test_a_worker_whose_redis_lost_its_group_makes_it_again(
    redis_client: redis.Redis | RedisCluster,
) -> None:
    """A Redis that restarted empty has neither the queue nor its group: the worker's next
    round fails on the missing group, makes it again and takes the jobs queued since; while
    idle, it does not ask for the group again."""
    handled: list[str] = []
    worker = Worker(WorkQueue(redis_client), lambda game, spent: played(handled, game), "w1")
    stop = threading.Event()
    thread = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    thread.start()
    try:
        WorkQueue(redis_client).enqueue("game0001")
        wait_until(lambda: handled == ["game0001"])
        before = xgroup_calls(redis_client)
        time.sleep(1.0)  # five idle rounds
        assert xgroup_calls(redis_client) == before
        redis_client.flushall()
        time.sleep(0.5)  # a round fails on the missing group
        WorkQueue(redis_client).enqueue("game0002")
        wait_until(lambda: handled == ["game0001", "game0002"], seconds=10)
    finally:
        stop.set()
        thread.join(5)


def played(handled: list[str], game: str) -> Outcome:
    handled.append(game)
    return Outcome(more=False, due_ms=None)


def xgroup_calls(client: redis.Redis | RedisCluster) -> int:
    stats: Any = client.info("commandstats")
    nodes = stats.values() if isinstance(client, RedisCluster) else [stats]
    return sum(int(node.get("cmdstat_xgroup|create", {}).get("calls", 0)) for node in nodes)


def wait_until(done: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "not handled in time"
        time.sleep(0.05)
