"""docs/rules.md section 5: the opening turn (chain/single, opening_no_play, opening_out_waits)."""

from __future__ import annotations

import pytest

from service.rules import IllegalMove, Move, Tile, apply, dumps, legal_moves
from tests.rules.helpers import actions, load, play, plays

CLOSED = [False, False, False]


def test_s5_chain_opening_plays_own_train_only_and_ends_by_choice() -> None:
    state = load(
        hands=[[[9, 4], [4, 4], [4, 2], [1, 1]], [[9, 3], [4, 5]], [[9, 2], [8, 8]]],
        opened=CLOSED,
    )
    assert plays(state) == {((4, 9), "0")}  # not the Mexican train, although [9,4] starts it
    assert actions(state) == {"play"}
    events = apply(state, 0, play([4, 9], "0"))
    assert events == [{"type": "tile_played", "seat": 0, "tile": [9, 4], "train": "0"}]
    assert plays(state) == {((4, 4), "0"), ((2, 4), "0")}
    assert actions(state) == {"play", "end_turn"}
    apply(state, 0, play([4, 4], "0"))
    # a double inside the opening chain brings no follow obligation: end_turn stays legal
    assert plays(state) == {((2, 4), "0")} and "end_turn" in actions(state)
    events = apply(state, 0, Move("end_turn"))
    assert events == [{"type": "turn_passed", "seat": 1}]
    assert state.opened == [True, False, False]
    assert [state.train_id(t) for t in state.open_doubles] == ["0"]


def test_s5_double_as_last_tile_of_opening_chain_is_ignored_by_openers() -> None:
    state = load(
        hands=[[[4, 2], [1, 1]], [[9, 3], [4, 5]], [[9, 2], [8, 8]]],
        trains={"0": [[9, 4], [4, 4]]},
        open_doubles=["0"],
        opened=[True, False, False],
        turn=1,
    )
    assert plays(state) == {((3, 9), "1")}  # seat 1 is opening: [4,5] may not go on train 0
    with pytest.raises(IllegalMove, match="own train"):
        apply(state, 1, play([4, 5], "0"))


def test_s5_double_as_last_tile_of_opening_chain_binds_the_first_opened_player() -> None:
    state = load(
        hands=[[[4, 2], [1, 1]], [[4, 5], [3, 6]], [[9, 2], [8, 8]]],
        trains={"0": [[9, 4], [4, 4]], "1": [[9, 3]]},
        open_doubles=["0"],
        turn=1,
    )
    assert plays(state) == {((4, 5), "0")}  # the unmarked train 0, not own [3,6]
    events = apply(state, 1, play([5, 4], "0"))
    assert {"type": "double_satisfied", "seat": 1, "train": "0"} in events
    assert state.open_doubles == [] and state.turn == 2


def test_s5_nobody_plays_elsewhere_during_the_opening_even_on_marked_trains() -> None:
    state = load(
        hands=[[[9, 4], [3, 5]], [[1, 2]], [[2, 6]]],
        trains={"mexican": [[9, 8]]},
        opened=[False, True, True],
        marked=[False, True, False],
    )
    assert plays(state) == {((4, 9), "0")}
    for tile, train in (([9, 4], "1"), ([9, 4], "mexican")):
        before = dumps(state)
        with pytest.raises(IllegalMove, match="own train"):
            apply(state, 0, play(tile, train))
        assert dumps(state) == before


def test_s5_single_opening_is_exactly_one_tile() -> None:
    state = load(
        options={"opening": "single"},
        hands=[[[9, 4], [4, 2]], [[9, 3]], [[9, 2]]],
        opened=CLOSED,
    )
    events = apply(state, 0, play([9, 4], "0"))
    assert events[-1] == {"type": "turn_passed", "seat": 1}
    assert state.opened[0] and state.turn == 1


def test_s5_opening_no_play_mark_marks_without_drawing() -> None:
    state = load(hands=[[[1, 2], [3, 4]], [[9, 3]], [[9, 2]]], opened=CLOSED)
    assert legal_moves(state, 0) == [Move("mark")]
    with pytest.raises(IllegalMove, match="without drawing"):
        apply(state, 0, Move("draw"))
    size = len(state.boneyard)
    events = apply(state, 0, Move("mark"))
    assert events == [{"type": "marker_placed", "seat": 0}, {"type": "turn_passed", "seat": 1}]
    assert state.marked[0] and state.opened[0] and len(state.boneyard) == size


def test_s5_opening_no_play_draw_one_then_mark() -> None:
    state = load(
        preset="tournament",
        hands=[[[1, 2]], [[9, 3]], [[9, 2]]],
        boneyard=[[3, 4]],
        opened=CLOSED,
    )
    assert legal_moves(state, 0) == [Move("draw")]
    assert apply(state, 0, Move("draw")) == [{"type": "tile_drawn", "seat": 0, "tile": [3, 4]}]
    assert legal_moves(state, 0) == [Move("mark")]
    apply(state, 0, Move("mark"))
    assert state.marked[0] and state.turn == 1


def test_s5_opening_no_play_draw_one_plays_the_drawn_tile_and_may_chain() -> None:
    state = load(
        preset="tournament",
        hands=[[[1, 2], [5, 1]], [[9, 3]], [[9, 2]]],
        boneyard=[[9, 5]],
        opened=CLOSED,
    )
    apply(state, 0, Move("draw"))
    assert legal_moves(state, 0) == [Move.play(Tile(5, 9), "0")]
    apply(state, 0, play([9, 5], "0"))
    assert plays(state) == {((1, 5), "0")} and "end_turn" in actions(state)
    apply(state, 0, play([5, 1], "0"))
    assert plays(state) == {((1, 2), "0")}
    apply(state, 0, play([1, 2], "0"))  # the hand is empty: the round is over (no waiting)
    assert state.status == "round_over"


def test_s5_opening_no_play_draw_until_keeps_drawing() -> None:
    state = load(
        preset="classic",
        hands=[[[1, 2]], [[12, 3]], [[12, 2]]],
        boneyard=[[3, 4], [5, 6], [0, 12]],
        opened=CLOSED,
    )
    for tile in ([3, 4], [5, 6]):
        assert legal_moves(state, 0) == [Move("draw")]
        assert apply(state, 0, Move("draw"))[0]["tile"] == tile
    apply(state, 0, Move("draw"))
    assert plays(state) == {((0, 12), "0")} and actions(state) == {"play"}


def test_s5_opening_no_play_draw_until_marks_when_the_boneyard_is_empty() -> None:
    state = load(
        preset="classic",
        hands=[[[1, 2]], [[12, 3]], [[12, 2]]],
        boneyard=[[3, 4]],
        rest_to=2,
        opened=CLOSED,
    )
    apply(state, 0, Move("draw"))
    assert len(state.boneyard) == 0
    assert legal_moves(state, 0) == [Move("mark")]
    apply(state, 0, Move("mark"))
    assert state.marked[0] and state.opened[0]


def test_s5_opening_out_waits_until_everybody_has_opened() -> None:
    state = load(hands=[[[9, 4]], [[9, 3], [5, 6]], [[9, 2], [0, 0]]], opened=CLOSED)
    events = apply(state, 0, play([9, 4], "0"))
    assert events[-1] == {"type": "turn_passed", "seat": 1}  # no end_turn needed
    assert state.status == "in_round" and state.hands[0] == []
    apply(state, 1, play([9, 3], "1"))
    apply(state, 1, Move("end_turn"))
    apply(state, 2, play([9, 2], "2"))
    events = apply(state, 2, Move("end_turn"))
    assert events[-1]["type"] == "round_over"
    assert events[-1]["out"] == [0] and events[-1]["scores"] == [0, 11, 50]


def test_s5_opening_out_waits_two_players_out() -> None:
    state = load(hands=[[[9, 4]], [[9, 3], [5, 6]], [[9, 2]]], opened=CLOSED)
    apply(state, 0, play([9, 4], "0"))
    apply(state, 1, play([9, 3], "1"))
    apply(state, 1, Move("end_turn"))
    events = apply(state, 2, play([9, 2], "2"))
    assert events[-1]["type"] == "round_over" and events[-1]["out"] == [0, 2]
    assert events[-1]["scores"] == [0, 11, 0]


def test_s5_a_round_someone_went_out_of_waits_for_every_opening_turn_even_when_blocked() -> None:
    # Every other tile on the Mexican train: the boneyard is empty and no seat but 0 can play.
    mexican = [[6, 4], [4, 2], [2, 1], [1, 0], [0, 4], [4, 3], [3, 1], [1, 1], [1, 5], [5, 0],
               [0, 0], [0, 3], [3, 2], [2, 0], [0, 6], [6, 2], [2, 5], [5, 5], [5, 6], [6, 3],
               [3, 5], [5, 4], [4, 4], [4, 1]]  # fmt: skip
    state = load(
        options={"set": 6, "hand_size": 1},
        hands=[[[6, 1]], [[2, 2]], [[3, 3]]],
        trains={"mexican": mexican},
        boneyard=[],
        opened=CLOSED,
    )
    apply(state, 0, play([6, 1], "0"))  # seat 0 is out; the others have their opening turns
    events = apply(state, 1, Move("mark"))
    assert events[-1] == {"type": "turn_passed", "seat": 2}, events
    events = apply(state, 2, Move("mark"))
    assert events[-1]["type"] == "round_over", events
    assert (events[-1]["reason"], events[-1]["out"]) == ("out", [0])
    assert events[-1]["scores"] == [0, 4, 6]


def test_s5_without_opening_out_waits_going_out_ends_the_round_at_once() -> None:
    state = load(
        options={"opening_out_waits": False},
        hands=[[[9, 4]], [[9, 3], [5, 6]], [[9, 2], [0, 0]]],
        opened=CLOSED,
    )
    events = apply(state, 0, play([9, 4], "0"))
    assert events[-1]["type"] == "round_over" and events[-1]["reason"] == "out"
    assert state.status == "round_over" and state.turn is None


def test_s5_end_turn_needs_at_least_one_tile() -> None:
    state = load(hands=[[[9, 4]], [[9, 3]], [[9, 2]]], opened=CLOSED)
    with pytest.raises(IllegalMove, match="play"):
        apply(state, 0, Move("end_turn"))


def test_s5_after_the_first_chain_tile_no_draw_or_mark() -> None:
    state = load(hands=[[[9, 4], [1, 1]], [[9, 3]], [[9, 2]]], opened=CLOSED)
    apply(state, 0, play([9, 4], "0"))
    assert legal_moves(state, 0) == [Move("end_turn")]
    for action in ("draw", "mark"):
        with pytest.raises(IllegalMove, match="own train or end_turn"):
            apply(state, 0, Move(action))


@pytest.mark.parametrize("preset", ["tournament", "classic"])
def test_s5_drawing_openers_mark_at_once_when_the_boneyard_is_empty(preset: str) -> None:
    # draw_one and draw_until draw only what the boneyard holds: with nothing left, a player
    # who cannot start their train marks.
    engine = 9 if preset == "tournament" else 12
    state = load(
        preset=preset,
        hands=[[[1, 2]], [[engine, 3]], [[engine, 2]]],
        rest_to=2,
        opened=CLOSED,
    )
    assert state.boneyard == [] and legal_moves(state, 0) == [Move("mark")]
    with pytest.raises(IllegalMove, match="boneyard is empty"):
        apply(state, 0, Move("draw"))


def test_s5_single_opening_with_draw_one_plays_the_drawn_tile_and_stops() -> None:
    state = load(
        preset="tournament",
        options={"opening": "single"},
        hands=[[[1, 2], [5, 1]], [[9, 3]], [[9, 2]]],
        boneyard=[[9, 5]],
        opened=CLOSED,
    )
    apply(state, 0, Move("draw"))
    events = apply(state, 0, play([9, 5], "0"))  # [5,1] would continue a chain: not here
    assert events[-1] == {"type": "turn_passed", "seat": 1}
    assert state.opened[0] and state.turn == 1


def test_s5_opening_no_play_draw_until_plays_the_starting_tile_and_may_chain() -> None:
    state = load(
        preset="classic",
        hands=[[[1, 2], [4, 1]], [[12, 3]], [[12, 2]]],
        boneyard=[[5, 6], [4, 12]],
        opened=CLOSED,
    )
    apply(state, 0, Move("draw"))
    apply(state, 0, Move("draw"))
    apply(state, 0, play([12, 4], "0"))
    assert plays(state) == {((1, 4), "0")} and "end_turn" in actions(state)
    apply(state, 0, play([4, 1], "0"))
    apply(state, 0, play([1, 2], "0"))
    assert state.hands[0] == [Tile(5, 6)]  # the first drawn tile stays in the hand
    apply(state, 0, Move("end_turn"))
    assert state.opened[0] and state.turn == 1
