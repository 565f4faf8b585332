"""The client's ``events()`` against a server that answers a stream 200 with something else
than the stream asked for: a captive portal's page, a misrouted proxy's, a line that is not
JSON. No entry can come of such an answer, so each counts as a failed connection, and the
reader gives up as its retry policy says with TransportError, instead of opening it again for
ever (a page read as an event stream ends at once, with no entry) or raising the JSON
decoder's ValueError."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mexican_train_client import Client, Media, RetryPolicy, TransportError

PORTAL_PAGE = b"<html><body><h1>Sign in to the network</h1></body></html>\r\n"
#: Answers the stand-in gives before it hangs up on every request (a real failure): more than
#: the policy's tries, so a reader that does not count them as failures is seen to read past.
ANSWERS = 20
#: Gives up after this many connections in a row that brought nothing.
TRIES = RetryPolicy(attempts=3, base=1e-6, cap=1e-5, give_up_after=60)


@contextmanager
def answering(content_type: str, body: bytes) -> Iterator[tuple[str, list[int]]]:
    """A server that answers ANSWERS requests 200 with ``body`` as ``content_type``, then
    hangs up on each without an answer."""
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            served[0] += 1
            if served[0] > ANSWERS:
                self.close_connection = True
                return
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.stand_in_server
@pytest.mark.parametrize(
    ("media", "content_type", "body"),
    [
        (Media.SSE, "text/html", PORTAL_PAGE),
        (Media.NDJSON, "text/html", PORTAL_PAGE),
        (Media.NDJSON, Media.NDJSON.value, PORTAL_PAGE),
        (Media.SSE, Media.SSE.value, b"id: 2\nevent: entry\ndata: <html>\n\n"),
    ],
    ids=["page-for-sse", "page-for-ndjson", "page-as-ndjson", "page-as-sse-data"],
)
def test_an_answer_that_is_not_the_stream_counts_as_a_failed_connection(
    media: Media, content_type: str, body: bytes
) -> None:
    with (
        answering(content_type, body) as (url, served),
        Client(url, retry=TRIES) as client,
        pytest.raises(TransportError) as info,
    ):
        next(iter(client.events("somegame", after=1, media=media)))
    assert served[0] == TRIES.attempts, served
    assert "somegame" in str(info.value)
