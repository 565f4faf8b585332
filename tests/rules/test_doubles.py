"""docs/rules.md section 7: doubles (follow obligation, open doubles, chicken foot, going out)."""

from __future__ import annotations

from typing import Any

import pytest

from service.rules import IllegalMove, Move, apply, check_invariants, game_view, legal_moves
from tests.rules.helpers import actions, load, play, plays

TRAINS = {"0": [[9, 4]], "1": [[9, 3]], "2": [[9, 2]]}


def test_s7_follow_any_goes_anywhere_and_leaves_the_double_open() -> None:
    state = load(
        hands=[[[4, 4], [4, 6], [7, 9], [1, 2]], [[4, 8], [3, 5]], [[0, 0]]], trains=TRAINS
    )
    events = apply(state, 0, play([4, 4], "0"))
    assert events[-1] == {"type": "double_opened", "seat": 0, "train": "0", "tile": [4, 4]}
    assert state.turn == 0 and game_view(state, 0)["turn_state"]["must_follow"] == "0"
    assert plays(state) == {((4, 6), "0"), ((7, 9), "mexican")}
    apply(state, 0, play([7, 9], "mexican"))
    assert state.turn == 1 and game_view(state, None)["open_doubles"] == ["0"]
    # the next player must satisfy it, on an unmarked train, before anything else
    assert plays(state) == {((4, 8), "0")}
    events = apply(state, 1, play([4, 8], "0"))
    assert {"type": "double_satisfied", "seat": 1, "train": "0"} in events
    assert state.open_doubles == []


def test_s7_follow_satisfy_must_go_on_the_double() -> None:
    state = load(
        options={"double_follow": "satisfy"},
        hands=[[[4, 4], [4, 6], [7, 9], [1, 2]], [[4, 8], [3, 5]], [[0, 0]]],
        trains=TRAINS,
    )
    apply(state, 0, play([4, 4], "0"))
    assert plays(state) == {((4, 6), "0")}
    with pytest.raises(IllegalMove, match="follow the double"):
        apply(state, 0, play([7, 9], "mexican"))


def test_s7_cannot_follow_draw_once_then_mark_and_the_duty_passes_on() -> None:
    state = load(
        hands=[[[4, 4], [1, 2]], [[4, 8], [3, 5]], [[0, 0]]], trains=TRAINS, boneyard=[[5, 6]]
    )
    apply(state, 0, play([4, 4], "0"))
    assert legal_moves(state, 0) == [Move("draw")]
    apply(state, 0, Move("draw"))
    assert legal_moves(state, 0) == [Move("mark")]
    events = apply(state, 0, Move("mark"))
    assert events[0] == {"type": "marker_placed", "seat": 0}
    assert state.turn == 1 and plays(state) == {((4, 8), "0")}


def test_s7_cannot_follow_drawn_tile_follows() -> None:
    state = load(
        hands=[[[4, 4], [1, 2]], [[4, 8], [3, 5]], [[0, 0]]], trains=TRAINS, boneyard=[[4, 6]]
    )
    apply(state, 0, play([4, 4], "0"))
    apply(state, 0, Move("draw"))
    assert plays(state) == {((4, 6), "0")} and actions(state) == {"play"}


def test_s7_each_double_brings_its_own_draw() -> None:
    state = load(
        hands=[[[1, 2]], [[4, 8], [3, 5]], [[0, 0]]], trains=TRAINS, boneyard=[[4, 4], [1, 3]]
    )
    apply(state, 0, Move("draw"))
    assert plays(state) == {((4, 4), "0")}
    apply(state, 0, play([4, 4], "0"))
    assert legal_moves(state, 0) == [Move("draw")]  # although seat 0 already drew this turn
    apply(state, 0, Move("draw"))
    assert legal_moves(state, 0) == [Move("mark")]


def test_s7_chained_doubles_repeat_the_obligation() -> None:
    state = load(
        hands=[[[4, 4], [3, 3], [3, 5], [6, 6]], [[4, 8]], [[0, 0]]],
        trains=TRAINS,
        marked=[False, True, False],
    )
    apply(state, 0, play([4, 4], "0"))
    apply(state, 0, play([3, 3], "1"))
    assert state.turn == 0 and game_view(state, 0)["turn_state"]["must_follow"] == "1"
    assert game_view(state, 0)["open_doubles"] == ["0", "1"]
    assert plays(state) == {((3, 5), "1")}
    apply(state, 0, play([3, 5], "1"))
    assert state.turn == 1 and game_view(state, None)["open_doubles"] == ["0"]
    check_invariants(state)


def test_s7_two_open_doubles_satisfied_oldest_first() -> None:
    state = load(
        hands=[[[4, 8], [3, 7]], [[1, 1]], [[4, 5], [3, 6]]],
        trains={"0": [[9, 4], [4, 4]], "1": [[9, 3], [3, 3]], "2": [[9, 2]]},
        open_doubles=["1", "0"],
        turn=2,
    )
    assert plays(state) == {((3, 6), "1")}  # train 1's double is the older one
    with pytest.raises(IllegalMove, match="double on train 1 is open"):
        apply(state, 2, play([4, 5], "0"))
    apply(state, 2, play([3, 6], "1"))
    assert state.turn == 0 and plays(state) == {((4, 8), "0")}
    apply(state, 0, play([4, 8], "0"))
    assert state.open_doubles == []


def test_s7_failing_to_satisfy_draws_then_marks() -> None:
    state = load(
        hands=[[[1, 1]], [[5, 5]], [[6, 6]]],
        trains={"0": [[9, 4], [4, 4]], "1": [[9, 3]], "2": [[9, 2]]},
        open_doubles=["0"],
        turn=1,
        boneyard=[[1, 2], [4, 7]],
    )
    assert legal_moves(state, 1) == [Move("draw")]
    apply(state, 1, Move("draw"))
    apply(state, 1, Move("mark"))
    assert state.marked[1] and state.turn == 2
    apply(state, 2, Move("draw"))  # draws [4,7], which satisfies the double
    assert plays(state) == {((4, 7), "0")}


def test_s7_chicken_foot_needs_three_tiles() -> None:
    state = load(
        options={"chicken_foot": True},
        hands=[[[4, 8], [0, 0]], [[4, 1], [4, 2], [3, 5]], [[4, 6], [2, 5]]],
        trains={"0": [[9, 4], [4, 4]], "1": [[9, 3]], "2": [[9, 2]]},
        open_doubles=["0"],
        turn=1,
    )
    assert plays(state) == {((1, 4), "0"), ((2, 4), "0")}
    events = apply(state, 1, play([4, 1], "0"))  # first toe: still open, turn over
    assert not any(e["type"] == "double_satisfied" for e in events) and state.turn == 2
    assert game_view(state, None)["trains"][0]["open_end"] == 4
    assert plays(state) == {((4, 6), "0")}
    apply(state, 2, play([4, 6], "0"))  # second toe
    assert plays(state) == {((4, 8), "0")}
    events = apply(state, 0, play([4, 8], "0"))  # third: satisfied, the train continues at 8
    assert {"type": "double_satisfied", "seat": 0, "train": "0"} in events
    assert game_view(state, None)["trains"][0]["open_end"] == 8
    assert [t.to_json() for t in state.trains[0]] == [[9, 4], [4, 4], [4, 1], [4, 6], [4, 8]]
    check_invariants(state)


def test_s7_going_out_on_a_double_ends_the_round_at_once() -> None:
    state = load(hands=[[[4, 4]], [[1, 1]], [[2, 3]]], trains=TRAINS)
    events = apply(state, 0, play([4, 4], "0"))
    assert events[-1]["type"] == "round_over" and events[-1]["out"] == [0]
    assert events[-1]["scores"] == [0, 2, 5]


def test_s7_follow_satisfy_a_drawn_tile_that_fits_elsewhere_is_not_played() -> None:
    # satisfy: the next tile must go onto the double just played; a drawn tile that does not
    # fit it leaves a mark, and the double passes to the next player as an open double.
    state = load(
        options={"double_follow": "satisfy"},
        hands=[[[4, 4], [1, 2]], [[4, 8], [3, 5]], [[0, 0]]],
        trains=TRAINS,
        boneyard=[[7, 9]],
    )
    apply(state, 0, play([4, 4], "0"))
    assert legal_moves(state, 0) == [Move("draw")]
    apply(state, 0, Move("draw"))  # [7,9] would start the Mexican train, but not follow [4,4]
    assert legal_moves(state, 0) == [Move("mark")]
    apply(state, 0, Move("mark"))
    assert state.marked[0] and state.turn == 1
    assert plays(state) == {((4, 8), "0")}


@pytest.mark.parametrize("follow", ["any", "satisfy"])
def test_s7_going_out_on_a_double_needs_no_follow_under_either_option(follow: str) -> None:
    state = load(
        options={"double_follow": follow}, hands=[[[4, 4]], [[1, 1]], [[2, 3]]], trains=TRAINS
    )
    over = apply(state, 0, play([4, 4], "0"))[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "out", [0])


OUT_ON_A_DOUBLE_IN_THE_OPENING: dict[str, Any] = {
    "hands": [[[9, 4], [4, 4]], [[9, 3], [4, 5]], [[9, 2], [6, 6]]],
    "opened": [False, False, False],
}


def test_s7_going_out_on_a_double_in_an_opening_chain_waits_under_opening_out_waits() -> None:
    # Rule 5 (standard, opening_out_waits): a player who plays their whole hand in their
    # opening turn ends the round only once every player has had their opening turn; the
    # openers ignore the open double meanwhile.
    state = load(**OUT_ON_A_DOUBLE_IN_THE_OPENING)
    apply(state, 0, play([9, 4], "0"))
    events = apply(state, 0, play([4, 4], "0"))
    assert events[-1] == {"type": "turn_passed", "seat": 1} and state.status == "in_round"
    assert plays(state) == {((3, 9), "1")}  # not [4,5] on the open double
    apply(state, 1, play([9, 3], "1"))
    apply(state, 1, Move("end_turn"))
    apply(state, 2, play([9, 2], "2"))
    over = apply(state, 2, Move("end_turn"))[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "out", [0])
    assert over["scores"] == [0, 9, 12]


def test_s7_going_out_on_a_double_in_an_opening_chain_ends_the_round_at_once_otherwise() -> None:
    state = load(**OUT_ON_A_DOUBLE_IN_THE_OPENING, options={"opening_out_waits": False})
    apply(state, 0, play([9, 4], "0"))
    over = apply(state, 0, play([4, 4], "0"))[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "out", [0])


def test_s7_chicken_foot_in_an_opening_chain_one_player_lays_all_three_toes() -> None:
    # A chain stays a valid chain: after [4,4] the next three tiles bear 4 (toes, then the
    # third), and the chain goes on from the third tile's other end.
    state = load(
        options={"chicken_foot": True},
        hands=[[[9, 4], [4, 4], [4, 1], [4, 2], [4, 3], [3, 5], [1, 1]], [[9, 3]], [[9, 2]]],
        opened=[False, False, False],
    )
    for tile in ([9, 4], [4, 4], [4, 1], [4, 2]):
        apply(state, 0, play(tile, "0"))
        assert state.turn == 0 and state.open_doubles == ([0] if tile != [9, 4] else [])
    assert plays(state) == {((3, 4), "0")}  # still on the double: [1,1] fits no toe
    events = apply(state, 0, play([4, 3], "0"))
    assert {"type": "double_satisfied", "seat": 0, "train": "0"} in events
    assert plays(state) == {((3, 5), "0")} and state.open_doubles == []
    check_invariants(state)
