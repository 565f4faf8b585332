"""A stream of a finished game ends once the reader has every entry, however it resumes: a
reader behind gets what it lacks and the stream closes; a reader that holds the last entry
(``Last-Event-ID`` or ``after`` at it) gets ``204 No Content``, the answer that tells a
browser's EventSource to stop reconnecting (a 200 with no entry made it come back every second
until the game expired). An unknown game stays 404."""

from __future__ import annotations

import random
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from mexican_train_client import Client, Media

from tests.live.helpers import NDJSON, SSE, Game, auth, create, play_people

ROOT = Path(__file__).resolve().parents[2]

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
    for resume in (final - 2, final - 1, final, final + 3):
        headers = {"Accept": media}
        if media == SSE:
            headers["Last-Event-ID"] = str(resume)
        params = {} if media == SSE else {"after": resume}
        with requests.get(
            url, headers=headers, params=params, stream=True, timeout=(5, 15)
        ) as response:
            body, ended = read_until_end(response)
        if resume == final:
            assert (response.status_code, body) == (204, b""), (media, resume, body)
            continue
        if resume > final:  # entries the stored log does not hold: the reader must reload
            assert response.status_code == 409, (media, resume, body)
            continue
        assert response.status_code == 200, body
        assert ended, (media, resume, body)
        entries = body.count(b"event: entry") if media == SSE else len(body.split())
        assert entries == final - resume, (media, resume, body)
    gone = requests.get(
        f"{live}/api/v1/games/nosuchgame00/events", headers={"Accept": media}, timeout=10
    )
    assert gone.status_code == 404


@pytest.mark.parametrize("media", [Media.SSE, Media.NDJSON])
def test_the_python_client_stops_at_the_204(live: str, media: Media) -> None:
    """Resuming at a finished game's last entry, the client's ``events`` ends after one request
    (before the 204 it reconnected until its retries ran out and raised)."""
    game = Game(create(live, players=["a", "b"], options={"rounds": 1}))
    final = play_people([live], game, random.Random(8))["version"]
    with Client(live) as client:
        assert list(client.events(game.id, after=final, media=media)) == []
        assert client.requests == 1


def test_the_follow_example_of_the_docs_reads_every_entry_once(live: str) -> None:
    """docs/live.md's ``follow``, run as written, while another seat's presence comes and goes
    on its stream."""
    text = (ROOT / "docs" / "live.md").read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "def follow(" in b)
    example: dict[str, Any] = {}
    exec(compile(code, "docs/live.md", "exec"), example)
    game = Game(create(live, players=["ann", "bo"], options={"rounds": 1, "set": 6}))
    seen: list[dict[str, Any]] = []
    reader = threading.Thread(
        target=lambda: seen.extend(example["follow"](live, game.id, game.tokens[0])), daemon=True
    )
    reader.start()
    time.sleep(1.0)  # ann's stream is open: a change of presence from now on reaches it
    requests.get(f"{live}/api/v1/games/{game.id}", headers=auth(game.tokens[1]), timeout=10)
    time.sleep(2.0)  # bo is at the table now: the hub's next look tells ann's stream
    final = play_people([live], game, random.Random(5))
    reader.join(30)
    assert not reader.is_alive(), "follow() did not end after the game's last entry"
    assert [e["version"] for e in seen] == list(range(1, final["version"] + 1))
