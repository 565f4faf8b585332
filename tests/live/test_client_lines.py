"""The Python client's line reader on a stream cut into reads at every position: lines end at
CRLF, LF or a lone CR, as the HTML standard's event streams allow, and a CRLF split between
two reads is one line end, not two (an empty line ends an SSE message: a second one would
dispatch it early, or an empty one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest
import requests
from mexican_train_client.stream import Media, lines_of, messages_of

#: Three messages, each with its own line ends; a comment (a keep-alive) and a retry field.
SSE = (
    b"retry: 1000\r\n\r\n"
    b'id: 1\r\ndata: {"version": 1,\r\ndata:  "n": "a"}\r\n\r\n'
    b": keep-alive\r\r"
    b'id: 2\rdata: {"version": 2}\r\r'
    b'id: 3\nevent: presence\ndata: {"seat": 0, "present": true}\n\n'
)
EXPECTED = [
    {"version": 1, "n": "a"},
    {"version": 2},
    {"type": "presence", "seat": 0, "present": True},
]
NDJSON = b'{"version": 1}\r\n\r\n{"version": 2}\n{"version": 3}\r\n'


class Reads:
    """A body's reads as the socket gave them (what ``lines_of`` takes from ``resp.raw``)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = iter(chunks)

    def read1(self, _amount: int, decode_content: bool = True) -> bytes:
        return next(self.chunks, b"")


def response(chunks: list[bytes]) -> requests.Response:
    resp = requests.Response()
    resp.raw = cast(Any, Reads(chunks))
    return resp


def cuts(body: bytes) -> Iterator[list[bytes]]:
    """The body whole, cut once at every position, twice at every pair, and byte by byte."""
    yield [body]
    for i in range(1, len(body)):
        yield [body[:i], body[i:]]
        for j in range(i + 1, len(body)):
            yield [body[:i], body[i:j], body[j:]]
    yield [body[i : i + 1] for i in range(len(body))]


def test_sse_lines_end_at_crlf_lf_or_cr_wherever_the_reads_cut() -> None:
    for chunks in cuts(SSE):
        got = list(messages_of(lines_of(response(chunks)), Media.SSE))
        assert got == EXPECTED, chunks


def test_ndjson_lines_wherever_the_reads_cut() -> None:
    for chunks in cuts(NDJSON):
        lines = list(lines_of(response(chunks)))
        assert lines == [b'{"version": 1}', b"", b'{"version": 2}', b'{"version": 3}'], chunks


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_a_long_line_comes_whole_and_a_cut_last_line_is_left_out(size: int) -> None:
    line = b"data: " + b"x" * 100_000
    body = line + b"\r\n\r\ndata: cut"
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    assert list(lines_of(response(chunks))) == [line, b""]
