"""Writes a stored change owes to keys outside its game, made again until Redis takes them.

After a change is stored, its request queues the game for the worker, the webhook deliveries it
owes, and the lobby's listing of its table. Those keys lie outside the game's hash slot, so no
script can write them with the change, and a Redis that goes away between the two cannot be
answered with a 503: the action was made. Each such write waits here, and one thread of the
process makes it again every :data:`RETRY_SECONDS` until Redis takes it. Without it a game
whose bot or absent person is to move waits for a change nobody can make, a player is never
told it is their turn, and a full table stays listed.

A write owed for a change whose compare-and-set failed with a Redis error first looks whether
the change was stored: a slow Redis may run it seconds later. One that does not find it yet
(:class:`NotYet`) looks again at growing intervals, for a bounded time.

A write Redis does not answer (away, or hung) is tried again less and less often, up to every
:data:`AWAY_MAX_WAIT_SECONDS`, while the others go on: one aimed at a node that is gone holds
back no write to another, only the later writes of its own game (the key's second part), which
keep their order. Every write is given up :data:`MAX_AGE_SECONDS` (``OWED_GIVE_UP_SECONDS``)
after it is first owed: a
Redis away that long has lost or replaced what the write is for (the worker's sweep queues
the games owed a move again), and a process owes no write for ever.

Each process counts in its metrics the writes it owes and those it gave up, by why
(:data:`OWED_NOW`, :data:`GIVEN_UP`): a write given up is a game that waits for the worker's
sweep, or a notification or a lobby change lost, which a log line alone leaves unseen.

Every write owed is idempotent (a queued game is decided from its stored record when its job
runs; a delivery is stored under its own id; a table is listed or taken out by its id), so one
made twice or late does no harm. A process that dies while Redis is away still loses what it
owed.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import redis
from prometheus_client import Counter, Gauge

log = logging.getLogger(__name__)

#: How often the writes Redis refused are made again, and how many a process keeps.
RETRY_SECONDS = 1.0
MAX_OWED = 10_000
#: A write Redis keeps refusing for itself (not for being away: a script error, a missing
#: permission) is given up after this many tries, so it cannot wait for ever.
MAX_TRIES = 3_600
#: A look for a change that may still be stored (:class:`NotYet`) is made again this long
#: after the first, then at intervals this many times longer each, and given up once the next
#: would come over :data:`LOOK_FOR_SECONDS` after the first: a Redis that runs a command that
#: late has been hung far longer than any request waits (looks 1, 2, 4, 8 and 16 s apart: six
#: in all, the last about 31 s after the first, as the next would come at 63 s).
LOOK_FIRST_SECONDS = 1.0
LOOK_GROWTH = 2.0
LOOK_FOR_SECONDS = 60.0
#: Errors that say Redis is away: the write waits twice as long each time, up to
#: :data:`AWAY_MAX_WAIT_SECONDS`, so a Redis that is away costs few timeouts a turn.
AWAY = (redis.ConnectionError, redis.TimeoutError)
AWAY_MAX_WAIT_SECONDS = 30.0
#: An owed write not made this long after it is first owed is given up (logged as an error).
MAX_AGE_SECONDS = 3_600.0
#: The owed keys' kinds that list a table or take it out (its lobby sets, its seek bucket):
#: their order decides whether the table ends listed, so one is never made before an older one.
LISTING = frozenset({"list", "delist", "close", "reopen-seek"})


class GiveUp(StrEnum):
    """Why an owed write was given up: the ``reason`` label of :data:`GIVEN_UP`."""

    AGE = "age"  # owed longer than the give-up time (MAX_AGE_SECONDS, OWED_GIVE_UP_SECONDS)
    TRIES = "tries"  # refused for itself MAX_TRIES times
    FULL = "full"  # the oldest, dropped for a new one with MAX_OWED waiting
    FAULT = "fault"  # the write failed outside Redis, which no retry mends


# livesum: a worker that died owes nothing any more (its writes died with it).
OWED_NOW = Gauge(
    "owed_writes",
    "Writes a stored change owes to keys outside its game (queueing, webhooks, lobby) that "
    "Redis has not taken yet, in this process's queue.",
    multiprocess_mode="livesum",
)
GIVEN_UP = Counter(
    "owed_writes_given_up_total",
    "Owed writes given up, per reason (age, tries, full, fault).",
    ["reason"],
)
for _reason in GiveUp:  # every reason reported from the start, at 0
    GIVEN_UP.labels(reason=_reason.value)


def write_or_owe(key: str, write: Callable[[], Any]) -> None:
    """Make ``write`` now (what it returns is not used) or, if Redis refuses it, owe it under
    ``key``. A write needs no request or app context: it runs on the owing thread too.

    A write of a table's listing (:data:`LISTING`) while one of the same table is owed is
    owed behind it, untried: made now, it would be overtaken by the older one once Redis
    answers (a table's delisting, then the listing owed before it, leave a full table listed).
    Other writes keep no order: a queueing or a delivery is the same made early or late."""
    if _kind(key) in LISTING and OWED.owes_listing(_game(key)):
        OWED.add(key, write)
        return
    try:
        write()
    except redis.RedisError as err:
        log.warning("%s: not written yet: %s", key, err)
        OWED.add(key, write)


def owe(key: str, write: Callable[[], Any]) -> None:
    """Owe ``write`` without trying it now (Redis just failed this request once: a second
    try would cost it a second timeout); it is made within :data:`RETRY_SECONDS`."""
    OWED.add(key, write)


class NotYet(Exception):
    """Raised by an owed look for a change whose compare-and-set failed with a Redis error
    that does not find it yet: a slow or hung Redis may still run it. The look is made again
    later, for :data:`LOOK_FOR_SECONDS` in all."""


@dataclass
class _Owing:
    write: Callable[[], Any]
    tries: int = 0  # refusals of the write itself (see MAX_TRIES)
    at: float = 0.0  # time.monotonic() of its next try
    wait: float = 0.0  # before the next look, if this one finds nothing yet
    until: float = math.inf  # looks that find nothing are given up after this (set at the first)
    since: float = field(default_factory=time.monotonic)  # first owed (see Owed.max_age)
    away_wait: float = 0.0  # the wait until the next try, after Redis did not answer the last


def _kind(key: str) -> str:
    """What an owed key writes: its first part."""
    return key.split(":", 1)[0]


def _game(key: str) -> str:
    """The game an owed key is for: keys are ``what:game_id[:...]``."""
    return key.split(":", 2)[1] if ":" in key else key


class Owed:
    """Writes Redis refused, by key (a newer write under a key replaces the older); the thread
    that makes them runs only while some wait."""

    def __init__(self) -> None:
        #: A write owed longer than this is given up (:func:`give_up_after` sets it).
        self.max_age = MAX_AGE_SECONDS
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # a child starts with nothing owed

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._writes: dict[str, _Owing] = {}
        self._thread: threading.Thread | None = None
        self._counted()

    def _counted(self) -> None:
        """Report how many writes are owed (after each change of them, under the lock)."""
        OWED_NOW.set(len(self._writes))

    def _given_up(self, key: str, reason: GiveUp) -> None:
        """Drop the write owed under ``key`` and count it given up (under the lock)."""
        del self._writes[key]
        GIVEN_UP.labels(reason=reason.value).inc()
        self._counted()

    def add(self, key: str, write: Callable[[], Any]) -> None:
        with self._lock:
            if key not in self._writes and len(self._writes) >= MAX_OWED:
                dropped = next(iter(self._writes))
                self._given_up(dropped, GiveUp.FULL)
                log.error("%s: owed write dropped (%d waiting)", dropped, MAX_OWED)
            # Made after every write owed before it: a listing owed after a delisting of the
            # same table (another key) is made last, as the change that owes it came last.
            self._writes.pop(key, None)
            self._writes[key] = _Owing(write)
            self._counted()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="owed", daemon=True)
                self._thread.start()

    def owes_listing(self, game: str) -> bool:
        """Whether a write of the listing of ``game``'s table is owed."""
        with self._lock:
            return any(_kind(key) in LISTING and _game(key) == game for key in self._writes)

    def __len__(self) -> int:
        return len(self._writes)

    def _run(self) -> None:
        while True:
            time.sleep(RETRY_SECONDS)
            now = time.monotonic()
            with self._lock:
                if not self._writes:
                    self._thread = None
                    return
                self._expire(now)
                owed = list(self._writes.items())
            self._retry(owed, now)

    def _expire(self, now: float) -> None:
        """Give up the writes owed longer than :attr:`max_age` (under the lock)."""
        for key in [k for k, owing in self._writes.items() if now - owing.since > self.max_age]:
            self._given_up(key, GiveUp.AGE)
            log.error("%s: owed write given up after %.0f s", key, self.max_age)

    def _retry(self, owed: list[tuple[str, _Owing]], now: float) -> None:
        """Try each write that is due: one Redis did not answer holds back the later writes of
        its own game only (they keep their order), not the others."""
        held: set[str] = set()
        for key, owing in owed:
            game = _game(key)
            if game in held or owing.at > now:
                if owing.away_wait:  # waiting for a Redis that did not answer
                    held.add(game)
                continue
            try:
                owing.write()
            except AWAY:
                held.add(game)
                self._away(key, owing)
                continue
            except NotYet:
                self._later(key, owing)
                continue
            except redis.RedisError as err:  # refused for itself: the others go on
                self._refused(key, owing, err)
                continue
            except Exception:  # a fault of the write itself, which no retry mends
                log.exception("%s: owed write dropped", key)
                self._settle(key, owing, GiveUp.FAULT)
                continue
            self._settle(key, owing)
            log.info("%s: owed write made", key)

    def _later(self, key: str, owing: _Owing) -> None:
        """The next look at a change not found yet, each a while longer after the last."""
        now = time.monotonic()
        with self._lock:
            if self._writes.get(key) is not owing:
                return  # replaced meanwhile
            if owing.until == math.inf:
                owing.until, owing.wait = now + LOOK_FOR_SECONDS, LOOK_FIRST_SECONDS
            if now + owing.wait > owing.until:
                del self._writes[key]
                self._counted()
                log.info("%s: the change was not found stored: nothing owed", key)
                return
            owing.at, owing.wait = now + owing.wait, owing.wait * LOOK_GROWTH

    def _away(self, key: str, owing: _Owing) -> None:
        """The next try of a write Redis did not answer, each a while longer after the last."""
        with self._lock:
            if self._writes.get(key) is owing:  # not replaced meanwhile
                wait = max(RETRY_SECONDS, owing.away_wait * 2)
                owing.away_wait = min(wait, AWAY_MAX_WAIT_SECONDS)
                owing.at = time.monotonic() + owing.away_wait

    def _refused(self, key: str, owing: _Owing, err: Exception) -> None:
        with self._lock:
            if self._writes.get(key) is not owing:
                return  # replaced meanwhile
            owing.tries += 1
            if owing.tries < MAX_TRIES:
                return
            self._given_up(key, GiveUp.TRIES)
        log.error("%s: owed write given up after %d tries: %s", key, owing.tries, err)

    def _settle(self, key: str, owing: _Owing, given_up: GiveUp | None = None) -> None:
        """The write ``owing`` is done with: made, or ``given_up``."""
        with self._lock:
            if self._writes.get(key) is not owing:
                return  # replaced meanwhile
            if given_up is not None:
                self._given_up(key, given_up)
                return
            del self._writes[key]
            self._counted()


#: This process's owed writes.
OWED = Owed()


def give_up_after(seconds: float) -> None:
    """Give up this process's owed writes ``seconds`` after they are first owed
    (``OWED_GIVE_UP_SECONDS``)."""
    OWED.max_age = seconds
