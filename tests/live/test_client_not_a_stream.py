"""The client's ``events()`` against a server that answers a stream 200 with something else
than the stream asked for: a captive portal's page, a misrouted proxy's, a line that is not
JSON. No entry can come of such an answer, so each counts as a failed connection, and the
reader gives up as its retry policy says with TransportError, instead of opening it again for
ever (a page read as an event stream ends at once, with no entry) or raising the JSON
decoder's ValueError."""

from __future__ import annotations

import pytest
from mexican_train_client import Client, Media, RetryPolicy, TransportError

from tests.bots.faulty_proxy import PORTAL_PAGE
from tests.live.helpers import stand_in_streams

#: Answers the stand-in gives before it hangs up on every request (a real failure): more than
#: the policy's tries, so a reader that does not count them as failures is seen to read past.
ANSWERS = 20
#: Gives up after this many connections in a row that brought nothing.
TRIES = RetryPolicy(attempts=3, base=1e-6, cap=1e-5, give_up_after=60)


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
        stand_in_streams(ANSWERS, content_type, body) as (url, served),
        Client(url, retry=TRIES) as client,
        pytest.raises(TransportError) as info,
    ):
        next(iter(client.events("somegame", after=1, media=media)))
    assert served[0] == TRIES.attempts, served
    assert "somegame" in str(info.value)
