"""Reading ``GET /events`` as a stream: the two wire formats, and resuming where a dropped
connection left off.

Both formats are parsed here rather than with an SSE library: the reader must own the
connection to resume it (``Last-Event-ID`` for SSE, ``after`` for NDJSON), and the server sends
a small, fixed subset of each format (``id``/``event``/``data`` fields, comment keep-alives,
one ``retry``; one JSON object a line, empty keep-alive lines).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any

import orjson

JSON = dict[str, Any]


class Media(StrEnum):
    """How ``Client.events`` reads a game's log."""

    SSE = "text/event-stream"
    NDJSON = "application/x-ndjson"


def sse_messages(lines: Iterable[bytes]) -> Iterator[tuple[str, str]]:
    """``(event id, data)`` of each SSE message (WHATWG rules for the fields the server uses:
    several ``data`` lines join with newlines, comments and unknown fields are skipped)."""
    event_id, data = "", list[str]()
    for raw in lines:
        line = raw.decode().rstrip("\r")
        if not line:
            if data:
                yield event_id, "\n".join(data)
            data = []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "id":
            event_id = value


def entries_of(lines: Iterable[bytes], media: Media) -> Iterator[JSON]:
    """The log entries in a stream's lines, whichever format."""
    if media is Media.SSE:
        for _, data in sse_messages(lines):
            yield orjson.loads(data)
        return
    for raw in lines:
        if raw.strip():
            yield orjson.loads(raw)


def ends_game(entry: JSON) -> bool:
    return any(event.get("type") == "game_over" for event in entry.get("events", ()))
