"""The three answers of ``GET /events``: a JSON page, a Server-Sent Events stream, NDJSON.

A stream sends every entry after the reader's last one, then each new entry as it is applied,
and ends after the entry that ends the game. Between entries it sends a keep-alive, so proxies
and clients can tell a quiet game from a dead connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

import orjson

from service import rules
from service.rules.log import Entry

from .hub import Feed

#: Seconds between keep-alives on a quiet stream (clients expect one at least every 15 s).
KEEPALIVE_SECONDS = 10.0


class Media(StrEnum):
    JSON = "application/json"
    SSE = "text/event-stream"
    NDJSON = "application/x-ndjson"


#: Headers of both streams: never cached, never buffered by nginx.
STREAM_HEADERS = {"X-Accel-Buffering": "no"}
#: The audience of the host (sees every tile) and of the public (sees no hidden tile).
HOST, PUBLIC = "host", "public"


@dataclass(frozen=True)
class Viewer:
    """Who reads the log: the host sees every tile, a seat its own drawn tiles, others none."""

    seat: int | None
    host: bool = False

    def audience(self, entry: Entry) -> int | str:
        """Readers of one audience get the same bytes for ``entry``, so it is rendered once:
        a seat that did not draw in it sees what the public sees."""
        if self.host:
            return HOST
        if self.seat is not None and self.seat in entry.drawers:
            return self.seat
        return PUBLIC

    def entry_json(self, entry: Entry) -> bytes:
        events = entry.events if self.host else rules.visible_events(entry.events, self.seat)
        return orjson.dumps(entry.to_json(events))

    def entry(self, feed: Feed, entry: Entry) -> bytes:
        """The entry's JSON as this viewer may see it."""
        return feed.rendered(entry, (None, self.audience(entry)), lambda: self.entry_json(entry))

    def frame(self, feed: Feed, entry: Entry, media: Media) -> bytes:
        """The entry as one message of ``media``."""
        key = (media, self.audience(entry))
        return feed.rendered(entry, key, lambda: FRAMES[media][0](entry, self.entry(feed, entry)))


def sse_message(entry: Entry, data: bytes) -> bytes:
    return b"id: %d\nevent: entry\ndata: %s\n\n" % (entry.version, data)


def ndjson_line(_entry: Entry, data: bytes) -> bytes:
    return data + b"\n"


FRAMES: dict[Media, tuple[Callable[[Entry, bytes], bytes], bytes]] = {
    Media.SSE: (sse_message, b": keep-alive\n\n"),
    Media.NDJSON: (ndjson_line, b"\n"),
}


def stream(
    feed: Feed, after: int, viewer: Viewer, media: Media, final: int | None = None
) -> Iterator[bytes]:
    """Entries after ``after`` as they come; ends after the game's last entry. ``final``: the
    version of a game already over when asked, so a reader resuming at or past its last entry
    (``Last-Event-ID`` of the final entry) gets an ended stream, not keep-alives forever.
    Entries that are ready together go out as one write."""
    keepalive = FRAMES[media][1]
    if media is Media.SSE:
        yield b"retry: 1000\n\n"
    last = after
    while True:
        batch = until_end(feed.since(last))
        if batch:
            yield b"".join(viewer.frame(feed, entry, media) for entry in batch)
            last = batch[-1].version
            if batch[-1].ends_game:
                return
        if final is not None and last >= final:
            return
        if feed.wait(last, KEEPALIVE_SECONDS):
            feed.catch_up()
        else:
            yield keepalive


def until_end(entries: list[Entry]) -> list[Entry]:
    """``entries`` up to and with the one that ends the game."""
    for i, entry in enumerate(entries):
        if entry.ends_game:
            return entries[: i + 1]
    return entries
