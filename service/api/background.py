"""What a request hands to the background worker after its change is stored.

A request makes at most :data:`REQUEST_BUDGET_SECONDS` of server moves (bot seats, automatic
deals) itself, so its answer and the streams never wait on more; what is left is queued for
the worker, and a person's turn clock is scheduled for its deadline, so an overdue turn is
played whether or not anyone watches. Reading a game never plays one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis

from service import rules
from service.seating import Table, server_move_due
from service.store.work import WorkQueue

log = logging.getLogger(__name__)

#: CPU seconds of server moves one request may make before handing the rest to the worker.
REQUEST_BUDGET_SECONDS = 0.2

#: How often the games whose hand-over Redis refused are tried again, and how many a process
#: keeps waiting.
RETRY_SECONDS = 1.0
MAX_UNQUEUED = 10_000


def request_budget() -> Callable[[], bool]:
    """The request's budget of this thread's CPU time, from now."""
    end = time.thread_time() + REQUEST_BUDGET_SECONDS
    return lambda: time.thread_time() >= end


def hand_over(
    work: WorkQueue, game_id: str, state: rules.GameState, table: Table, now_ms: int
) -> None:
    """Queue the game's server moves left after a stored change, or schedule its clock.

    The change is stored already, so a Redis error here is not answered (a 503 would tell the
    client its action failed): the hand-over is tried again each second until Redis takes it
    (:data:`UNQUEUED`)."""
    if server_move_due(state, table, now_ms):
        due = None
    elif (due := table.wakes_at()) is None:
        return
    try:
        _queue(work, game_id, due)
    except redis.RedisError as err:
        log.warning("game %s: server moves not queued, tried again each second: %s", game_id, err)
        UNQUEUED.add(work, game_id, due)


def _queue(work: WorkQueue, game_id: str, due_ms: int | None) -> None:
    """Queue the game now (``due_ms`` None) or for ``due_ms``."""
    if due_ms is None:
        work.enqueue(game_id)
    else:
        work.schedule(game_id, due_ms)


class Unqueued:
    """Games whose hand-over Redis refused after their change was stored, handed over again by
    one thread of the process until Redis takes them.

    Without it such a game waits for its next change, and on a bot's turn or an absent
    person's nobody can make one. A late or second hand-over does no harm: the worker decides
    what to play from the stored game when it runs. The thread runs only while games wait."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._games: dict[str, tuple[WorkQueue, int | None]] = {}
        self._thread: threading.Thread | None = None

    def add(self, work: WorkQueue, game_id: str, due_ms: int | None) -> None:
        with self._lock:
            if game_id not in self._games and len(self._games) >= MAX_UNQUEUED:
                dropped = next(iter(self._games))
                del self._games[dropped]
                log.error("game %s: server moves not queued, no longer tried", dropped)
            self._games[game_id] = (work, due_ms)
            if self._thread is None or not self._thread.is_alive():  # none yet, or forked
                self._thread = threading.Thread(target=self._run, name="unqueued", daemon=True)
                self._thread.start()

    def __len__(self) -> int:
        return len(self._games)

    def _run(self) -> None:
        while True:
            time.sleep(RETRY_SECONDS)
            with self._lock:
                if not self._games:
                    self._thread = None
                    return
                waiting = list(self._games.items())
            self._retry(waiting)

    def _retry(self, waiting: list[tuple[str, tuple[WorkQueue, int | None]]]) -> None:
        for game_id, (work, due_ms) in waiting:
            try:
                _queue(work, game_id, due_ms)
            except redis.RedisError:
                return  # still refused: the rest wait for the next turn too
            with self._lock:
                if self._games.get(game_id) == (work, due_ms):  # not re-added meanwhile
                    del self._games[game_id]
            log.info("game %s: server moves queued after all", game_id)


#: This process's games waiting for their hand-over.
UNQUEUED = Unqueued()
