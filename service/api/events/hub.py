"""One hub per process: the games its readers follow, each rebuilt once and shared by them all.

Readers (streams and long-polls) never touch Redis themselves. They wait on a :class:`Feed`;
one pub/sub connection per process hears every game's wake-up, which carries the change's
records: a feed that is up to date appends them and wakes its readers without a read, and a
feed that is behind reads only the records it lacks, once for all of them. The log in Redis is
the truth: a ticker re-reads the version of every followed game each second, so a message lost
in a reconnection costs at most a second. The same ticker plays overdue turns of followed games
(the turn clock) within a second of their deadline.

Threads here are greenlets under gunicorn's gevent worker (it patches ``threading``), so a
waiting reader costs a greenlet, not a worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager

import orjson

from service.rules.log import Entry, Replayer
from service.store import GameStore
from service.store.scripts import WAKEUP_CHANNEL
from service.store.wakeup import Wakeup, parse_wakeup

log = logging.getLogger(__name__)

#: How often the ticker re-reads followed games (missed wake-ups, turn clocks), in seconds.
TICK_SECONDS = 1.0
#: A feed nobody follows is kept this long for the next reader, then dropped.
IDLE_SECONDS = 30.0
#: Pause before the wake-up listener reconnects after Redis went away.
RECONNECT_SECONDS = 1.0
#: Rendered frames are kept for this many of a feed's newest entries: every live reader of a
#: game asks for the same few, while a reader catching up from far back renders its own.
RENDERED_ENTRIES = 64

Settler = Callable[[str], None]


class Feed:
    """One game's entries as rebuilt in this process (unredacted), the frames rendered of its
    newest entries for each audience, and its waiting readers."""

    def __init__(self, game_id: str, store: GameStore) -> None:
        self.game_id = game_id
        self.store = store
        self.replayer = Replayer()
        self.entries: list[Entry] = []
        self.known = 0  # the newest version this process heard of
        self.deadline_ms: int | None = None
        self.readers = 0
        self.idle_since = time.monotonic()
        self.changed = threading.Condition()
        self._reading = threading.Lock()
        self._rendered: dict[int, dict[Hashable, bytes]] = {}

    def catch_up(self) -> None:
        """Read and rebuild the records this feed has not seen (one reader does it for all).

        The log's length is the game's version (each record is one version, written in the same
        step), so reading the log alone tells how far the game is."""
        with self._reading:
            if self.known <= len(self.entries):
                return
            records = self.store.log_records(self.game_id, len(self.entries))
            if not records:  # raises for a game that is gone, so its readers hear of it
                _, records = self.store.log(self.game_id, len(self.entries))
            if not records:  # a version without its records (a failover lost them): wait
                self.known = len(self.entries)  # for the ticker instead of reading in a loop
            self._append(records)
        self.heard(len(self.entries))

    def offer(self, wakeup: Wakeup) -> None:
        """A wake-up's records, appended when they follow on from this feed's entries (no read
        of the log then); otherwise the news that the game moved on is enough."""
        if self._reading.acquire(blocking=False):
            try:
                if wakeup.first == len(self.entries) + 1:
                    self._append(wakeup.records)
            finally:
                self._reading.release()
        self.heard(wakeup.version)

    def _append(self, records: list[bytes]) -> None:
        for raw in records:
            self.entries.append(self.replayer.feed(raw))
        for old in [v for v in list(self._rendered) if v <= len(self.entries) - RENDERED_ENTRIES]:
            del self._rendered[old]

    def heard(self, version: int) -> None:
        with self.changed:
            if version > self.known:
                self.known = version
                self.changed.notify_all()

    def wait(self, after: int, timeout: float) -> bool:
        """Block until a version newer than ``after`` is known, or ``timeout`` seconds."""
        with self.changed:
            return self.changed.wait_for(lambda: self.known > after, timeout)

    def since(self, after: int) -> list[Entry]:
        return self.entries[after:]

    def rendered(self, entry: Entry, key: Hashable, render: Callable[[], bytes]) -> bytes:
        """``render()`` of a recent entry, made once for every reader asking with ``key``."""
        if entry.version <= len(self.entries) - RENDERED_ENTRIES:
            return render()
        frames = self._rendered.setdefault(entry.version, {})
        frame = frames.get(key)
        if frame is None:
            frame = frames[key] = render()
        return frame


class Hub:
    """The feeds of one process, its wake-up listener and its ticker (started on first use)."""

    def __init__(self, store: GameStore, settle: Settler) -> None:
        self.store = store
        self.settle = settle
        self.feeds: dict[str, Feed] = {}
        self._lock = threading.Lock()
        self._started = False

    @contextmanager
    def follow(self, game_id: str, version: int) -> Iterator[Feed]:
        """The game's feed, caught up to at least ``version`` (the version the reader's request
        read: its own writes included), held for one reader."""
        self._start()
        with self._lock:
            feed = self.feeds.get(game_id)
            if feed is None:
                feed = self.feeds[game_id] = Feed(game_id, self.store)
            feed.readers += 1
        try:
            feed.heard(version)
            feed.catch_up()
            yield feed
        finally:
            with self._lock:
                feed.readers -= 1
                feed.idle_since = time.monotonic()

    def _start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._listen, name="wakeups", daemon=True).start()
        threading.Thread(target=self._tick, name="ticker", daemon=True).start()

    def _listen(self) -> None:
        while True:
            try:
                self._hear()
            except Exception as err:
                log.warning("wake-up listener reconnects: %s: %s", type(err).__name__, err)
                time.sleep(RECONNECT_SECONDS)

    def _hear(self) -> None:
        pubsub = self.store.subscribe(WAKEUP_CHANNEL)
        try:
            while True:
                message = pubsub.get_message(timeout=TICK_SECONDS)
                if message is not None:
                    self._wake(message["data"])
        finally:
            pubsub.close()

    def _wake(self, data: bytes) -> None:
        wakeup = parse_wakeup(data)
        feed = None if wakeup is None else self.feeds.get(wakeup.game_id)
        if feed is None or wakeup is None:
            return
        try:
            feed.offer(wakeup)
        except Exception as err:  # one game's bad record must not deafen the others
            log.warning("wake-up of %s not applied: %r", wakeup.game_id, err)
            feed.heard(wakeup.version)  # its readers read the log and meet the error themselves

    def _tick(self) -> None:
        while True:
            time.sleep(TICK_SECONDS)
            try:
                self._refresh()
            except Exception as err:
                log.warning("ticker: %s: %s", type(err).__name__, err)

    def _refresh(self) -> None:
        """Catch missed wake-ups, play overdue turns, drop feeds nobody follows."""
        now = time.monotonic()
        with self._lock:
            for game_id, feed in list(self.feeds.items()):
                if not feed.readers and now - feed.idle_since > IDLE_SECONDS:
                    del self.feeds[game_id]
            followed = [feed for feed in self.feeds.values() if feed.readers]
        if not followed:
            return
        states = self.store.versions_and_tables([feed.game_id for feed in followed])
        wall_ms = time.time_ns() // 1_000_000
        for feed, (version, table) in zip(followed, states, strict=True):
            if version is None:
                continue
            feed.heard(version)
            deadline = orjson.loads(table).get("deadline_ms") if table else None
            if deadline is not None and wall_ms >= deadline:
                self.settle(feed.game_id)
