"""docs/rules.md section 6: later turns (where to play, forced play, draw, mark, markers)."""

from __future__ import annotations

import pytest

from service.rules import IllegalMove, Move, apply, dumps, legal_moves
from tests.rules.helpers import actions, load, play, plays

TRAINS = {"0": [[9, 4]], "1": [[9, 3]], "2": [[9, 2]]}


def test_s6_own_mexican_and_marked_trains_but_not_unmarked_ones() -> None:
    state = load(
        hands=[[[4, 5], [9, 7], [3, 6], [2, 2]], [[1, 1]], [[0, 0]]],
        trains=TRAINS,
        marked=[False, True, False],
    )
    assert plays(state) == {((4, 5), "0"), ((7, 9), "mexican"), ((3, 6), "1")}
    assert actions(state) == {"play"}  # a player with a play must play
    before = dumps(state)
    with pytest.raises(IllegalMove, match="no marker") as err:
        apply(state, 0, play([2, 2], "2"))
    assert err.value.code == "illegal_move"
    with pytest.raises(IllegalMove, match="must play"):
        apply(state, 0, Move("draw"))
    with pytest.raises(IllegalMove, match="must play"):
        apply(state, 0, Move("mark"))
    with pytest.raises(IllegalMove, match=r"\[4,5\] does not match train 1, whose open end is 3"):
        apply(state, 0, play([4, 5], "1"))
    with pytest.raises(IllegalMove, match="do not hold"):
        apply(state, 0, play([1, 1], "0"))
    assert dumps(state) == before


def test_s6_a_player_starts_another_players_empty_marked_train() -> None:
    state = load(
        hands=[[[9, 7], [1, 2]], [[1, 1]], [[0, 0]]],
        trains={"0": [[9, 4]], "2": [[9, 2]], "mexican": [[9, 8]]},
        marked=[False, True, False],
    )
    assert plays(state) == {((7, 9), "1")}
    events = apply(state, 0, play([7, 9], "1"))
    assert events[0] == {"type": "tile_played", "seat": 0, "tile": [9, 7], "train": "1"}
    assert state.marked[1]  # only the owner's own play removes a marker
    assert [t.to_json() for t in state.trains[1]] == [[9, 7]]


def test_s6_unmarked_empty_train_is_closed_and_cannot_start_with_a_wrong_tile() -> None:
    state = load(
        hands=[[[9, 7], [1, 2]], [[1, 1]], [[0, 0]]],
        trains={"0": [[9, 4]], "2": [[9, 2]], "mexican": [[9, 8]]},
        marked=[False, True, False],
    )
    with pytest.raises(IllegalMove, match="first tile must bear the engine 9"):
        apply(state, 0, play([1, 2], "1"))


def test_s6_mexican_needs_own_blocked() -> None:
    hands = [[[4, 5], [9, 7]], [[1, 1]], [[0, 0]]]
    state = load(preset="tournament", hands=hands, trains=TRAINS)
    assert plays(state) == {((4, 5), "0")}
    with pytest.raises(IllegalMove, match="no play on their own train"):
        apply(state, 0, play([9, 7], "mexican"))
    state = load(preset="tournament", hands=[[[1, 5], [9, 7]], [[1, 1]], [[0, 0]]], trains=TRAINS)
    assert plays(state) == {((7, 9), "mexican")}
    # once started, the Mexican train is open to everybody
    trains = {**TRAINS, "mexican": [[9, 8]]}
    state = load(preset="tournament", hands=[[[4, 5], [8, 1]], [[1, 1]], [[0, 0]]], trains=trains)
    assert plays(state) == {((4, 5), "0"), ((1, 8), "mexican")}
    # the standard preset lets anybody start it
    state = load(hands=hands, trains=TRAINS)
    assert plays(state) == {((4, 5), "0"), ((7, 9), "mexican")}


def test_s6_draw_when_no_play_then_play_the_drawn_tile() -> None:
    state = load(hands=[[[1, 1]], [[1, 2]], [[0, 0]]], trains=TRAINS, boneyard=[[4, 6]])
    assert legal_moves(state, 0) == [Move("draw")]
    with pytest.raises(IllegalMove, match="draw before you mark"):
        apply(state, 0, Move("mark"))
    apply(state, 0, Move("draw"))
    assert plays(state) == {((4, 6), "0")} and actions(state) == {"play"}
    with pytest.raises(IllegalMove):
        apply(state, 0, Move("draw"))  # one draw per turn
    events = apply(state, 0, play([6, 4], "0"))
    assert events[-1] == {"type": "turn_passed", "seat": 1}


def test_s6_draw_unplayable_then_mark() -> None:
    state = load(hands=[[[1, 1]], [[1, 2]], [[0, 0]]], trains=TRAINS, boneyard=[[5, 6]])
    apply(state, 0, Move("draw"))
    assert legal_moves(state, 0) == [Move("mark")]
    events = apply(state, 0, Move("mark"))
    assert events == [{"type": "marker_placed", "seat": 0}, {"type": "turn_passed", "seat": 1}]
    assert state.marked[0]


def test_s6_drawing_the_last_boneyard_tile() -> None:
    state = load(hands=[[[1, 1]], [[1, 2]], [[0, 0]]], trains=TRAINS, boneyard=[[5, 6]], rest_to=2)
    assert len(state.boneyard) == 1
    apply(state, 0, Move("draw"))
    assert state.boneyard == [] and legal_moves(state, 0) == [Move("mark")]
    apply(state, 0, Move("mark"))
    assert state.status == "in_round"
    # the next player cannot draw from the empty boneyard
    assert legal_moves(state, 1) == [Move("mark")]
    before = dumps(state)
    with pytest.raises(IllegalMove, match="boneyard is empty"):
        apply(state, 1, Move("draw"))
    assert dumps(state) == before


def test_s6_marker_removed_by_own_play_only() -> None:
    state = load(
        hands=[[[4, 5], [9, 7]], [[1, 1]], [[0, 0]]], trains=TRAINS, marked=[True, False, False]
    )
    events = apply(state, 0, play([9, 7], "mexican"))
    assert state.marked[0] and {"type": "marker_removed", "seat": 0} not in events
    state = load(
        hands=[[[4, 5], [9, 7]], [[1, 1]], [[0, 0]]], trains=TRAINS, marked=[True, False, False]
    )
    events = apply(state, 0, play([4, 5], "0"))
    assert events[1] == {"type": "marker_removed", "seat": 0}
    assert not state.marked[0]


def test_s6_marker_removed_when_a_double_is_followed_on_the_own_train() -> None:
    # A marked seat plays a double on the Mexican train and follows it on its own train: that
    # play, too, removes the marker; the Mexican double stays open for the next player.
    hands = [[[4, 4], [4, 5], [1, 2]], [[1, 1]], [[0, 0]]]
    trains = {**TRAINS, "mexican": [[9, 6], [6, 4]]}
    state = load(hands=hands, trains=trains, marked=[True, False, False])
    apply(state, 0, play([4, 4], "mexican"))
    assert state.marked[0] and state.turn == 0
    events = apply(state, 0, play([4, 5], "0"))
    assert {"type": "marker_removed", "seat": 0} in events
    assert not state.marked[0] and state.open_doubles == [3] and state.turn == 1


def test_s6_marker_removed_when_an_open_double_on_the_own_train_is_satisfied() -> None:
    hands = [[[1, 2]], [[3, 5], [0, 1]], [[0, 0]]]
    trains = {**TRAINS, "1": [[9, 3], [3, 3]]}
    state = load(
        hands=hands, trains=trains, turn=1, marked=[False, True, False], open_doubles=["1"]
    )
    assert plays(state) == {((3, 5), "1")}
    events = apply(state, 1, play([3, 5], "1"))
    types = [e["type"] for e in events]
    assert types == ["tile_played", "marker_removed", "double_satisfied", "turn_passed"]
    assert state.marked == [False, False, False] and state.open_doubles == []


def test_s6_one_non_double_tile_ends_the_turn() -> None:
    state = load(hands=[[[4, 5], [5, 6]], [[1, 1]], [[0, 0]]], trains=TRAINS)
    events = apply(state, 0, play([4, 5], "0"))
    assert events[-1] == {"type": "turn_passed", "seat": 1} and state.turn == 1
    with pytest.raises(IllegalMove) as err:
        apply(state, 0, play([5, 6], "0"))
    assert err.value.code == "not_your_turn"
    assert legal_moves(state, 0) == []


def test_s6_own_empty_train_after_an_opening_mark() -> None:
    state = load(
        hands=[[[9, 1], [2, 3]], [[1, 1]], [[0, 0]]],
        trains={"1": [[9, 3]], "2": [[9, 2]]},
        marked=[True, False, False],
    )
    assert plays(state) == {((1, 9), "0"), ((1, 9), "mexican")}


def test_s6_mexican_needs_own_blocked_also_holds_for_the_tile_after_a_double() -> None:
    # double_follow any lets the tile after a double go anywhere legal: under the tournament
    # preset, starting the Mexican train stays legal only while the own train has no play.
    hands = [[[4, 4], [4, 6], [9, 7]], [[1, 1]], [[0, 0]]]
    state = load(preset="tournament", hands=hands, trains=TRAINS)
    apply(state, 0, play([4, 4], "0"))
    assert plays(state) == {((4, 6), "0")}
    with pytest.raises(IllegalMove, match="no play on their own train"):
        apply(state, 0, play([9, 7], "mexican"))
    hands = [[[4, 4], [1, 6], [9, 7]], [[1, 1]], [[0, 0]]]
    state = load(preset="tournament", hands=hands, trains=TRAINS)
    apply(state, 0, play([4, 4], "0"))
    assert plays(state) == {((7, 9), "mexican")}
