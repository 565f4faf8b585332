"""The due sets' backfill: live games stored before the due sets were written get their entry.

Every change writes its game's due time (service/store/due.py), but a game last changed by a
release that wrote none has no entry until its next change: if its hand-over to the worker was
lost too, the sweep never finds it, and a table of bots alone stands still for ever. So a
worker, at its start, reads every node's game keys a ``SCAN`` batch at a time
(:meth:`.DueSets.unlisted`), reads the records of the games that have no entry, and writes the
due time each record says (a game owed nothing is left out, as its changes would leave it,
and one whose record the due time cannot be read from is logged and left out, not the pass);
the sweep then queues those overdue. The write is made only if the game's version is still the
one read, so a change made meanwhile keeps the time it wrote.

One worker at a time backfills (a lease in the ``{work}`` slot); the first pass that reads
every node marks the Redis done, and later starts skip it. A pass that fails (a node away, or
restarted during its scan) is made again :data:`RETRY_SECONDS` later, and one whose worker died
is made by the next worker to start. ``python -m service.worker --backfill`` makes a pass
whether or not one was made: after a rolling upgrade from a release without due sets, once its
last instance has stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis

from service.store import GameRecord, GameStore
from service.store.due import DueSets
from service.store.work import WorkQueue

log = logging.getLogger(__name__)

#: How long a backfill's lease lasts without a batch: another worker takes over after it.
LEASE_MS = 60_000
#: A pass that failed (a node away, a slot map in flux) is made again after this long.
RETRY_SECONDS = 5.0

#: The due time a stored record says at a time in ms (None: owed nothing).
DueOf = Callable[[GameRecord, int], int | None]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def backfill(dues: DueSets, games: GameStore, due_of: DueOf, held: Callable[[], bool]) -> int:
    """One pass over every node while ``held()`` (checked before each ``SCAN`` batch, games
    found in it or none): how many games got an entry. Raises :class:`LeaseLost` if the lease
    went to another worker."""
    written = 0
    for batch in dues.unlisted():
        if not held():
            raise LeaseLost
        if not batch:
            continue
        now = now_ms()
        for game_id, record in zip(batch, games.peek(batch), strict=True):
            if record is None:
                continue
            try:
                due = due_of(record, now)
            except Exception:  # a record of its own fault: the other games are not held up
                log.exception("due sets' backfill: %s left without an entry", game_id)
                continue
            if due is not None:
                written += games.set_due(game_id, record.version, due)
    return written


class LeaseLost(Exception):
    """Another worker backfills: this one leaves it the pass."""


def run_once(
    queue: WorkQueue,
    dues: DueSets,
    games: GameStore,
    due_of: DueOf,
    name: str,
    stop: threading.Event,
    *,
    force: bool = False,
) -> bool:
    """Backfill until a pass reads every node (unless one did before, or ``force``), or
    ``stop``: for a thread of the worker, which goes on playing meanwhile. False when
    ``stop`` came first."""
    while not stop.is_set():
        try:
            if not force and queue.backfilled():
                return True
            if queue.take_backfill(name, LEASE_MS):
                started = now_ms()
                written = backfill(dues, games, due_of, lambda: queue.take_backfill(name, LEASE_MS))
                queue.mark_backfilled(started)
                log.info("due sets backfilled: %d games without an entry were given one", written)
                return True
        except LeaseLost:
            pass  # the other worker's pass marks it done, or its lease runs out
        except redis.RedisError as err:
            log.warning("due sets' backfill: %s: %s", type(err).__name__, err)
        stop.wait(RETRY_SECONDS)
    return False
