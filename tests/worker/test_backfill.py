"""The due sets' backfill (service/worker/backfill.py) on a Redis of its own: every live game
stored without a due entry gets the one its record says, and a pass is marked done only once it
has seen every game."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
import redis

from devstack.redis_server import RedisServer
from service.store import GameRecord, GameStore
from service.store import keys as K
from service.store.due import DueSets
from service.store.tokens import hash_token, new_token
from service.store.work import WorkQueue
from service.worker import backfill
from tests.eventually import eventually


@pytest.fixture()
def client() -> Iterator[redis.Redis]:
    with RedisServer() as server:
        made = redis.Redis.from_url(server.url)
        yield made
        made.close()


def _script_calls(client: redis.Redis) -> int:
    stats = client.info("commandstats")
    return sum(int(stats.get(f"cmdstat_{cmd}", {}).get("calls", 0)) for cmd in ("eval", "evalsha"))


def _unlisted(games: GameStore) -> str:
    """A game stored without a due entry, as an older release stored it."""
    return games.create(b"s", new_token(), [hash_token(new_token())], [b"r1"], due=None)


def test_a_game_whose_due_time_cannot_be_read_costs_the_pass_no_other_game(
    client: redis.Redis,
) -> None:
    """One game whose record the due time cannot be read from (a record this release does not
    decode): the others still get their entry, and the pass ends as made."""
    games, dues, queue = GameStore(client), DueSets(client), WorkQueue(client)
    made = [_unlisted(games) for _ in range(30)]
    bad = made[7]

    def due_of(record: GameRecord, now: int) -> int | None:
        if record.game_id == bad:
            raise ValueError("a record this release cannot read")
        return 1_000

    backfill.run_once(queue, dues, games, due_of, "w1", threading.Event())
    given = {g for g in made if client.zscore(K.due_key(g, False), g) is not None}
    assert given == set(made) - {bad}
    assert queue.backfilled()


def test_a_redis_restarted_during_a_pass_is_read_again_from_its_start(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A Redis restarted (from its AOF) between two SCAN calls of a pass: the client reconnects
    by itself, but the cursor it goes on with was the old process's (its hash seed, its table
    size), so keys are skipped. The pass must not end as if it had seen every game."""
    with RedisServer(persist=True, data_dir=str(tmp_path_factory.mktemp("aof"))) as server:
        client = redis.Redis.from_url(server.url)
        games, dues = GameStore(client), DueSets(client)
        made = {_unlisted(games) for _ in range(400)}
        found: set[str] = set()
        restarted = False
        try:
            for batch in dues.unlisted(batch=20):
                found.update(batch)
                if len(found) >= len(made) // 2 and not restarted:
                    server.stop()
                    server.start()
                    restarted = True
        except redis.RedisError:
            assert restarted
            return  # the pass failed: it is made again, from its start
        finally:
            client.close()
        assert restarted
        assert found == made, f"{len(made - found)} games skipped after the restart"


class SmallBatches(DueSets):
    def unlisted(self, batch: int = 10) -> Iterator[list[str]]:
        return super().unlisted(batch)


def test_the_lease_is_held_on_through_batches_that_find_every_game_listed(
    client: redis.Redis,
) -> None:
    """A long stretch of keys whose games all have their entry (most of a Redis, in a pass made
    again by --backfill): the lease must be taken again before each SCAN batch, not only before
    those with games to write, or it lapses mid-pass and another worker starts a pass of its
    own beside this one."""
    games = GameStore(client)
    for _ in range(60):
        games.create(b"s", new_token(), [hash_token(new_token())], [b"r1"], due=1_000)
    scans, cursor = 0, None
    while cursor != 0:
        cursor, _ = client.scan(cursor or 0, match="mt:{*}", count=10, _type="hash")
        scans += 1
    looks: list[bool] = []

    def held() -> bool:
        looks.append(True)
        return True

    assert backfill.backfill(SmallBatches(client), games, lambda r, n: 1_000, held) == 0
    assert len(looks) >= scans - 1, (len(looks), scans)


def test_one_worker_at_a_time_holds_the_backfills_lease(client: redis.Redis) -> None:
    queue = WorkQueue(client)
    assert queue.take_backfill("w1", 60_000)
    assert not queue.take_backfill("w2", 60_000)
    client.pexpire(K.WORK_BACKFILL, 1_000)
    assert queue.take_backfill("w1", 60_000), "its owner holds it on"
    assert client.pttl(K.WORK_BACKFILL) > 1_000
    client.delete(K.WORK_BACKFILL)  # ran out
    assert queue.take_backfill("w2", 60_000)
    assert not queue.take_backfill("w1", 60_000)
    assert client.get(K.WORK_BACKFILL) == b"w2"


def test_the_backfill_command_exits_0_once_its_pass_ends_and_1_when_stopped_before(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """``python -m service.worker --backfill`` is run by hand or by a deploy step after an
    upgrade: its exit status is all that step sees, so a pass that never ran is not a 0."""
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        queue = WorkQueue(client)
        env = {**os.environ, "REDIS_URL": server.url, "LOG_LEVEL": "warning"}
        command = [sys.executable, "-m", "service.worker", "--backfill"]
        assert queue.take_backfill("another-worker", 60_000)  # its pass holds the lease
        before = _script_calls(client)
        held = subprocess.Popen(command, env=env)
        try:
            # Its first try for the lease comes after its signals are set.
            eventually(lambda: _script_calls(client) > before, 60, "no try for the lease")
            assert held.poll() is None  # waiting for the other pass
            held.send_signal(signal.SIGTERM)
            assert held.wait(timeout=20) == 1
        finally:
            held.kill()
        assert not queue.backfilled()
        client.delete(K.WORK_BACKFILL)
        assert subprocess.run(command, env=env, timeout=60).returncode == 0
        assert queue.backfilled()
        client.close()
