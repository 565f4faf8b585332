"""The three answers of ``GET /events``: a JSON page, a Server-Sent Events stream, NDJSON.

A stream sends every entry after the reader's last one, then each new entry as it is applied,
and ends after the entry that ends the game, when the game is gone, when the reader's seat is
taken from it, or after its lifetime. Between entries it sends a keep-alive, so proxies and
clients can tell a quiet game from a dead connection. A change of who is at the table goes out
as a presence message: not an entry (no version, no ``id``), so a resumed stream never replays
one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import orjson
import redis

from service import rules
from service.frameworks.gunicorn_body import BodyWriter
from service.rules import Move, Role
from service.rules.log import Entry, Kind

from .hub import Feed

#: Seconds between keep-alives on a quiet stream (clients expect one at least every 15 s).
KEEPALIVE_SECONDS = 10.0
#: Pause of a reader whose read of the log failed (Redis away, or every pooled connection busy)
#: before it tries again: its stream stays open and loses nothing (the log is read from its
#: last entry), and thousands of readers do not retry in a tight loop.
RETRY_SECONDS = 0.5

log = logging.getLogger(__name__)


class Media(StrEnum):
    JSON = "application/json"
    SSE = "text/event-stream"
    NDJSON = "application/x-ndjson"


#: Headers of both streams: never cached, never buffered by nginx.
STREAM_HEADERS = {"X-Accel-Buffering": "no"}


@dataclass(frozen=True)
class Viewer:
    """A reader of the log: what it sees of each entry is the observer's (``rules.audience``,
    ``rules.visible_events``); here are only the rendering and the rights that end.

    ``checked`` is the version at which the reader's token was found valid. A seat change of
    the reader's seat after it (a bot took it, or it was reopened) revokes that token: from
    that entry on the reader sees what the public sees, and a stream ends there."""

    role: Role
    checked: int = 0

    def revoked_by(self, entry: Entry) -> bool:
        """Whether ``entry`` ends this reader's rights to its seat's hidden tiles."""
        return (
            self.role.seat is not None
            and entry.version > self.checked
            and entry.record.kind in REVOKING
            and entry.record.seat == self.role.seat
        )

    def public(self) -> Viewer:
        return Viewer(Role.PUBLIC)

    def moves_after(self, entry: Entry) -> tuple[Move, ...] | None:
        """This reader's legal moves after ``entry``: only the seat whose turn follows it."""
        turn = entry.turn
        if turn is None or self.role.seat != turn[0]:
            return None
        return turn[1]

    def entry_json(self, entry: Entry) -> bytes:
        body = entry.to_json(rules.visible_events(entry.events, self.role))
        moves = self.moves_after(entry)
        if moves is not None:
            body["legal_moves"] = [move.to_json() for move in moves]
        return orjson.dumps(body)

    def rendering(self, entry: Entry) -> Hashable:
        """Readers with the same key are sent the same entry: one rendering serves them."""
        turn = entry.turn
        return rules.audience(self.role, entry.drawers, None if turn is None else turn[0])

    def entry(self, feed: Feed, entry: Entry, key: Hashable | None = None) -> bytes:
        """The entry's JSON as this viewer may see it, rendered once per audience."""
        key = self.rendering(entry) if key is None else key
        return feed.rendered(entry, (None, key), lambda: self.entry_json(entry))

    def frame(self, feed: Feed, entry: Entry, media: Media) -> bytes:
        """The entry as one message of ``media``."""
        key = self.rendering(entry)
        return feed.rendered(
            entry, (media, key), lambda: FRAMES[media][0](entry, self.entry(feed, entry, key))
        )

    def entries(self, feed: Feed, entries: list[Entry]) -> list[bytes]:
        """``entries`` as this viewer may see them: as the public from a revoking one on."""
        out, reader = [], self
        for entry in entries:
            if reader.revoked_by(entry):
                reader = reader.public()
            out.append(reader.entry(feed, entry))
        return out


#: Entries that take a seat from whoever held it: a seat handed to a bot or reopened, or moved
#: to another device.
REVOKING = frozenset({Kind.SEAT, Kind.TRANSFER})


def sse_message(entry: Entry, data: bytes) -> bytes:
    return b"id: %d\nevent: entry\ndata: %s\n\n" % (entry.version, data)


def ndjson_line(_entry: Entry, data: bytes) -> bytes:
    return data + b"\n"


FRAMES: dict[Media, tuple[Callable[[Entry, bytes], bytes], bytes]] = {
    Media.SSE: (sse_message, b": keep-alive\n\n"),
    Media.NDJSON: (ndjson_line, b"\n"),
}


def presence_frames(media: Media, before: tuple[bool, ...], now: tuple[bool, ...]) -> bytes:
    """One message per seat whose presence changed from ``before`` to ``now``."""
    out = []
    for seat, present in enumerate(now):
        if seat < len(before) and before[seat] == present:
            continue
        if media is Media.SSE:
            data = orjson.dumps({"seat": seat, "present": present})
            out.append(b"event: presence\ndata: %s\n\n" % data)
        else:
            out.append(orjson.dumps({"type": "presence", "seat": seat, "present": present}))
            out.append(b"\n")
    return b"".join(out)


class Reader:
    """One stream's reader: where it is in the log, and, under gunicorn's gevent worker, the
    writer the feed sends new entries with while the reader is parked (``Feed.park``), so a
    reader's greenlet wakes only for what it must see to itself."""

    def __init__(self, viewer: Viewer, media: Media, last: int, writer: BodyWriter | None) -> None:
        self.viewer, self.media, self.last, self.writer = viewer, media, last, writer
        self.rest = b""  # framed bytes a push left unsent: they go first
        self.pushed = False  # the feed sent entries since the reader last woke
        self.broken = False  # a push found the peer gone
        self.wrote_at = time.monotonic()  # when the stream last sent something

    def parks(self) -> bool:
        return self.writer is not None and self.writer.ready and not self.rest

    def push(self, feed: Feed, entries: list[Entry], made: dict[Hashable, Any]) -> bool:
        """Entries that neither end the game nor this stream, sent in one write. ``made``,
        shared by the readers of one push, holds the bytes once per role, media and framing."""
        writer, viewer = self.writer, self.viewer
        if writer is None or any(ends_own_loop(entry, viewer) for entry in entries):
            return False
        key = (viewer.role, self.media, writer.chunked)
        found = made.get(key)
        if found is None:
            data = b"".join(viewer.frame(feed, entry, self.media) for entry in entries)
            found = made[key] = (data, writer.framed(data))
        if not self._send(writer, *found):
            return False
        self.last, self.pushed, self.wrote_at = entries[-1].version, True, time.monotonic()
        return not self.rest

    def keep_alive(self, now: float) -> bool:
        """A keep-alive, sent by the feed's sweep when the stream has been quiet for
        ``KEEPALIVE_SECONDS``; False when the reader must see to its stream itself (the socket
        took only part of it, or the peer is gone)."""
        if now < self.due():
            return True
        if self.writer is None or not self._send(self.writer, FRAMES[self.media][1]):
            return False
        self.wrote_at = now
        return not self.rest

    def due(self) -> float:
        """When the feed's sweep owes this stream a keep-alive, unless it sends something
        first."""
        return self.wrote_at + KEEPALIVE_SECONDS

    def _send(self, writer: BodyWriter, data: bytes, framed: bytes | None = None) -> bool:
        """``writer.send``, keeping what the socket did not take; False when the peer is gone."""
        try:
            self.rest = writer.send(data, framed)
        except OSError:
            self.broken = True
            return False
        return True

    def flush(self) -> None:
        """What the socket did not take of a push, sent before anything else is."""
        if self.rest and self.writer is not None:
            rest, self.rest = self.rest, b""
            self.writer.finish(rest)

    def wait(self, feed: Feed, left: float, presence_seq: int, beats: bool, rewinds: int) -> None:
        """Wait for what the stream must send, or a rewind since ``rewinds``, at most ``left``
        seconds. A parked reader's keep-alives are the feed's (:meth:`Feed.sweep`), so its
        greenlet sleeps on unless its loop ``beats`` (a seat's presence) every
        ``KEEPALIVE_SECONDS``."""
        self.pushed = False
        quiet = min(KEEPALIVE_SECONDS, left)
        if self.parks():
            feed.park(self, quiet if beats else left, presence_seq, rewinds)
        else:
            feed.wait(self.last, quiet, presence_seq, rewinds)

    def quiet(self) -> bool:
        """Whether the stream has sent nothing for a keep-alive period: then one is due, however
        the reader woke (a timer, or a wait that ends at once while Redis is away). Nine tenths
        of it, since a timer may end a hair early; a keep-alive the feed's sweep sent just
        before makes another needless."""
        return time.monotonic() - self.wrote_at >= KEEPALIVE_SECONDS * 0.9

    def wrote(self) -> None:
        """The reader's own loop sent something (gunicorn wrote what it yielded)."""
        self.wrote_at = time.monotonic()


def ends_own_loop(entry: Entry, viewer: Viewer) -> bool:
    """An entry after which the reader's own loop decides: the game's end starts the wait for a
    rematch; a rematch, or the loss of the reader's seat, ends the stream."""
    return entry.ends_game or entry.record.kind == Kind.REMATCH or viewer.revoked_by(entry)


def stream(
    feed: Feed,
    after: int,
    viewer: Viewer,
    media: Media,
    lifetime: float,
    linger: float = 0,
    writer: BodyWriter | None = None,
    beats: bool = False,
) -> Iterator[bytes]:
    """Entries after ``after`` as they come. After the game's last entry the stream lingers
    ``linger`` seconds (from that entry's time) for a rematch entry, then ends; it ends at once
    for a reader past the last entry, when the game is gone, when the reader's seat is taken
    from it (after that entry), or after ``lifetime`` seconds (the client resumes from its last
    entry). Entries that are ready together go out as one write. With a ``writer`` the feed
    sends new entries itself while the reader waits; an empty item then says the stream went on
    (it writes nothing). An NDJSON stream's first item is empty too: the server sends the
    headers with it. ``beats``: the caller needs an item at least every ``KEEPALIVE_SECONDS``
    (a seat's stream tells its presence). A keep-alive goes out whenever the stream has been
    quiet for that long."""
    keepalive = FRAMES[media][1]
    if media is Media.SSE:
        yield b"retry: 1000\n\n"
    else:
        yield b""  # the headers go out at once, as with SSE's first line, not with an entry
    reader = Reader(viewer, media, after, writer)
    ends = time.monotonic() + lifetime
    rewinds = feed.rewinds
    seq, present = feed.presence_seq, feed.presence
    while True:
        reader.flush()
        if reader.broken:
            return
        # Redis lost entries: was this reader sent one of them? Asked with nothing yielded
        # before the read of the entries: an entry taken after a rewind is not a lost one.
        if feed.rewinds != rewinds:
            if reader.last > feed.rewound_to:
                return
            rewinds = feed.rewinds
        batch, over = cut(feed.since(reader.last), viewer)
        if batch:
            yield b"".join(viewer.frame(feed, entry, media) for entry in batch)
            reader.last = batch[-1].version
            reader.wrote()
        if feed.presence_seq != seq:
            seq, before, present = feed.presence_seq, present, feed.presence
            if before:  # the first reading is the baseline, not a change
                yield presence_frames(media, before, present)
                reader.wrote()
        left = min(ends - time.monotonic(), lingering(feed, reader.last, linger))
        if over or feed.gone or left <= 0:
            return
        reader.wait(feed, left, seq, beats, rewinds)
        caught_up(feed)
        if not feed.gone and reader.quiet():
            yield keepalive
            reader.wrote()
        elif reader.pushed or beats:
            yield b""


def caught_up(feed: Feed) -> None:
    """The feed read up to what was heard (nothing to read unless it is behind), or, when the
    read fails, a pause before the stream tries again."""
    try:
        feed.catch_up()
    except redis.RedisError as err:
        log.info("stream of %s waits for the log: %s", feed.game_id, err)
        time.sleep(RETRY_SECONDS)


def lingering(feed: Feed, last: int, linger: float) -> float:
    """Seconds left to wait for a rematch entry once a reader holds the game's last entry (0:
    the stream ends); unbounded while the game goes on, and while the feed is stale: the end
    it holds may be a lost one, and the reader waits for the rewind."""
    final = feed.final
    if final is None or feed.stale:
        return float("inf")
    if last != final or linger <= 0:
        return 0.0
    ended_ms = feed.entries[final - 1].record.at_ms
    return ended_ms / 1000 + linger - time.time()


def cut(entries: list[Entry], viewer: Viewer) -> tuple[list[Entry], bool]:
    """``entries`` up to and with the first that ends the stream (a rematch, after the game's
    last entry, or one that revokes the reader's seat), and whether one did."""
    for i, entry in enumerate(entries):
        if entry.record.kind == Kind.REMATCH or viewer.revoked_by(entry):
            return entries[: i + 1], True
    return entries, False
