"""One hub per process: the games its readers follow, each rebuilt once and shared by them all.

Readers (streams and long-polls) never touch Redis themselves. They wait on a :class:`Feed`.
The process subscribes to each followed game's own wake-up channel (a sharded channel: on a
cluster it is heard on the game's shard only, see service.store.subscriber), and the wake-up
carries the change's records: a feed that is up to date appends them and wakes its readers
without a read, and a feed that is behind reads only the records it lacks, once for all of
them. The log in Redis is the truth: once a subscription stands (a new feed's, or one renewed
after a failover or a moved slot) the game's version is read again, and a ticker re-reads the
version of every followed game each second, so a message lost in a reconnection costs at most a
second. The same tick reads who is at each followed table
(service.store.presence), and a change of it wakes the game's streams, which tell it. Nothing
here plays a move: overdue turns are the background worker's (``service.worker``), never the
streams pool's.

Threads here are greenlets under gunicorn's gevent worker (it patches ``threading``), so a
waiting reader costs a greenlet, not a worker thread.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import redis
from flask import current_app

from service.rules.log import Entry, Replayer
from service.store import GameNotFound, GameStore
from service.store.presence import present_seats
from service.store.wakeup import Wakeup, parse_wakeup

from ..config import settings
from ..store_access import store

log = logging.getLogger(__name__)

#: How often the ticker re-reads followed games (missed wake-ups), in seconds.
TICK_SECONDS = 1.0
#: A feed nobody follows is kept this long for the next reader, then dropped.
IDLE_SECONDS = 30.0
#: How long a page waits for a stale feed's rewind (a read of the whole log) before a 503.
REWIND_WAIT_SECONDS = 5.0
#: Rendered frames are kept for this many of a feed's newest entries: every live reader of a
#: game asks for the same few, while a reader catching up from far back renders its own.
RENDERED_ENTRIES = 64


class Parked(Protocol):
    """A stream reader the feed writes new entries to itself while the reader waits."""

    last: int  # the version of the last entry the reader was sent

    def push(self, feed: Feed, entries: list[Entry], made: dict[Hashable, Any]) -> bool:
        """Send ``entries`` (those after ``last``); False when the reader must see to them
        itself (one ends its stream or the game, or its socket took only part of them).
        ``made`` is shared by every reader of one push, for what they can share."""

    def keep_alive(self, now: float) -> bool:
        """Send a keep-alive if the stream has been quiet long enough; False when the reader
        must see to its stream itself."""

    def due(self) -> float:
        """When its next keep-alive is due, unless the stream sends something first."""


class Feed:
    """One game's entries as rebuilt in this process (unredacted), the frames rendered of its
    newest entries for each audience, and its waiting readers."""

    def __init__(self, game_id: str, store: GameStore) -> None:
        self.game_id = game_id
        self.store = store
        self.replayer = Replayer(moves=True)
        self.entries: list[Entry] = []
        # The stored record of the last entry: the log read again holding another record at
        # that version means Redis lost changes and the game took as many new ones since.
        self.tail = b""
        self.known = 0  # the newest version this process heard of
        self.final: int | None = None  # the version of the entry that ended the game
        # The game expired or was deleted, or the process is stopping: its readers end.
        self.gone = False
        # Times the stored log was found to differ from this feed (Redis lost changes it had
        # published), and how many first entries the two shared the last time: a reader sent
        # an entry past them holds one that no longer exists, and its stream ends.
        self.rewinds = 0
        self.rewound_to = 0
        # The entries were read again while stale, never shown: readers hold entries of the
        # feed before them, and the next rewind keeps the lower count of shared entries (a
        # reader may look only after both).
        self.unshown = False
        # The entries are not the stored log's (a rewind was found, not yet made): readers are
        # shown none of them and wait for the rewind, and wake-ups are not appended meanwhile
        # (they would follow lost entries).
        self.stale = False
        # A rewind's read runs: a second finding starts no second read, and the one running
        # reads again once done (``again``): the log may have lost changes after its read.
        self.rewinding = False
        self.again = False
        self.readers = 0
        self.idle_since = time.monotonic()
        # Rung (set, then replaced by a fresh one) on every change a reader waits for. Under
        # gevent ``threading.Event`` is gevent's: one ``set`` wakes every reader of the game in
        # one pass of the loop, where a Condition took a lock per waiter and per wake.
        self._bell = threading.Event()
        self._changing = threading.Lock()  # orders the changes themselves, never held to wait
        self._reading = threading.Lock()
        self._rendered: dict[int, dict[Hashable, bytes]] = {}
        # Readers waiting in :meth:`park`, each with the event that wakes it alone.
        self._parked: dict[Parked, threading.Event] = {}
        # No parked reader's keep-alive is due before this: a sweep until then is one
        # comparison, not a call per reader. Pushes only postpone keep-alives, so an early
        # bound costs one walk, which sets it again.
        self._sweep_at = float("inf")
        self.presence: tuple[bool, ...] = ()  # which seats are at the table, as last read
        self.presence_seq = 0  # how many times that changed

    @property
    def seats(self) -> int:
        state = self.replayer.state
        return 0 if state is None else state.n_players

    def saw(self, present: tuple[bool, ...]) -> None:
        """Who is at the table now: a change wakes the readers, whose streams tell it."""
        with self._changing:
            if present != self.presence:
                self.presence = present
                self.presence_seq += 1
                self._ring(parked=True)

    def catch_up(self) -> None:
        """Read and rebuild the records this feed has not seen (one reader does it for all).

        The log's length is the game's version (each record is one version, written in the same
        step), so reading the log alone tells how far the game is."""
        if self.stale or self.known <= len(self.entries):
            return  # every reader of every wake-up asks: the usual answer takes no lock
        with self._reading:
            if self.stale or self.known <= len(self.entries):
                return
            records = self.store.log_records(self.game_id, len(self.entries))
            if not records:
                try:
                    _, records = self.store.log(self.game_id, len(self.entries))
                except GameNotFound:
                    self.vanish()
                    return
            if not records:  # a version without its records (a failover lost them): wait
                self.known = len(self.entries)  # for the ticker instead of reading in a loop
            if self.stale:  # found during the read: the records would follow lost entries
                return
            self._append(records)
        self.heard(len(self.entries))

    def offer(self, wakeup: Wakeup) -> bool:
        """A wake-up's records, appended when they follow on from this feed's entries (no read
        of the log then); otherwise the news that the game moved on is enough. False when it
        carries another record at this feed's last version than the feed holds: Redis lost
        changes and the game took new ones while this process stayed subscribed, and the feed
        must be rewound (the next record would otherwise be appended to lost ones); False too
        for a stale feed whose rewind is not under way (it failed, or was not started)."""
        agrees = True
        if self.stale:
            agrees = not self.unrewound()
        elif self._reading.acquire(blocking=False):
            try:
                if wakeup.first == len(self.entries) + 1:
                    self._append(wakeup.records)
                else:
                    agrees = self._agrees(wakeup)
            finally:
                self._reading.release()
        self.heard(wakeup.version)
        return agrees

    def _agrees(self, wakeup: Wakeup) -> bool:
        at = len(self.entries) - wakeup.first  # this feed's last version among the records
        return not 0 <= at < len(wakeup.records) or wakeup.records[at] == self.tail

    def _append(self, records: list[bytes]) -> None:
        start = len(self.entries)
        if records:
            self.tail = records[-1]
        for raw in records:
            entry = self.replayer.feed(raw)
            self.entries.append(entry)
            if entry.ends_game:
                self.final = entry.version
        for old in [v for v in list(self._rendered) if v <= len(self.entries) - RENDERED_ENTRIES]:
            del self._rendered[old]
        if self._parked and len(self.entries) > start:
            self._push(start)

    def _push(self, start: int) -> None:
        """The entries from ``start`` on, written to every parked reader that was sent all
        before them; any other is woken to see to them itself."""
        new = self.entries[start:]
        made: dict[Hashable, Any] = {}
        for reader in list(self._parked):
            if reader.last != start or not reader.push(self, new, made):
                self._unpark(reader)

    def sweep(self, now: float) -> None:
        """The keep-alives of parked readers on a quiet stream, sent from here so that their
        greenlets sleep on: 10,000 readers each woken every 10 s by its own timer cost 8% of
        the streams pool's CPU a delivery, though entries flowed to all of them."""
        if now < self._sweep_at:
            return
        due = float("inf")
        for reader in list(self._parked):
            if reader.keep_alive(now):
                due = min(due, reader.due())
            else:
                self._unpark(reader)
        self._sweep_at = due

    def _unpark(self, reader: Parked) -> None:
        woken = self._parked.pop(reader, None)
        if woken is not None:
            woken.set()

    def heard(self, version: int) -> None:
        with self._changing:
            if version > self.known:
                self.known = version
                # Parked readers were sent what the feed holds: only a feed behind needs them.
                self._ring(parked=version > len(self.entries))

    def rewind(self) -> None:
        """The stored log is not the one this feed holds: Redis lost changes it had published
        (a restart from an AOF that missed its last second, a failover to a replica behind),
        and the game may have taken new ones since, at those versions. The feed is rebuilt from
        the log as stored; readers sent an entry past the part both logs share are woken, and
        their streams end: kept, the lost entries would be served, and the game's next entries
        at those versions taken for news the feed had, so a reader past them would hear nothing
        until the game passed its position."""
        try:
            version, records = self.store.log(self.game_id)
        except GameNotFound:
            self.vanish()
            return
        replayer = Replayer(moves=True)
        entries = [replayer.feed(raw) for raw in records]
        with self._reading, self._changing:
            to = shared(self.entries, entries)
            self.rewound_to = min(to, self.rewound_to) if self.unshown else to
            self.rewinds += 1
            self.replayer, self.entries = replayer, entries
            self.tail = records[-1] if records else b""
            self.final = next((e.version for e in entries if e.ends_game), None)
            self._rendered.clear()
            self.known = version
            # Last, as readers read without the lock: a feed no longer stale is shown whole.
            # Stale still if found again during the read (what it read may be lost too).
            self.stale = self.unshown = self.again
            self._ring(parked=True)

    def owe_rewind(self) -> bool:
        """Note that the entries are stale and a rewind is owed; False when one's read runs
        already."""
        with self._changing:
            self.stale = True
            if self.rewinding:
                self.again = True
                return False
            self.rewinding = True
            return True

    def unrewound(self) -> bool:
        """Stale with no rewind under way (it failed, or was not started): any read of the
        game's version starts one. A stale feed whose rewind runs is no finding: a read that
        spans a tick would be read again, and again."""
        return self.stale and not self.rewinding

    def read_again(self) -> bool:
        """A rewind's read is over: whether another finding came meanwhile, to read again."""
        with self._changing:
            again, self.again = self.again, False
            self.rewinding = again
            return again

    def vanish(self) -> None:
        """The game is gone (or the process stops: :meth:`Hub.drain`): wake its readers, who
        end."""
        with self._changing:
            self.gone = True
            self._ring(parked=True)

    def _ring(self, parked: bool) -> None:
        """Wake every reader waiting in :meth:`wait`, and with ``parked`` those in :meth:`park`
        too (the change is made before: see :meth:`wait`)."""
        bell, self._bell = self._bell, threading.Event()
        bell.set()
        if parked:
            for reader in list(self._parked):
                self._unpark(reader)

    def wait(
        self,
        after: int,
        timeout: float,
        presence_seq: int | None = None,
        rewinds: int | None = None,
    ) -> bool:
        """Block until a version newer than ``after`` is known, the game is gone or has ended
        before ``after`` (a reader past its last entry is done), presence changed since
        ``presence_seq`` (for a reader that tells it), the feed was rewound since ``rewinds``
        (a stream's: it may hold a lost entry), or ``timeout`` seconds; whether one of those
        came. The bell is taken before the state is looked at: a change made after the
        look rings that very bell."""
        deadline = time.monotonic() + timeout
        while True:  # a ring for another reader's reason (presence, a long-poll's) waits on
            bell = self._bell
            if self._ready(after, presence_seq, rewinds):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            bell.wait(left)

    def park(
        self, reader: Parked, timeout: float, presence_seq: int, rewinds: int | None = None
    ) -> bool:
        """:meth:`wait`, for a reader the feed sends each new entry itself meanwhile
        (``reader.push``) and its keep-alives (:meth:`sweep`): only what the reader must see to
        itself wakes it (the feed behind, presence, the game gone, an entry ``push`` declined,
        a keep-alive its socket did not take or its peer gone). Greenlets only: the parked
        readers change between two switches of gevent's loop, never under another thread."""
        if self._ready(reader.last, presence_seq, rewinds):
            return True
        woken = self._parked[reader] = threading.Event()
        self._sweep_at = min(self._sweep_at, reader.due())
        try:
            return woken.wait(timeout)
        finally:
            self._parked.pop(reader, None)

    def _ready(self, after: int, presence_seq: int | None, rewinds: int | None = None) -> bool:
        # A rewind's ring wakes every reader, but only a stream asks about it: a reader sent a
        # lost entry waits for a version past it, which may be long in coming. A stale feed's
        # entries may be lost ones: its readers wait for the rewind.
        return (
            (rewinds is not None and rewinds != self.rewinds)
            or self.gone
            or (presence_seq is not None and presence_seq != self.presence_seq)
            or (
                not self.stale
                and (self.known > after or (self.final is not None and self.final < after))
            )
        )

    def settle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for a stale feed's rewind; whether its entries are the
        stored log's (or the game is gone)."""
        deadline = time.monotonic() + timeout
        while True:
            bell = self._bell
            if not self.stale or self.gone:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            bell.wait(left)

    def since(self, after: int) -> list[Entry]:
        """The entries after ``after``; none while stale: they may be lost ones."""
        return [] if self.stale else self.entries[after:]

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
    """The feeds of one process, their wake-up subscriptions and its ticker (started on first
    use)."""

    def __init__(self, store: GameStore, presence_ms: int) -> None:
        self.store = store
        self.presence_ms = presence_ms
        self.feeds: dict[str, Feed] = {}
        self.wakeups = store.wakeups(self._wake, self._subscribed)
        self._lock = threading.Lock()
        self._started = False
        with _HUBS_LOCK:
            # A hub made after the process's drain (its first stream asked for after SIGTERM)
            # drains from the start: no drain to come would end its streams.
            self.draining = _DRAINED.is_set()
            _HUBS.add(self)

    def drain(self) -> None:
        """The process is stopping: end every stream now and answer every long-poll with what
        it has, rather than hold them until the server's graceful timeout and cut them then.
        Their readers reconnect (to another instance) and resume from their last entry. A
        reader that arrives afterwards is answered at once too."""
        with self._lock:
            self.draining = True
            feeds = list(self.feeds.values())
        for feed in feeds:
            feed.vanish()

    @contextmanager
    def follow(self, game_id: str, version: int, presence: bool = False) -> Iterator[Feed]:
        """The game's feed, caught up to at least ``version`` (the version the reader's request
        read: its own writes included), held for one reader; with ``presence`` (a stream, which
        tells it), who is at the table is known before it is yielded."""
        self._start()
        with self._lock:
            feed = self.feeds.get(game_id)
            if feed is None:
                feed = self.feeds[game_id] = Feed(game_id, self.store)
                self.wakeups.follow(game_id)
            feed.readers += 1
            draining = self.draining
        if draining:
            feed.vanish()
        try:
            feed.heard(version)
            try:
                feed.catch_up()
                if presence and not feed.presence_seq:  # start from who is there, not nobody
                    self._see([feed])
            except redis.RedisError as err:  # the reader's loop and the ticker read it again
                log.info("feed of %s not caught up: %s", game_id, err)
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
        threading.Thread(target=self._tick, name="ticker", daemon=True).start()
        # Apart from the ticker, whose reads of Redis can stall through a failover: quiet
        # streams must still get their keep-alives then.
        threading.Thread(target=self._keep_alives, name="keep-alives", daemon=True).start()

    def _subscribed(self, game_ids: list[str]) -> None:
        """Wake-ups published before these games' subscriptions stood are not heard: read what
        the games did meanwhile now, rather than at the next tick."""
        feeds = [f for f in (self.feeds.get(g) for g in game_ids) if f is not None]
        try:
            self._reread(feeds)
        except Exception as err:  # the ticker reads them again within a second
            log.warning("catch-up of %s: %s: %s", game_ids, type(err).__name__, err)

    def _wake(self, data: bytes) -> None:
        wakeup = parse_wakeup(data)
        feed = None if wakeup is None else self.feeds.get(wakeup.game_id)
        if feed is None or wakeup is None:
            return
        try:
            if not feed.offer(wakeup):
                self._rewind(feed)
        except Exception as err:  # one game's bad record must not deafen the others
            log.warning("wake-up of %s not applied: %r", wakeup.game_id, err)
            feed.heard(wakeup.version)  # its readers read the log and meet the error themselves

    def _tick(self) -> None:
        while True:
            time.sleep(TICK_SECONDS)
            try:
                self.wakeups.repair()
                self._refresh()
            except Exception as err:
                log.warning("ticker: %s: %s", type(err).__name__, err)

    def _keep_alives(self) -> None:
        while True:
            time.sleep(TICK_SECONDS)
            now = time.monotonic()
            for feed in list(self.feeds.values()):
                try:
                    feed.sweep(now)
                except Exception as err:  # one game's readers must not cost the others theirs
                    log.warning("keep-alives of %s: %s: %s", feed.game_id, type(err).__name__, err)

    def _refresh(self) -> None:
        """Catch missed wake-ups, drop feeds nobody follows."""
        now = time.monotonic()
        with self._lock:
            for game_id, feed in list(self.feeds.items()):
                if not feed.readers and now - feed.idle_since > IDLE_SECONDS:
                    del self.feeds[game_id]
                    self.wakeups.unfollow(game_id)
            followed = [feed for feed in self.feeds.values() if feed.readers]
        if followed:
            self._reread(followed)
            self._see(followed)

    def _reread(self, feeds: list[Feed]) -> None:
        """Read the games' versions: a newer one wakes their readers, who catch up. Redis lost
        entries a feed held before the read (a feed may take newer ones while the read is on
        its way) when the version is older, or when the stored record at the feed's last
        version is another: the game took as many new changes as were lost, and the version
        alone looks unchanged."""
        if not feeds:
            return
        held = [(len(feed.entries), feed.tail) for feed in feeds]
        games = [(feed.game_id, had) for feed, (had, _) in zip(feeds, held, strict=True)]
        states = self.store.versions_and_records(games)
        for feed, (had, tail), (version, record) in zip(feeds, held, states, strict=True):
            if version is None:
                feed.vanish()
            elif feed.unrewound() or version < had or (record is not None and record != tail):
                self._rewind(feed)
            else:
                feed.heard(version)

    @staticmethod
    def _rewind(feed: Feed) -> None:
        """Rewind ``feed`` on a thread of its own (a greenlet in the streams pool): the rewind
        reads and replays the game's whole log, and the pub/sub listener that found it (or the
        ticker) would hold every other game's wake-ups, or reads, until it was done."""
        if feed.owe_rewind():
            try:
                threading.Thread(
                    target=Hub._rewind_now, args=(feed,), name="rewind", daemon=True
                ).start()
            except BaseException:  # not started: the next finding starts it
                feed.rewinding = False
                raise

    @staticmethod
    def _rewind_now(feed: Feed) -> None:
        again = True
        try:
            while again:
                try:
                    feed.rewind()
                except Exception as err:  # the feed stays stale: the next finding tries again
                    log.info(
                        "feed of %s not rewound: %s: %s", feed.game_id, type(err).__name__, err
                    )
                again = feed.read_again()
        finally:
            if again:  # stopped between two reads: the next finding starts one
                feed.rewinding = False

    def _see(self, feeds: list[Feed]) -> None:
        """Read who is at each of ``feeds``' tables, in one round trip (per node)."""
        found = self.store.presence.of_games([feed.game_id for feed in feeds])
        now = time.time_ns() // 1_000_000
        for feed, fields in zip(feeds, found, strict=True):
            feed.saw(tuple(present_seats(fields, feed.seats, now, self.presence_ms)))


def shared(held: list[Entry], stored: list[Entry]) -> int:
    """How many first entries ``held`` and ``stored`` have in common."""
    for n, (mine, theirs) in enumerate(zip(held, stored, strict=False)):
        if mine.record != theirs.record:
            return n
    return min(len(held), len(stored))


HUB_EXTENSION = "mexican_train_hub"
#: Every hub of this process, for :func:`drain` (one per app; tests make several apps).
_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()
#: Set once this process drained: a worker told to stop still serves the requests of
#: connections it accepted (kept alive, or in the second before it stops accepting).
_DRAINED = threading.Event()
#: Keeps a hub's making and a drain apart: a hub listed after the drain read the list would
#: be missed by it, and one made before the flag was set would not see it.
_HUBS_LOCK = threading.Lock()


def drain() -> None:
    """End the streams and long-polls of every hub of this process, and of any hub made later
    (the server is stopping: ``deploy/gunicorn.conf.py`` calls it once the worker was told to
    exit)."""
    with _HUBS_LOCK:
        _DRAINED.set()
        hubs = list(_HUBS)
    for found in hubs:
        found.drain()


def hub() -> Hub:
    """This process's hub, made on first use (each worker process has its own)."""
    found = current_app.extensions.get(HUB_EXTENSION)
    if found is None:
        window_ms = settings().presence_seconds * 1000
        found = current_app.extensions[HUB_EXTENSION] = Hub(store(), window_ms)
    assert isinstance(found, Hub)
    return found
