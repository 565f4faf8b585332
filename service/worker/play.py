"""One slice of a game's server moves, through the game transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import redis

from service.api.store_access import store
from service.api.transaction import now_ms, play_server_moves

from .loop import Outcome
from .metrics import TURNS_PLAYED

#: How long a game whose server moves failed (a fault of its own, which no retry mends) waits
#: before the sweep queues it again, unless a change comes first.
FAILED_RETRY_MS = 3_600_000


def play_game(game_id: str, spent: Callable[[], bool]) -> Outcome:
    """Make the game's server moves until ``spent()`` and store them; what is left."""
    try:
        more, due_ms = play_server_moves(game_id, spent, TURNS_PLAYED.inc)
    except redis.RedisError:
        raise
    except Exception:
        # Its due time stays the one its last change wrote, now past: the sweep would queue it
        # again at each turn for as long as it lives, and on one Redis (one set, read 500 at a
        # time, the longest owed first) 500 such games would hide every lost hand-over.
        with contextlib.suppress(redis.RedisError):
            store().postpone_due(game_id, now_ms() + FAILED_RETRY_MS)
        raise
    return Outcome(more, due_ms)
