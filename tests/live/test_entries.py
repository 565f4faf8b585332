"""Every reader gets every entry, once and in order, whichever way it reads and reconnects.

A game is played on two instances sharing one Redis while each reader (the public, every seat,
the host) follows it three ways at once: SSE hanging up at random and resuming with
``Last-Event-ID`` on the other instance, NDJSON resuming with ``after``, and JSON long-polls
on random instances. Each must see exactly entries ``1..version``, the same entries all three
ways, and exactly the host's entries with other seats' drawn tiles hidden.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.live.helpers import (
    NDJSON,
    SSE,
    Game,
    check_seen,
    create,
    entries,
    follow_pages,
    follow_stream,
    play_people,
)

pytestmark = pytest.mark.slow


def test_every_reader_sees_every_entry_across_formats_reconnects_and_instances(
    live_pair: tuple[str, str],
) -> None:
    bases = list(live_pair)
    rng = random.Random(9)
    game = Game(create(bases[0], players=["ann", "bo", "cy", "di"], options={"rounds": 2}))
    readers = game.readers()
    ways = ["sse", "ndjson", "pages"]
    with ThreadPoolExecutor(len(readers) * len(ways) + 1) as pool:
        follows = {
            (name, way): pool.submit(follow, bases, game.id, token, way, random.Random(n))
            for n, ((name, token), way) in enumerate(
                (reader, way) for reader in readers.items() for way in ways
            )
        }
        final = pool.submit(play_people, bases, game, rng).result(timeout=300)
        got = {key: future.result(timeout=120) for key, future in follows.items()}

    assert final["status"] == "game_over"
    version = final["version"]
    whole = entries(bases[1], game.id, game.host)["entries"]
    assert [e["version"] for e in whole] == list(range(1, version + 1))
    assert all("tile" in e for entry in whole for e in entry["events"] if e["type"] == "tile_drawn")
    for (name, way), seen in got.items():
        assert [e["version"] for e in seen] == list(range(1, version + 1)), (name, way)
        if name == "host":
            assert seen == whole, (name, way)
        else:
            check_seen(seen, whole, game.seat_of(name))


def follow(
    bases: list[str], gid: str, token: str | None, way: str, rng: random.Random
) -> list[dict[str, Any]]:
    if way == "pages":
        return follow_pages(bases, gid, token, rng)
    return follow_stream(bases, gid, token, SSE if way == "sse" else NDJSON, rng)
