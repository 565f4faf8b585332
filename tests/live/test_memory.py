"""A finished 13-round, 4-player ``standard`` game with its whole log fits in 16 KB of Redis."""

from __future__ import annotations

import random
from datetime import datetime

import pytest
import redis

from service.rules.log import TICK_MS
from tests.live.helpers import Game, create, history, play_people

LIMIT_BYTES = 16 * 1024


def varint_length(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def ms(at: str) -> int:
    return int(datetime.fromisoformat(at).timestamp() * 1000)


@pytest.mark.slow
def test_a_finished_standard_game_with_its_log_takes_at_most_16_kb(
    live: str, redis_client: redis.Redis
) -> None:
    """Four people play every round through HTTP; MEMORY USAGE over every key of the game.

    A record keeps its time as a varint of 10 ms ticks since the creation: this game lasts a
    minute or so, a real one hours. The bound must hold for a game of up to 5.8 hours, so each
    record is counted with a 3-byte time."""
    # One fixed game (seed 16, like the move chooser): the length of a game, and so its size,
    # varies with the deal, and a bound must not pass or fail by the draw of a random deal.
    game = Game(create(live, players=["ann", "bo", "cy", "di"], seed=16))
    final = play_people([live], game, random.Random(16))
    assert final["status"] == "game_over"
    assert final["rounds"] == 13
    # The game and its log; answers kept for the players' Idempotency-Keys (24 h, measured by
    # make bench-api) are the clients' choice, not the game's.
    keys = sorted(k for k in redis_client.scan_iter(match=f"*{{{game.id}}}*") if b":idem:" not in k)
    sizes = {key.decode(): int(redis_client.memory_usage(key, samples=0) or 0) for key in keys}
    log = history(live, game.id)["entries"]
    assert len(log) == final["version"] == redis_client.llen(f"mt:{{{game.id}}}:log")
    created = ms(log[0]["at"])
    longer = sum(max(0, 3 - varint_length((ms(e["at"]) - created) // TICK_MS)) for e in log[1:])
    used = sum(sizes.values())
    print(
        f"\nfinished standard game, {len(log)} entries: {sizes} = {used} bytes; "
        f"{used + longer} with 3-byte times"
    )
    assert used + longer <= LIMIT_BYTES
