"""A feed's readers wait on its bell: each change they wait for wakes them all at once, a change
they do not wait for (another reader's presence) does not cut their wait short, and a change
made between a reader's look and its wait is never missed. Checked with real threads here and
with gevent's patched ones in a process of its own (gevent patches before anything imports)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from queue import Empty, Queue

import redis

from devstack.redis_server import RedisServer
from service.api.gamelog.hub import Feed
from service.store import GameStore

WAIT = 5.0  # seconds a reader waits at most in these tests


def feed(redis_server: RedisServer) -> Feed:
    return Feed("g1", GameStore(redis.Redis.from_url(redis_server.url)))


def test_a_new_version_wakes_every_reader_at_once(redis_server: RedisServer) -> None:
    f = feed(redis_server)
    woken: list[float] = []
    readers = [
        threading.Thread(target=lambda: woken.append(f.wait(0, WAIT) and time.monotonic()))
        for _ in range(20)
    ]
    for reader in readers:
        reader.start()
    time.sleep(0.2)
    heard = time.monotonic()
    f.heard(1)
    for reader in readers:
        reader.join(WAIT)
    assert len(woken) == 20 and all(woken), woken
    assert max(woken) - heard < WAIT / 2  # woken by the change, not by the timeout


def test_a_ring_for_another_reason_does_not_cut_a_wait_short(redis_server: RedisServer) -> None:
    """A long-poll (no presence) keeps waiting through a presence change; a stream that tells
    presence is woken by it."""
    f = feed(redis_server)
    results: dict[str, bool] = {}
    poll = threading.Thread(target=lambda: results.update(poll=f.wait(0, 1.0)))
    stream = threading.Thread(target=lambda: results.update(stream=f.wait(0, WAIT, 0)))
    started = time.monotonic()
    poll.start()
    stream.start()
    time.sleep(0.1)
    f.saw((True, False))
    stream.join(WAIT)
    assert results == {"stream": True}  # the long-poll still waits
    poll.join(WAIT)
    assert results["poll"] is False and time.monotonic() - started >= 1.0


def test_a_reader_past_the_games_end_or_of_a_gone_game_does_not_wait(
    redis_server: RedisServer,
) -> None:
    f = feed(redis_server)
    f.final = 7
    started = time.monotonic()
    assert f.wait(9, WAIT) is True
    f.final = None
    f.vanish()
    assert f.wait(9, WAIT) is True
    assert time.monotonic() - started < 1.0


def test_no_change_is_missed_between_a_readers_look_and_its_wait(
    redis_server: RedisServer,
) -> None:
    """Thousands of changes, each made by one thread just as the other starts waiting for
    exactly it (lockstep): a wait that took the bell after looking would miss a ring and sleep
    out its timeout."""
    f = feed(redis_server)
    waiting: Queue[int] = Queue()
    missed: list[int] = []

    def reader() -> None:
        for version in range(2000):
            waiting.put(version)
            started = time.monotonic()
            # A missed ring shows as a wait that lasts its whole timeout (the state is looked
            # at again then, and the version is there).
            if not f.wait(version, 2.0) or time.monotonic() - started >= 1.9:
                missed.append(version)
                return

    thread = threading.Thread(target=reader)
    thread.start()
    for _ in range(2000):
        try:
            version = waiting.get(timeout=4.0)
        except Empty:
            break  # the reader stopped on a miss
        f.heard(version + 1)
    thread.join(WAIT)
    assert not thread.is_alive() and missed == []


GEVENT_READERS = """
from gevent import monkey; monkey.patch_all()
import sys, time, gevent, redis
from service.api.gamelog.hub import Feed
from service.store import GameStore
f = Feed("g1", GameStore(redis.Redis.from_url(sys.argv[1])))
woken = []
readers = [gevent.spawn(lambda: woken.append(f.wait(0, 5.0))) for _ in range(5000)]
gevent.sleep(0.2)
started = time.monotonic()
f.heard(1)
gevent.joinall(readers, timeout=5)
print(len(woken), all(woken), round(time.monotonic() - started, 3))
"""


def test_under_gevent_one_change_wakes_thousands_of_readers(redis_server: RedisServer) -> None:
    done = subprocess.run(
        [sys.executable, "-c", GEVENT_READERS, redis_server.url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    count, every, seconds = done.stdout.split()
    assert (count, every) == ("5000", "True")
    assert float(seconds) < 4.0  # woken by the change, not by their 5 s timeouts
