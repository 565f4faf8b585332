"""The background worker's queue: games with server moves left to make.

A request makes at most a small budget of bot moves; bot turns beyond it, and every clocked
turn that runs out, are made by the worker (``python -m service.worker``). The queue is Redis
Streams with a consumer group, redis-py's commands and no home-made bookkeeping:

- ``XADD`` queues a game now; a sorted set holds games due later (a turn clock's deadline), and
  one script moves those whose time has come into the stream atomically.
- A game that used up its slice with more to do goes to a second stream, read only when the
  first has nothing: new work and due turns (a person's clock) come before the bot tables
  already at play, however many of those there are. Each turn of the worker takes one of them
  at most, then looks at the first stream again.
- Workers read with ``XREADGROUP``: each job goes to one worker. A job is acknowledged
  (``XACK``) only once its game's moves are stored, so a worker that dies leaves its jobs
  pending, and another takes them over with ``XAUTOCLAIM`` once they have been idle long enough.
- A lease per game (``SET NX PX``) keeps two workers from computing the same game at once; the
  compare-and-set of the game's version stays the real guard, so a job run twice or late does
  no harm: what to play is decided from the game's record when the job runs.

The streams and the sorted set share the hash tag ``{work}`` (one slot on a cluster); a lease
shares its game's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
from redis.cluster import RedisCluster

from . import keys, scripts

#: The consumer group every worker reads in.
GROUP = "workers"
#: The job stream is trimmed to about this many entries (acknowledged jobs are deleted anyway).
MAX_JOBS = 100_000


#: Games a sweep's script checks and queues at once; the streams' entries read a page at once.
MISSING_BATCH = 500
HELD_PAGE = 10_000

#: The streams, the first read first.
STREAMS = (keys.WORK_JOBS, keys.WORK_MORE)


@dataclass(frozen=True)
class Job:
    job_id: bytes
    game_id: str
    stream: str = keys.WORK_JOBS


class WorkQueue:
    """Queue, schedule, take, claim and finish jobs; stateless, safe to share between threads."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self._promote = client.register_script(scripts.PROMOTE_DUE)
        self._release = client.register_script(scripts.RELEASE_LEASE)
        self._hold = client.register_script(scripts.HOLD_LEASE)
        self._queue_missing = client.register_script(scripts.QUEUE_MISSING)

    def ensure_group(self) -> None:
        """Create the streams and their consumer group unless they exist (every worker at
        start)."""
        for stream in STREAMS:
            with contextlib.suppress(redis.ResponseError):  # BUSYGROUP: there already
                self.client.xgroup_create(stream, GROUP, id="0", mkstream=True)

    def enqueue(self, game_id: str, *, more: bool = False) -> None:
        """The game has server moves to make now; ``more``: it just used up a slice."""
        stream = keys.WORK_MORE if more else keys.WORK_JOBS
        self.client.xadd(stream, {"g": game_id}, maxlen=MAX_JOBS, approximate=True)

    def schedule(self, game_id: str, due_ms: int, *, sooner: bool = False) -> None:
        """The game will have a move to make at ``due_ms``: a time from the game's newest
        record replaces an older one. ``sooner``: only if it comes before the time already
        set; for a worker, whose record may be older than the time set meanwhile (a game
        queued by a newer change, then put off by a worker finding it busy)."""
        self.client.zadd(keys.WORK_DUE, {game_id: due_ms}, lt=sooner)

    def promote_due(self, now_ms: int, limit: int = 500) -> int:
        """Queue the games whose due time has come; how many."""
        args = [now_ms, limit, MAX_JOBS]
        return int(self._promote(keys=[keys.WORK_DUE, keys.WORK_JOBS], args=args))

    def take(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """New jobs for ``consumer``: up to ``count`` of the first stream's, or else one of
        either stream's (the first's first), waiting up to ``block_ms`` for one."""
        first: Any = self.client.xreadgroup(GROUP, consumer, {keys.WORK_JOBS: ">"}, count=count)
        jobs = _replied(first)
        if jobs:
            return jobs
        either: Any = self.client.xreadgroup(
            GROUP, consumer, dict.fromkeys(STREAMS, ">"), count=1, block=block_ms
        )
        return sorted(_replied(either), key=lambda job: STREAMS.index(job.stream))

    def claim_stale(self, consumer: str, idle_ms: int, count: int = 100) -> list[Job]:
        """Jobs another worker took and left unacknowledged for ``idle_ms`` (it died)."""
        claimed = []
        for stream in STREAMS:
            reply: Any = self.client.xautoclaim(
                stream, GROUP, consumer, min_idle_time=idle_ms, start_id="0-0", count=count
            )
            claimed += _jobs(reply[1], stream)
        return claimed

    def done(self, jobs: list[Job]) -> None:
        for stream in STREAMS:
            ids = [job.job_id for job in jobs if job.stream == stream]
            if ids:
                self.client.xack(stream, GROUP, *ids)
                self.client.xdel(stream, *ids)

    def queue_missing(self, owed: Sequence[tuple[str, int]]) -> list[str]:
        """Of these games (each with the time since which the server owes it a change), queue
        those the queue does not hold: in neither stream, nor in the sorted set by that time.
        The games queued.

        The streams are read once, and the rest checked :data:`MISSING_BATCH` games a script:
        a script that read the streams itself read them once per batch, and a backlog of jobs
        (when games are overdue, the sweep finds them all queued) cost its square. A game
        queued or done between the read and the script is queued again: harmless, its job
        decides from the stored record."""
        held = self._held()
        missing = [(game_id, since) for game_id, since in owed if game_id not in held]
        queued: list[str] = []
        for start in range(0, len(missing), MISSING_BATCH):
            args: list[str | int] = [MAX_JOBS]
            for game_id, since in missing[start : start + MISSING_BATCH]:
                args += [game_id, since]
            found: Any = self._queue_missing(keys=[STREAMS[0], keys.WORK_DUE], args=args)
            queued += [raw.decode() for raw in found]
        return queued

    def _held(self) -> set[str]:
        """The games in either stream (a job taken and not yet done is still in its stream)."""
        held: set[str] = set()
        for stream in STREAMS:
            start = "-"
            while True:
                page: Any = self.client.xrange(stream, start, "+", count=HELD_PAGE)
                held.update(fields[b"g"].decode() for _, fields in page if b"g" in fields)
                if len(page) < HELD_PAGE:
                    break
                start = "(" + page[-1][0].decode()
        return held

    def take_sweep(self, owner: str, ttl_ms: int) -> bool:
        """Whether ``owner`` sweeps now: one worker per ``ttl_ms``, however many run."""
        return bool(self.client.set(keys.WORK_SWEEP, owner, nx=True, px=ttl_ms))

    def take_backfill(self, owner: str, ttl_ms: int) -> bool:
        """Whether ``owner`` backfills the due sets for the next ``ttl_ms`` (taken again, or
        held on, before each batch): one worker at a time."""
        return bool(self._hold(keys=[keys.WORK_BACKFILL], args=[owner, ttl_ms]))

    def backfilled(self) -> bool:
        """Whether a backfill of the due sets has read every node of this Redis."""
        return bool(self.client.exists(keys.WORK_BACKFILLED))

    def mark_backfilled(self, at_ms: int) -> None:
        self.client.set(keys.WORK_BACKFILLED, at_ms)

    def lease(self, game_id: str, owner: str, ttl_ms: int) -> bool:
        """Whether ``owner`` now holds the game's lease (for ``ttl_ms``, or until released)."""
        return bool(self.client.set(keys.lease_key(game_id), owner, nx=True, px=ttl_ms))

    def release(self, game_id: str, owner: str) -> None:
        self._release(keys=[keys.lease_key(game_id)], args=[owner])

    def pending(self) -> int:
        """Jobs taken and not yet acknowledged (monitoring, tests)."""
        infos: list[Any] = [self.client.xpending(stream, GROUP) for stream in STREAMS]
        return sum(int(info["pending"]) for info in infos)


def _replied(reply: Any) -> list[Job]:
    """Jobs from an ``XREADGROUP`` reply: each stream's name, then its entries."""
    out = []
    for name, entries in reply or []:
        out += _jobs(entries, name.decode() if isinstance(name, bytes) else name)
    return out


def _jobs(entries: list[Any], stream: str) -> list[Job]:
    """Jobs from stream entries (an entry deleted while pending comes back without fields)."""
    out = []
    for job_id, fields in entries:
        game = (fields or {}).get(b"g")
        if game is not None:
            out.append(Job(job_id, game.decode(), stream))
    return out
