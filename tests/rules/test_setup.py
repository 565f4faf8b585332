"""docs/rules.md sections 1-4 and 10: tiles, rounds and engines, deal tables, the deal, options."""

from __future__ import annotations

from typing import Any

import pytest

from service.rules import (
    FORMAT,
    IllegalMove,
    InvalidMove,
    InvalidRules,
    Move,
    Tile,
    apply,
    deal,
    import_position,
    legal_moves,
    new_game,
    resolve_rules,
)
from service.rules.options import OPTION_NAMES, set_size
from service.rules.rng import SplitMix64
from service.rules.tiles import full_set

# ---------------------------------------------------------------- section 1: tiles and sets


@pytest.mark.parametrize(("n", "count"), [(6, 28), (9, 55), (12, 91), (15, 136), (18, 190)])
def test_s1_set_sizes(n: int, count: int) -> None:
    tiles = full_set(n)
    assert len(tiles) == count == set_size(n)
    assert len(set(tiles)) == count
    assert all(0 <= t.a <= t.b <= n for t in tiles)


def test_s1_tiles_are_unordered_and_doubles_have_equal_ends() -> None:
    assert Tile.of(12, 5) == Tile.of(5, 12) == Tile(5, 12)
    assert Tile.of(7, 7).is_double and not Tile.of(3, 7).is_double
    assert Tile.of(3, 7).pips == 10
    assert Tile(7, 3).normal == Tile(3, 7)
    assert Tile(3, 7).oriented(7) == Tile(7, 3)


def test_s1_move_json_round_trip_and_either_tile_order() -> None:
    move = Move.from_json({"action": "play", "tile": [12, 5], "train": "mexican"})
    assert move.tile == Tile(5, 12)
    assert move.to_json() == {"action": "play", "tile": [5, 12], "train": "mexican"}
    for action in ("draw", "mark", "end_turn"):
        assert Move.from_json({"action": action}).to_json() == {"action": action}


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        "play",
        {},
        {"action": "fly"},
        {"action": "play"},
        {"action": "play", "tile": [1, 2]},
        {"action": "play", "tile": [1], "train": "0"},
        {"action": "play", "tile": [1, 2, 3], "train": "0"},
        {"action": "play", "tile": [1, True], "train": "0"},
        {"action": "play", "tile": [1, 2.0], "train": "0"},
        {"action": "play", "tile": [-1, 2], "train": "0"},
        {"action": "play", "tile": [1, 99], "train": "0"},
        {"action": "play", "tile": "1,2", "train": "0"},
        {"action": "play", "tile": [1, 2], "train": 0},
        {"action": "play", "tile": [1, 2], "train": ""},
        {"action": "draw", "tile": [1, 2]},
        {"action": "play", "tile": [1, 2], "train": "0", "extra": 1},
    ],
)
def test_s1_malformed_moves_are_invalid_move(bad: Any) -> None:
    with pytest.raises(InvalidMove) as err:
        Move.from_json(bad)
    assert err.value.code == "invalid_move"
    assert str(err.value)


def test_s1_apply_refuses_tiles_outside_the_set_and_unknown_trains() -> None:
    state = new_game(["a", "b", "c"], seed=3)  # double-9
    deal(state)
    seat = state.turn
    assert seat is not None
    with pytest.raises(InvalidMove) as err:
        apply(state, seat, Move.from_json({"action": "play", "tile": [9, 12], "train": "0"}))
    assert err.value.code == "tile_not_in_set"
    for train in ("7", "3", "-1", "01", "Mexican", "x"):
        with pytest.raises(InvalidMove) as err:
            apply(state, seat, Move.from_json({"action": "play", "tile": [9, 9], "train": train}))
        assert err.value.code == "unknown_train"


# ---------------------------------------------------------------- section 3: deal tables

TABLES = {
    "standard": {2: (9, 15), 3: (9, 15), 4: (12, 15), 5: (12, 12), 6: (12, 12), 7: (12, 11),
                 8: (12, 11), 9: (15, 11), 12: (15, 11), 13: (18, 11), 14: (18, 11)},
    "tournament": {2: (9, 8), 3: (9, 8), 4: (12, 12), 6: (12, 12), 7: (12, 10), 8: (12, 10),
                   9: (15, 11), 12: (15, 11), 13: (18, 11), 14: (18, 11)},
    "classic": {2: (12, 12), 6: (12, 12), 7: (12, 10), 8: (12, 10), 9: (12, 8), 10: (12, 8)},
}  # fmt: skip


@pytest.mark.parametrize(
    ("preset", "n", "expected"),
    [(p, n, e) for p, rows in TABLES.items() for n, e in rows.items()],
)
def test_s3_deal_tables(preset: str, n: int, expected: tuple[int, int]) -> None:
    rules = resolve_rules(preset, None, n)
    assert (rules.set, rules.hand_size) == expected
    assert rules.rounds == rules.set + 1
    state = new_game([f"p{i}" for i in range(n)], preset, seed=n)
    deal(state)
    total = set_size(rules.set)
    in_hands = sum(len(h) for h in state.hands)
    assert len(state.boneyard) + in_hands + 1 == total
    if rules.engine_source == "set_aside":
        assert all(len(h) == expected[1] for h in state.hands)


def test_s3_standard_double_six_row() -> None:
    for n in (2, 3):
        assert resolve_rules("standard", {"set": 6}, n).hand_size == 7
    # The table's 4-player row would deal all 28 tiles: the dealability rule refuses it.
    with pytest.raises(InvalidRules, match="cannot be dealt"):
        resolve_rules("standard", {"set": 6}, 4)
    assert resolve_rules("standard", {"set": 6, "hand_size": 6}, 4).hand_size == 6
    with pytest.raises(InvalidRules, match="hand_size"):
        resolve_rules("standard", {"set": 6}, 5)
    assert resolve_rules("standard", {"set": 6, "hand_size": 4}, 5).hand_size == 4


def test_s3_set_override_without_table_row_needs_hand_size() -> None:
    with pytest.raises(InvalidRules, match="hand_size must be given"):
        resolve_rules("standard", {"set": 12}, 2)
    assert resolve_rules("standard", {"set": 12}, 4).hand_size == 15  # the 4-player row
    assert resolve_rules("standard", {"set": 12, "hand_size": 20}, 2).hand_size == 20
    assert resolve_rules("tournament", {"set": 15}, 10).hand_size == 11


def test_s3_undealable_games_are_refused() -> None:
    # double-6 = 28 tiles: 4 x 7 = 28 leaves nothing besides the engine
    with pytest.raises(InvalidRules, match="hand_size"):
        resolve_rules("standard", {"set": 6, "hand_size": 7}, 4)
    # 26 dealt + engine leaves exactly one tile: allowed; 27 is not
    assert resolve_rules("standard", {"set": 6, "hand_size": 13}, 2).hand_size == 13
    with pytest.raises(InvalidRules):
        resolve_rules("standard", {"set": 6, "hand_size": 14}, 2)
    with pytest.raises(InvalidRules, match="cannot be dealt"):  # 3 x 9 = 27: the engine alone
        resolve_rules("standard", {"set": 6, "hand_size": 9}, 3)
    with pytest.raises(InvalidRules):
        resolve_rules("standard", {"set": 6}, 14)  # no row, and the message names hand_size


def test_s3_smallest_dealable_game_plays_to_the_end() -> None:
    state = new_game(["a", "b"], "standard", {"set": 6, "hand_size": 13}, seed=5)
    deal(state)
    assert len(state.boneyard) + sum(map(len, state.hands)) == 27


# ---------------------------------------------------------------- presets and options


def test_s3_presets_resolve_to_their_documented_options() -> None:
    std = resolve_rules("standard", None, 4)
    assert (std.engine_source, std.opening, std.opening_no_play, std.opening_out_waits,
            std.mexican_needs_own_blocked, std.double_follow, std.chicken_foot,
            std.double_blank_points) == ("from_hand", "chain", "mark", True, False, "any",
                                         False, 50)  # fmt: skip
    tour = resolve_rules("tournament", None, 4)
    assert (tour.engine_source, tour.opening, tour.opening_no_play, tour.opening_out_waits,
            tour.mexican_needs_own_blocked, tour.double_follow, tour.chicken_foot,
            tour.double_blank_points) == ("set_aside", "chain", "draw_one", False, True, "any",
                                          False, 0)  # fmt: skip
    cls = resolve_rules("classic", None, 4)
    assert (cls.set, cls.engine_source, cls.opening_no_play, cls.opening_out_waits,
            cls.mexican_needs_own_blocked, cls.double_blank_points) == (
        12, "from_hand", "draw_until", False, False, 0)  # fmt: skip


@pytest.mark.parametrize("preset", ["standard", "tournament", "classic"])
def test_s3_rules_to_json_resolves_to_the_same_rules(preset: str) -> None:
    for n, options in [(4, {}), (3, {"rounds": 2, "chicken_foot": True}),
                       (2, {"hand_size": 5, "double_follow": "satisfy"})]:  # fmt: skip
        rules = resolve_rules(preset, options, n)
        doc = rules.to_json()
        assert doc["preset"] == preset
        assert set(doc["options"]) == set(OPTION_NAMES)
        assert resolve_rules(doc["preset"], doc["options"], n) == rules


def test_s3_every_option_can_be_overridden() -> None:
    options = {
        "set": 15, "hand_size": 9, "rounds": 4, "engine_source": "set_aside",
        "opening": "single", "opening_no_play": "draw_until", "opening_out_waits": False,
        "mexican_needs_own_blocked": True, "double_follow": "satisfy", "chicken_foot": True,
        "double_blank_points": 25,
    }  # fmt: skip
    rules = resolve_rules("standard", options, 5)
    assert rules.to_json()["options"] == options


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"colour": "red"}, "colour"),
        ({"set": 10}, "set"),
        ({"set": "12"}, "set"),
        ({"set": True}, "set"),
        ({"hand_size": 0}, "hand_size"),
        ({"hand_size": True}, "hand_size"),
        ({"hand_size": 7.0}, "hand_size"),
        ({"rounds": 0}, "rounds"),
        ({"rounds": 11}, "rounds"),  # double-9 for 3 players: at most 10 rounds
        ({"rounds": False}, "rounds"),
        ({"engine_source": "hand"}, "engine_source"),
        ({"opening": "double"}, "opening"),
        ({"opening_no_play": "pass"}, "opening_no_play"),
        ({"opening_out_waits": 1}, "opening_out_waits"),
        ({"mexican_needs_own_blocked": "yes"}, "mexican_needs_own_blocked"),
        ({"double_follow": "none"}, "double_follow"),
        ({"chicken_foot": None}, "chicken_foot"),
        ({"double_blank_points": -1}, "double_blank_points"),
        ({"double_blank_points": 1001}, "double_blank_points"),
        ({"double_blank_points": True}, "double_blank_points"),
    ],
)
def test_s3_bad_options_are_refused_naming_the_option(options: dict[str, Any], names: str) -> None:
    with pytest.raises(InvalidRules, match=names) as err:
        resolve_rules("standard", options, 3)
    assert err.value.code == "invalid_rules"


def test_s3_presets_and_player_counts() -> None:
    with pytest.raises(InvalidRules, match="preset"):
        resolve_rules("fast", None, 4)
    with pytest.raises(InvalidRules, match="classic"):
        resolve_rules("classic", {"set": 9}, 4)
    assert resolve_rules("classic", {"set": 12}, 4).set == 12
    with pytest.raises(InvalidRules):
        resolve_rules("classic", None, 11)
    with pytest.raises(InvalidRules):
        resolve_rules("standard", None, 15)
    with pytest.raises(InvalidRules):
        resolve_rules("standard", None, 1)
    with pytest.raises(InvalidRules):
        new_game(["solo"])
    with pytest.raises(InvalidRules):
        new_game(["a", ""])
    with pytest.raises(InvalidRules):
        new_game("ab")
    with pytest.raises(InvalidRules):
        new_game(["a", "b"], options=["set"])  # type: ignore[arg-type]
    for seed in (-1, 2**63, 1.5, True, "7"):
        with pytest.raises(InvalidRules, match="seed"):
            new_game(["a", "b"], seed=seed)  # type: ignore[arg-type]


# ---------------------------------------------------------------- section 2: rounds, engines


def test_s2_rounds_count_down_from_the_set_and_option_rounds_stops_early() -> None:
    from tests.rules.helpers import play_random_game

    state, _ = play_random_game("standard", 3, 11, {"rounds": 4})
    assert state.status == "game_over"
    assert all(len(s) == 4 for s in state.scores)
    state, _ = play_random_game("standard", 2, 12, {"set": 6})
    assert state.round == 7 and all(len(s) == 7 for s in state.scores)

    state = new_game(["a", "b", "c"], seed=1)
    engines = []
    for _ in range(state.rules.rounds):
        events = deal(state)
        engines.append(events[0]["engine"])
        with pytest.raises(IllegalMove) as err:
            deal(state)
        assert err.value.code == "round_in_progress"
        while state.status == "in_round":
            assert state.turn is not None
            apply(state, state.turn, legal_moves(state, state.turn)[0])
    assert engines == list(range(9, -1, -1))
    assert state.status == "game_over"
    with pytest.raises(IllegalMove) as err:
        deal(state)
    assert err.value.code == "game_over"


# ---------------------------------------------------------------- section 4: starting a round


def test_s4_deterministic_shuffle_golden_values() -> None:
    # Reference SplitMix64 outputs for state 0 (the published test vector).
    rng = SplitMix64(0)
    assert [rng.next(), rng.next()] == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4]
    rng = SplitMix64.for_round(12345, 1)
    assert [rng.below(10) for _ in range(8)] == [7, 9, 0, 5, 1, 0, 1, 6]
    state = new_game(["a", "b", "c", "d"], seed=12345)
    deal(state)
    assert [t.to_json() for t in state.hands[0]] == [
        [0, 0], [0, 4], [0, 12], [1, 2], [2, 4], [2, 8], [2, 11], [3, 3], [3, 5], [4, 5],
        [4, 9], [4, 12], [6, 6], [6, 12], [9, 12],
    ]  # fmt: skip
    assert state.starter == 3


def test_s4_same_seed_same_game_and_random_seed_is_stored() -> None:
    a = new_game(["a", "b", "c"], seed=99)
    b = new_game(["a", "b", "c"], seed=99)
    assert deal(a) == deal(b) and a.hands == b.hands and a.boneyard == b.boneyard
    c = new_game(["a", "b", "c"], seed=100)
    deal(c)
    assert c.hands != a.hands
    # Chosen seeds stay exact in JavaScript (2**53), so any client round-trips a position.
    assert all(0 <= new_game(["a", "b", "c"]).seed < 2**53 for _ in range(200))


def _first_seed(preset: str, n: int, predicate: Any) -> tuple[int, Any, list[Any]]:
    for seed in range(2000):
        state = new_game([f"p{i}" for i in range(n)], preset, seed=seed)
        events = deal(state)
        if predicate(state, events):
            return seed, state, events
    raise AssertionError("no seed found")


def test_s4_from_hand_holder_of_the_engine_starts() -> None:
    _, state, events = _first_seed(
        "standard", 4, lambda s, ev: not any(e["type"] == "tile_drawn" for e in ev)
    )
    holder = events[1]["seat"]
    assert events[0] == {"type": "round_started", "round": 1, "engine": 12, "starter": holder}
    assert events[1] == {"type": "engine_placed", "seat": holder, "tile": [12, 12]}
    assert state.turn == state.starter == holder
    assert len(state.hands[holder]) == 14
    assert all(len(h) == 15 for s, h in enumerate(state.hands) if s != holder)
    assert Tile(12, 12) not in state.boneyard


def test_s4_from_hand_players_draw_in_turn_until_the_engine_appears() -> None:
    _, state, events = _first_seed(
        "standard", 2, lambda s, ev: sum(e["type"] == "tile_drawn" for e in ev) >= 3
    )
    draws = [e for e in events if e["type"] == "tile_drawn"]
    assert [e["seat"] for e in draws] == [i % 2 for i in range(len(draws))]  # from seat 0
    assert draws[-1]["tile"] == [9, 9]
    starter = draws[-1]["seat"]
    assert events[0]["starter"] == starter == state.turn
    assert events[-1] == {"type": "engine_placed", "seat": starter, "tile": [9, 9]}
    for seat in (0, 1):
        drawn = sum(1 for e in draws if e["seat"] == seat) - (seat == starter)
        assert len(state.hands[seat]) == 15 + drawn  # drawn tiles stay in the hand
        for e in draws[:-1]:
            if e["seat"] == seat:
                assert Tile.of(*e["tile"]) in state.hands[seat]


def test_s4_from_hand_later_rounds_search_from_the_seat_after_the_previous_starter() -> None:
    found = 0
    for seed in range(400):
        state = new_game(["a", "b", "c"], seed=seed, options={"rounds": 2})
        deal(state)
        first = state.starter
        while state.status == "in_round":
            assert state.turn is not None
            apply(state, state.turn, legal_moves(state, state.turn)[0])
        events = deal(state)
        draws = [e for e in events if e["type"] == "tile_drawn"]
        if draws:
            assert first is not None
            assert draws[0]["seat"] == (first + 1) % 3
            assert draws[-1]["tile"] == [8, 8]
            found += 1
    assert found >= 3


def test_s4_round_one_engine_search_starts_at_seat_0_even_with_a_stored_starter() -> None:
    # Only later rounds start the search after the previous starter; a waiting_deal position
    # may carry a starter, and round 1 still starts at seat 0.
    found = 0
    for seed in range(60):
        doc = {
            "format": FORMAT, "players": ["a", "b", "c"],
            "rules": {"preset": "standard", "options": {}}, "status": "waiting_deal",
            "round": 0, "engine": None, "turn": None, "opened": [False] * 3,
            "hands": [[], [], []], "boneyard": [], "trains": {}, "marked": [False] * 3,
            "open_doubles": [], "scores": [[], [], []], "starter": 1, "seed": seed,
        }  # fmt: skip
        state = import_position(doc)
        draws = [e for e in deal(state) if e["type"] == "tile_drawn"]
        if draws:
            assert draws[0]["seat"] == 0
            found += 1
    assert found


def test_s4_set_aside_highest_draw_starts_and_tiles_go_back() -> None:
    seen_tie = False
    for seed in range(60):
        state = new_game(["a", "b", "c", "d"], "tournament", seed=seed)
        events = deal(state)
        assert events[1] == {"type": "engine_placed", "seat": None, "tile": [12, 12]}
        assert all(len(h) == 12 for h in state.hands)
        assert Tile(12, 12) not in state.boneyard
        assert len(state.boneyard) == 91 - 1 - 48
        draws = [e for e in events if e["type"] == "starter_draw"]
        # Replay the tie-break rounds from the events.
        contenders = [0, 1, 2, 3]
        i = 0
        while True:
            results = {}
            for s in contenders:
                assert draws[i]["seat"] == s
                results[s] = sum(draws[i]["tile"])
                i += 1
            top = max(results.values())
            contenders = [s for s in contenders if results[s] == top]
            if len(contenders) == 1:
                break
            seen_tie = True
        assert i == len(draws)
        assert state.starter == state.turn == contenders[0] == events[0]["starter"]
        drawn = {Tile.of(*e["tile"]) for e in draws}
        assert drawn <= set(state.boneyard)  # returned to the boneyard
    assert seen_tie


def test_s4_set_aside_when_the_boneyard_runs_dry() -> None:
    # double-6, 5 players x 5 tiles: the boneyard holds 2 tiles, so seats 2-4 cannot draw.
    options = {"set": 6, "hand_size": 5}
    tied = False
    for seed in range(300):
        state = new_game([f"p{i}" for i in range(5)], "tournament", options, seed=seed)
        events = deal(state)
        draws = [e for e in events if e["type"] == "starter_draw"]
        assert [e["seat"] for e in draws] == [0, 1]
        first, second = (sum(e["tile"]) for e in draws)
        if first == second:
            tied = True
            assert state.starter == 0  # the tie cannot be broken: the lowest tied seat starts
        else:
            assert state.starter == (0 if first > second else 1)
        assert len(state.boneyard) == 2
    assert tied


def test_s4_engine_search_draws_are_private_starter_draws_public() -> None:
    from service.rules import visible_events

    _, _, events = _first_seed(
        "standard", 2, lambda s, ev: sum(e["type"] == "tile_drawn" for e in ev) >= 2
    )
    public = visible_events(events, None)
    assert all("tile" not in e for e in public if e["type"] == "tile_drawn")
    own = visible_events(events, 0)
    assert all("tile" in e for e in own if e["type"] == "tile_drawn" and e["seat"] == 0)
    assert any(e["type"] == "engine_placed" and e["tile"] == [9, 9] for e in public)
    state = new_game(["a", "b", "c"], "tournament", seed=3)
    public = visible_events(deal(state), None)
    assert all("tile" in e for e in public if e["type"] == "starter_draw")


@pytest.mark.parametrize("waits", [True, False])
def test_s4_a_starter_dealt_the_engine_as_their_only_tile_has_gone_out(waits: bool) -> None:
    # The engine's decision (section 11, item 9): placing the engine empties a one-tile hand,
    # which counts as going out in the opening turn, so opening_out_waits says when it ends.
    options = {"set": 6, "hand_size": 1, "opening_out_waits": waits}
    for seed in range(200):
        state = new_game(["a", "b", "c"], "standard", options, seed=seed)
        events = deal(state)
        if not any(e["type"] == "tile_drawn" for e in events):
            break  # the engine was dealt: its holder starts with an empty hand
    starter = state.starter
    assert starter is not None and state.hands[starter] == []
    if waits:
        nxt = (starter + 1) % 3
        assert events[-1] == {"type": "turn_passed", "seat": nxt}
        assert state.status == "in_round" and state.turn == nxt and state.opened[starter]
    else:
        over = events[-1]
        assert (over["type"], over["reason"], over["out"]) == ("round_over", "out", [starter])
        assert state.status == "round_over" and over["scores"][starter] == 0


def test_s4_set_aside_turned_up_tiles_are_shuffled_back_into_the_boneyard() -> None:
    # Rule 4: the turned-up tiles go back into the boneyard, which is reshuffled: they are
    # neither all put back on top nor all under the rest, in the order they were turned up.
    for seed in range(20):
        state = new_game(["a", "b", "c", "d"], "tournament", seed=seed)
        turned_up = [Tile.of(*e["tile"]) for e in deal(state) if e["type"] == "starter_draw"]
        k = len(turned_up)
        assert k >= 4 and set(turned_up) <= set(state.boneyard)
        assert state.boneyard[:k] != turned_up and state.boneyard[-k:] != turned_up
