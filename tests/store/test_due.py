"""The due sets (service/store/due.py) and the sweep's hand-over, on a real Redis (and, re-run
from tests/cluster, on a cluster, where each game's set must be in the game's slot): what a
stored change says the server owes its game is what the sweep reads, and the sweep queues only
the games the queue does not hold."""

from __future__ import annotations

import pytest
import redis
from redis.cluster import RedisCluster

from service.store import Change, GameStore, VersionConflict
from service.store import keys as K
from service.store.due import DueSets
from service.store.tokens import hash_token, new_token
from service.store.work import WorkQueue

Client = redis.Redis | RedisCluster


def _game(games: GameStore, due: int | None) -> str:
    return games.create(b"s", new_token(), [hash_token(new_token())], [b"r1"], due=due)


def test_a_games_due_time_is_written_with_its_changes(redis_client: Client) -> None:
    games, dues = GameStore(redis_client), DueSets(redis_client)
    owed, idle = _game(games, 1_000), _game(games, None)
    assert sorted(dues.overdue(5_000, 10)) == [(owed, 1_000)]
    games.save(owed, 1, Change(b"s2", [b"r2"]), due=9_000)  # a clock a while away
    games.save(idle, 1, Change(b"s2", [b"r2"]), due=2_000)
    assert sorted(dues.overdue(5_000, 10)) == [(idle, 2_000)]
    assert sorted(dues.overdue(9_000, 10), key=lambda owed: owed[1]) == [
        (idle, 2_000),
        (owed, 9_000),
    ]
    games.save(idle, 2, Change(b"s3", [b"r3"]))  # owed nothing now
    assert dues.overdue(10_000, 10) == [(owed, 9_000)]


def test_a_refused_change_leaves_the_due_time_as_it_was(redis_client: Client) -> None:
    games, dues = GameStore(redis_client), DueSets(redis_client)
    gid = _game(games, 1_000)
    with pytest.raises(VersionConflict):
        games.save(gid, 7, Change(b"s2", [b"r2"]), due=None)
    assert dues.overdue(5_000, 10) == [(gid, 1_000)]


def test_a_due_time_found_on_an_old_version_is_not_written(redis_client: Client) -> None:
    games, dues = GameStore(redis_client), DueSets(redis_client)
    gid = _game(games, 1_000)
    games.save(gid, 1, Change(b"s2", [b"r2"]), due=3_000)
    assert not games.set_due(gid, 1, None)  # found on version 1, stored at 2
    assert dues.overdue(5_000, 10) == [(gid, 3_000)]
    assert games.set_due(gid, 2, None)
    assert dues.overdue(5_000, 10) == []


def test_a_game_gone_leaves_its_due_set(redis_client: Client) -> None:
    games, dues = GameStore(redis_client), DueSets(redis_client)
    gid = _game(games, 1_000)
    redis_client.delete(K.game_key(gid), K.log_key(gid))  # expired
    assert not games.set_due(gid, 0, None)
    assert dues.overdue(5_000, 10) == []


def test_the_sweep_queues_only_games_the_queue_does_not_hold(redis_client: Client) -> None:
    queue = WorkQueue(redis_client)
    queue.ensure_group()
    queue.enqueue("inline00")  # in the first stream
    queue.enqueue("taken000")
    taken = queue.take("w1", 10, 10)  # taken, not done: still in its stream
    queue.enqueue("slice000", more=True)  # in the second stream
    queue.schedule("clock000", 1_000)  # due by the time it is owed from
    queue.schedule("later000", 90_000)  # due long after it is owed a change
    owed = [
        (game, 2_000)
        for game in ("inline00", "taken000", "slice000", "clock000", "later000", "lost0000")
    ]
    assert queue.queue_missing(owed) == ["later000", "lost0000"]
    assert queue.queue_missing(owed) == []  # queued now
    queue.done(taken)


def test_one_worker_sweeps_per_period(redis_client: Client) -> None:
    queue = WorkQueue(redis_client)
    assert queue.take_sweep("w1", 60_000)
    assert not queue.take_sweep("w2", 60_000)


def test_games_without_a_due_entry_are_found_a_scan_batch_at_a_time(redis_client: Client) -> None:
    """What the worker's backfill reads: a game stored before the due sets were written (its
    entry deleted here) is found, as is one owed nothing; one with an entry, a game's other
    keys and other hashes (a player's) are not."""
    games, dues = GameStore(redis_client), DueSets(redis_client)
    owed, idle, old = _game(games, 1_000), _game(games, None), _game(games, 2_000)
    redis_client.zrem(K.due_key(old, isinstance(redis_client, RedisCluster)), old)
    redis_client.hset(K.player_key("abcdefghijkl"), "n", "ann")
    batches = list(dues.unlisted(batch=2))
    found = [game for batch in batches for game in batch]
    assert {idle, old} <= set(found) and owed not in found
    assert all(K.valid_game_id(game) for game in found)
    assert len(found) == len(set(found))
