"""What a request hands to the background worker after its change is stored.

A request makes at most :data:`REQUEST_BUDGET_SECONDS` of server moves (bot seats, automatic
deals) itself, so its answer and the streams never wait on more; what is left is queued for
the worker, and a person's turn clock is scheduled for its deadline, so an overdue turn is
played whether or not anyone watches. Reading a game never plays one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from hashlib import blake2b

from service import rules
from service.seating import Table, server_move_due
from service.store import GameStore
from service.store.work import WorkQueue

from .owed import NotYet, owe, write_or_owe

#: CPU seconds of server moves one request may make before handing the rest to the worker.
REQUEST_BUDGET_SECONDS = 0.2


def request_budget() -> Callable[[], bool]:
    """The request's budget of this thread's CPU time, from now."""
    end = time.thread_time() + REQUEST_BUDGET_SECONDS
    return lambda: time.thread_time() >= end


def hand_over(
    work: WorkQueue, game_id: str, state: rules.GameState, table: Table, now_ms: int
) -> None:
    """Queue the game's server moves left after a stored change, or schedule its clock.

    The change is stored already, so a Redis error here is not answered (a 503 would tell the
    client its action failed): the hand-over is owed, made once Redis takes it."""
    due = server_due(state, table, now_ms)
    if due is not None:
        _owe_queue(work, game_id, None if due <= now_ms else due)


def server_due(state: rules.GameState, table: Table, now_ms: int) -> int | None:
    """When the server owes the game its next change by itself: ``now_ms`` (a bot's move, a
    deal, a fill), a later time (a turn clock, a fill, a rematch's claims), or never (None).
    Stored with each change (service/store/due.py), as the worker's sweep reads it."""
    return now_ms if server_move_due(state, table, now_ms) else table.wakes_at()


def queue_now(work: WorkQueue, game_id: str) -> None:
    """Queue the game for the worker now (owed if Redis refuses)."""
    _owe_queue(work, game_id, None)


def queue_when_stored(games: GameStore, game_id: str, first: tuple[int, bytes]) -> None:
    """Queue the game for the worker once the log reaches a change whose compare-and-set
    failed in a way that may yet store it (a timeout: a slow or hung Redis runs a command its
    client gave up on), without waiting on Redis now. Such a change, answered 503, is stored
    all the same, and its request, which hands its game over only after a store it saw, never
    did: a game whose bots are to move then waited for a change nobody could make. ``first``
    is the log index and the bytes of the change's first record; while the log does not reach
    that index, the look is made again (owed.NotYet: 1, 2, 4, 8 and 16 s apart): one look
    made before the change was stored found nothing due, and left the game to the worker's
    sweep. A look at a game with nothing due costs the worker one read."""

    def queue() -> None:
        if games.holds_record(game_id, *first) is None:
            raise NotYet
        games.work.enqueue(game_id)

    # Keyed by the record: under the hand-over's key, it would replace a stored change's owed
    # queueing with a look that may never find this one.
    digest = blake2b(first[1], digest_size=8).hexdigest()
    owe(f"{_queue_key(game_id, None)}:{digest}", queue)


def _owe_queue(work: WorkQueue, game_id: str, due_ms: int | None) -> None:
    # Keyed by the due time too: a later hand-over must not replace an earlier one's "now".
    write_or_owe(_queue_key(game_id, due_ms), lambda: _queue(work, game_id, due_ms))


def _queue_key(game_id: str, due_ms: int | None) -> str:
    return f"work:{game_id}:{due_ms}"


def _queue(work: WorkQueue, game_id: str, due_ms: int | None) -> None:
    """Queue the game now (``due_ms`` None) or for ``due_ms``."""
    if due_ms is None:
        work.enqueue(game_id)
    else:
        work.schedule(game_id, due_ms)
