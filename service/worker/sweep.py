"""The sweep: games the server owes a change that the work queue lost, queued again.

A hand-over to the worker is written after its change, to other keys (service/store/due.py
says how it is lost). Each stored change also records, with it, when the server owes the game
a change; every :data:`SWEEP_MS` one worker (whichever takes the turn first) reads the games
owed one for over :data:`GRACE_MS` and queues those that are in no stream and not due in the
sorted set by then. A game queued twice is harmless: its job decides from the stored record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from service.store.due import DueSets
from service.store.work import WorkQueue

from .metrics import DUE_LAG, REQUEUED, SWEEPS

log = logging.getLogger(__name__)

#: How often one of the workers sweeps.
SWEEP_MS = 5_000
#: A game owed a change this long is looked for in the queue: longer than a hand-over takes to
#: follow its change (the request's or the worker's own write right after it).
GRACE_MS = 10_000
#: Games read from each due set per sweep (the longest owed first).
BATCH = 500


def sweeper(
    dues: DueSets, queue: WorkQueue, grace_ms: int = GRACE_MS
) -> Callable[[int], list[str]]:
    """A sweep at a time in ms: the games it queued. Its read takes the games owed a change by
    the sweep's time, the longest owed first, within the grace or past it (the same ones past
    it as a read of those alone: ``BATCH`` a set either way); the first gives the lag."""

    def sweep(now_ms: int) -> list[str]:
        owed = dues.overdue(now_ms, BATCH)
        SWEEPS.inc()
        DUE_LAG.set(max(0, now_ms - min(since for _, since in owed)) / 1000 if owed else 0)
        queued = queue.queue_missing([g for g in owed if g[1] <= now_ms - grace_ms])
        REQUEUED.inc(len(queued))
        if queued:
            log.warning("sweep: %d games owed a change were not queued: %s", len(queued), queued)
        return queued

    return sweep
