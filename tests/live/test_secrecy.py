"""Property: in random full games, every entry a reader gets names only tiles it may know.

Random tables of every preset (bot seats of every level beside person seats the test plays with
random legal moves; automatic or host deals) are played to the end. Then, following the hands
from the history (each deal's position, then every drawn and played tile), no entry a seat reads
names a tile that sits in another hand right after that entry, the public's entries name no
tile that sits in any hand, and the host reads every entry whole. Every such game also replays
from its history.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from service.rules import PRESETS
from tests.live.helpers import (
    Game,
    assert_replays,
    create,
    entries,
    history,
    play_people,
)

LEVELS = ("random", "greedy", "planner")
Tile = frozenset[int]


def tiles_in(entry: dict[str, Any]) -> Iterator[Tile]:
    for event in entry["events"]:
        tile = event.get("tile")
        if tile is not None:
            yield frozenset(tile)


def hands_after_each_entry(doc: dict[str, Any]) -> dict[int, list[set[Tile]]]:
    """Version -> every seat's hand right after that entry (from the deal's position on)."""
    hands: list[set[Tile]] = []
    after: dict[int, list[set[Tile]]] = {}
    for entry in doc["entries"]:
        if "position" in entry:  # the hands after the deal, its own draws included
            hands = [{frozenset(t) for t in hand} for hand in entry["position"]["hands"]]
            after[entry["version"]] = [set(hand) for hand in hands]
            continue
        for event in entry["events"]:
            if event["type"] == "tile_drawn":
                hands[event["seat"]].add(frozenset(event["tile"]))
            elif event["type"] == "tile_played":
                hands[event["seat"]].discard(frozenset(event["tile"]))
        after[entry["version"]] = [set(hand) for hand in hands]
    return after


def assert_secrets_kept(base: str, game: Game) -> None:
    doc = history(base, game.id)
    whole = [{k: v for k, v in e.items() if k != "position"} for e in doc["entries"]]
    hands = hands_after_each_entry(doc)
    for name, token in game.readers().items():
        seen = entries(base, game.id, token)["entries"]
        assert [e["version"] for e in seen] == [e["version"] for e in whole], name
        if name == "host":
            assert seen == whole
            continue
        me = game.seat_of(name)
        for entry in seen:
            others = [h for seat, h in enumerate(hands[entry["version"]]) if seat != me]
            hidden = set().union(*others)
            leaked = [sorted(tile) for tile in tiles_in(entry) if tile in hidden]
            assert not leaked, (name, entry)
    drawn = [e for entry in whole for e in entry["events"] if e["type"] == "tile_drawn"]
    assert all("tile" in e for e in drawn), "the host sees every drawn tile"


def table(draw: st.DrawFn) -> dict[str, Any]:
    preset = draw(st.sampled_from(PRESETS))
    n = draw(st.integers(2, 5))
    kinds = draw(st.lists(st.sampled_from((None, *LEVELS)), min_size=n, max_size=n))
    players: list[Any] = [
        {"name": f"p{seat}"} if kind is None else {"name": f"b{seat}", "bot": kind}
        for seat, kind in enumerate(kinds)
    ]
    return {
        "players": players,
        "preset": preset,
        "options": {"rounds": draw(st.integers(1, 3))},
        "seed": draw(st.integers(0, 2**53)),
        "auto_deal": draw(st.booleans()),
    }


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # each example is a whole game: no shrinking
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=st.composite(table)(), moves_seed=st.integers(0, 2**32))
def test_no_reader_ever_sees_a_tile_it_may_not(
    live: str, body: dict[str, Any], moves_seed: int
) -> None:
    game = Game(create(live, **body))
    final = play_people([live], game, random.Random(moves_seed))
    assert final["status"] == "game_over"
    assert_secrets_kept(live, game)
    assert_replays(live, game.id)


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
def test_full_length_games_keep_secrets_and_replay(live: str, preset: str) -> None:
    """Every round the preset has: one person, the others bots, the table dealing itself."""
    players: list[Any] = [
        "ann",
        *({"name": f"b{i}", "bot": level} for i, level in enumerate(LEVELS)),
    ]
    game = Game(create(live, players=players, preset=preset, auto_deal=True))
    final = play_people([live], game, random.Random(preset))
    assert final["status"] == "game_over"
    assert final["rounds"] >= 7
    assert_secrets_kept(live, game)
    assert assert_replays(live, game.id) > 0
