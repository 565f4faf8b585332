"""Reading ``GET /events`` as a stream: the two wire formats, and resuming where a dropped
connection left off.

Both formats are parsed here rather than with an SSE library: the reader must own the
connection to resume it (``Last-Event-ID`` for SSE, ``after`` for NDJSON), and the server sends
a small, fixed subset of each format (``id``/``event``/``data`` fields, comment keep-alives,
one ``retry``; one JSON object a line, empty keep-alive lines).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any

JSON = dict[str, Any]


class Media(StrEnum):
    """How ``Client.events`` reads a game's log."""

    SSE = "text/event-stream"
    NDJSON = "application/x-ndjson"


#: The SSE event of a change of who is at the table (not a log entry: it has no id).
PRESENCE = "presence"


def sse_messages(lines: Iterable[bytes]) -> Iterator[tuple[str, str, str]]:
    """``(event type, event id, data)`` of each SSE message (WHATWG rules for the fields the
    server uses: several ``data`` lines join with newlines, comments and unknown fields are
    skipped, the id is kept from one message to the next, the type is ``message`` unless
    named)."""
    event_id, event, data = "", "message", list[str]()
    for raw in lines:
        line = raw.decode().rstrip("\r")
        if not line:
            if data:
                yield event, event_id, "\n".join(data)
            event, data = "message", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
        elif field == "event":
            event = value


def messages_of(lines: Iterable[bytes], media: Media) -> Iterator[JSON]:
    """Every message of a stream: log entries, and presence changes (``{"type": "presence",
    "seat", "present"}``, as NDJSON sends them)."""
    if media is Media.SSE:
        for event, _, data in sse_messages(lines):
            message = json.loads(data)
            yield {"type": PRESENCE, **message} if event == PRESENCE else message
        return
    for raw in lines:
        if raw.strip():
            yield json.loads(raw)


def entries_of(lines: Iterable[bytes], media: Media) -> Iterator[JSON]:
    """The log entries in a stream's lines, whichever format (presence changes left out)."""
    for message in messages_of(lines, media):
        if message.get("type") != PRESENCE:
            yield message


def ends_game(entry: JSON) -> bool:
    return any(event.get("type") == "game_over" for event in entry.get("events", ()))
