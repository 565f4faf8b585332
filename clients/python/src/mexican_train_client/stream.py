"""Reading ``GET /events`` as a stream: the two wire formats, and resuming where a dropped
connection left off.

Both formats are parsed here rather than with an SSE library: the reader must own the
connection to resume it (``Last-Event-ID`` for SSE, ``after`` for NDJSON), and the server sends
a small, fixed subset of each format (``id``/``event``/``data`` fields, comment keep-alives,
one ``retry``; one JSON object a line, empty keep-alive lines).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Any

import requests
from urllib3.exceptions import DecodeError, ProtocolError, ReadTimeoutError

JSON = dict[str, Any]

#: The most one read of a stream takes from the socket (it takes what has arrived, up to this).
READ_BYTES = 65536


class Media(StrEnum):
    """How ``Client.events`` reads a game's log."""

    SSE = "text/event-stream"
    NDJSON = "application/x-ndjson"


#: The SSE event of a change of who is at the table (not a log entry: it has no id).
PRESENCE = "presence"


def lines_of(resp: requests.Response) -> Iterator[bytes]:
    """A streamed body's lines, each as soon as it has arrived.

    ``Response.iter_lines`` reads 512 bytes at a time, and where the body comes without chunked
    framing (close-delimited: a proxy with chunked encoding off, an HTTP/1.0 one) each read
    waits until it has them all: a short entry then waits for the minutes of keep-alives that
    follow it. ``read1`` takes what has arrived. A line the connection cut short is left out:
    the stream resumes before it. Failures are requests' own, as ``iter_lines`` raises them."""
    read1 = getattr(resp.raw, "read1", None)
    if read1 is None:  # urllib3 before 2.3
        yield from resp.iter_lines()
        return
    yield from split_lines(_reads(read1))


def _reads(read1: Any) -> Iterator[bytes]:
    """What arrives on the socket, read by read, until the body ends."""
    while True:
        try:
            data = read1(READ_BYTES, decode_content=True)
        except ProtocolError as exc:
            raise requests.exceptions.ChunkedEncodingError(exc) from exc
        except ReadTimeoutError as exc:
            raise requests.ConnectionError(exc) from exc
        except DecodeError as exc:
            raise requests.exceptions.ContentDecodingError(exc) from exc
        if not data:
            return
        yield data


#: A line's end in an event stream: CRLF, LF or CR alone (WHATWG, "Server-sent events").
_EOL = re.compile(rb"\r\n|\r|\n")


def split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of a body read in ``chunks``, without their ends (CRLF, LF or CR), wherever
    the reads cut it: a CRLF split between two reads is one end, not a CR's then an empty
    line's (which would end an SSE message early). Each byte is copied once into its line,
    whatever the length of a line and the size of the reads: a line's pieces are joined once,
    at its end, never the pending piece to each read. A last line without its end is left
    out."""
    parts: list[bytes] = []
    after_cr = False
    for data in chunks:
        start = 1 if after_cr and data.startswith(b"\n") else 0
        for end in _EOL.finditer(data, start):
            parts.append(data[start : end.start()])
            yield b"".join(parts)
            parts.clear()
            start = end.end()
        if start < len(data):
            parts.append(data[start:])
        after_cr = data.endswith(b"\r") if data else after_cr


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
