"""Who is at the table: a seat is present while it has an open stream or made a request within
``PRESENCE_SECONDS``. Requests mark their seat at most every ``MARK_EVERY_MS`` per process (a
third of the window when that is shorter), and views read a game's presence at most every
``READ_EVERY_MS`` per process, in the load's own round trip when that is due: presence is
coarse (seconds), and a request should not pay a Redis write and read for it each time. A
seat's open stream beats every ``BEAT_SECONDS`` (each keep-alive at least), and says when it
closes. Presence is a courtesy: a stream whose beat fails (Redis away) goes on, and says
nothing until Redis answers again."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

from service.store.presence import present_seats, request_field

from .config import settings
from .store_access import store

MARK_EVERY_MS = 5000
BEAT_SECONDS = 10.0
READ_EVERY_MS = 1000
_MEMORY = 4096  # games remembered per process, oldest forgotten first

_lock = threading.Lock()
_marked: dict[tuple[str, int | bytes], int] = {}
# A game's presence as read: when, its hash, and the seats present then (made once per read).
_Read = tuple[int, dict[bytes, bytes], list[bool] | None]
_read: dict[str, _Read] = {}


def now_ms() -> int:
    return time.time_ns() // 1_000_000


log = logging.getLogger(__name__)


def mark_due(game_id: str, who: int | bytes) -> int | None:
    """The time to mark ``who`` seen at, when this process has not marked it lately; else
    None. ``who``: a seat (its mark then rides in the change stored, or ``mark_alone`` writes
    it), or a token's digest, whose seat the game's read marks before the seat is known here
    (a digest: a token is not kept in memory past its request)."""
    now = now_ms()
    every = min(MARK_EVERY_MS, settings().presence_seconds * 1000 // 3)
    with _lock:
        if now - _marked.get((game_id, who), 0) < every:
            return None
        _marked[(game_id, who)] = now
        _trim(_marked)
    return now


def mark_undue(game_id: str, who: int | bytes, at: int) -> None:
    """Take back the mark ``mark_due`` gave at ``at`` and that was not written: the next
    request of ``who`` finds it due."""
    with _lock:
        if _marked.get((game_id, who)) == at:
            del _marked[(game_id, who)]


def mark_alone(game_id: str, seat: int, now: int) -> None:
    """Write a due mark that no stored change carried; a courtesy: a failed write is logged,
    and the request's own answer stands."""
    try:
        store().presence.seen(game_id, seat, now)
    except redis.RedisError as err:
        log.info("presence of %s not written: %s", game_id, err)
    else:
        marked(game_id, seat, now)


def marked(game_id: str, seat: int, now: int) -> None:
    """A mark this process wrote after its last read of the game's presence: its copy holds
    the mark too, so its views show the seat present until the next read."""
    field = request_field(seat).encode()
    with _lock:
        known = _read.get(game_id)
        if known is not None:
            _read[game_id] = (known[0], {**known[1], field: str(now).encode()}, None)


def _fresh(game_id: str) -> _Read | None:
    """This process's copy of the game's presence, unless it is due to be read again."""
    with _lock:
        known = _read.get(game_id)
    return None if known is None or now_ms() - known[0] >= READ_EVERY_MS else known


def read_due(game_id: str) -> bool:
    """Whether this process should read the game's presence again: a load that asks for it
    reads it in its own round trip (``remember`` then keeps it), sparing ``present`` one."""
    return _fresh(game_id) is None


def remember(game_id: str, fields: dict[bytes, bytes]) -> _Read:
    """Keep the game's presence hash as just read."""
    entry: _Read = (now_ms(), fields, None)
    with _lock:
        _read[game_id] = entry
        _trim(_read)
    return entry


def present(game_id: str, seats: int) -> list[bool]:
    """The seats present, as of this process's last read (a shared list: copy to change it)."""
    known = _fresh(game_id)
    if known is None:
        (fields,) = store().presence.of_games([game_id])
        known = remember(game_id, fields)
    at, fields, found = known
    if found is None or len(found) != seats:
        found = present_seats(fields, seats, at, settings().presence_seconds * 1000)
        with _lock:
            _read[game_id] = (at, fields, found)
    return found


def _trim(memory: dict[Any, Any]) -> None:
    while len(memory) > _MEMORY:
        del memory[next(iter(memory))]


class StreamPresence:
    """A seat's open stream, as presence sees it (made in the request; beats from the stream)."""

    def __init__(self, game_id: str, seat: int | None) -> None:
        self.game_id, self.seat = game_id, seat
        self.stream_id = secrets.token_hex(6)
        self.presence = store().presence
        self.beaten = 0.0

    def beat(self) -> None:
        """At the stream's opening and after each message it sends (at most every few s)."""
        if self.seat is None or time.monotonic() - self.beaten < BEAT_SECONDS:
            return
        self.beaten = time.monotonic()
        self._quietly(self.presence.streaming, self.game_id, self.seat, self.stream_id, now_ms())

    def close(self) -> None:
        if self.seat is not None and self.beaten:
            self._quietly(self.presence.closed, self.game_id, self.seat, self.stream_id)

    def _quietly(self, call: Callable[..., object], *args: Any) -> None:
        try:
            call(*args)
        except redis.RedisError as err:
            log.info("presence of %s not written: %s", self.game_id, err)
