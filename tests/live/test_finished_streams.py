"""A stream of a finished game ends once the reader has every entry, however it resumes: with
``Last-Event-ID`` (or ``after``) at the last entry it ends at once instead of sending
keep-alives until the reader gives up (which held a connection for nothing, and a reconnecting
reader kept coming back until the game expired)."""

from __future__ import annotations

import random
import time

import pytest
import requests

from tests.live.helpers import NDJSON, SSE, Game, create, play_people

# Well under the keep-alive period (10 s): an open stream sends nothing within it.
ENDS_WITHIN_SECONDS = 5.0


def read_until_end(response: requests.Response) -> tuple[bytes, bool]:
    """The body read so far and whether the server ended it within the bound."""
    body = b""
    deadline = time.monotonic() + ENDS_WITHIN_SECONDS
    for chunk in response.iter_content(None):
        body += chunk
        if time.monotonic() > deadline:
            return body, False
    return body, time.monotonic() <= deadline


@pytest.mark.parametrize("media", [SSE, NDJSON])
def test_resuming_at_the_last_entry_of_a_finished_game_ends_the_stream(
    live: str, media: str
) -> None:
    game = Game(create(live, players=["a", "b"], options={"rounds": 1}))
    final = play_people([live], game, random.Random(7))["version"]
    url = f"{live}/api/v1/games/{game.id}/events"
    for resume in (final - 1, final, final + 3):
        headers = {"Accept": media}
        if media == SSE:
            headers["Last-Event-ID"] = str(resume)
        params = {} if media == SSE else {"after": resume}
        with requests.get(
            url, headers=headers, params=params, stream=True, timeout=(5, 15)
        ) as response:
            assert response.status_code == 200, response.text
            body, ended = read_until_end(response)
        assert ended, (media, resume, body)
        entries = body.count(b"event: entry") if media == SSE else len(body.split())
        assert entries == max(final - resume, 0), (media, resume, body)
