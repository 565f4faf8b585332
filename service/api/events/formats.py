"""The three answers of ``GET /events``: a JSON page, a Server-Sent Events stream, NDJSON.

A stream sends every entry after the reader's last one, then each new entry as it is applied,
and ends after the entry that ends the game. Between entries it sends a keep-alive, so proxies
and clients can tell a quiet game from a dead connection.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import StrEnum
from typing import Any

import orjson

from service.rules.log import Entry

from .hub import Feed

#: Seconds between keep-alives on a quiet stream (clients expect one at least every 15 s).
KEEPALIVE_SECONDS = 10.0

Render = Callable[[Entry], dict[str, Any]]


class Media(StrEnum):
    JSON = "application/json"
    SSE = "text/event-stream"
    NDJSON = "application/x-ndjson"


#: Headers of both streams: never cached, never buffered by nginx.
STREAM_HEADERS = {"X-Accel-Buffering": "no"}


def sse_message(entry: dict[str, Any]) -> bytes:
    return b"id: %d\nevent: entry\ndata: %s\n\n" % (entry["version"], orjson.dumps(entry))


def ndjson_line(entry: dict[str, Any]) -> bytes:
    return orjson.dumps(entry) + b"\n"


FRAMES: dict[Media, tuple[Callable[[dict[str, Any]], bytes], bytes]] = {
    Media.SSE: (sse_message, b": keep-alive\n\n"),
    Media.NDJSON: (ndjson_line, b"\n"),
}


def stream(
    feed: Feed, after: int, render: Render, media: Media, final: int | None = None
) -> Iterator[bytes]:
    """Entries after ``after`` as they come; ends after the game's last entry. ``final``: the
    version of a game already over when asked, so a reader resuming at or past its last entry
    (``Last-Event-ID`` of the final entry) gets an ended stream, not keep-alives forever."""
    frame, keepalive = FRAMES[media]
    if media is Media.SSE:
        yield b"retry: 1000\n\n"
    last = after
    while True:
        for entry in feed.since(last):
            yield frame(render(entry))
            last = entry.version
            if entry.ends_game:
                return
        if final is not None and last >= final:
            return
        if feed.wait(last, KEEPALIVE_SECONDS):
            feed.catch_up()
        else:
            yield keepalive
