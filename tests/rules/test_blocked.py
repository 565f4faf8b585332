"""docs/rules.md section 8: a round is blocked only when no player has a legal play.

Both directions of the rule: a mark that opens a train on which another player can play does
not block (the old "P marks in a row" did), and a lap where nobody can play even with every
train open blocks after its first mark (the old count waited for P marks). Then a property test
over random rounds played past an empty boneyard: at every mark, the engine's verdict agrees
with simulating every seat's turns (play if the naive reference reading of rules 5-7 finds a
play, else mark) for two laps.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rules import Move, apply, deal, export_position, legal_moves, new_game
from service.rules.engine import round_blocked
from tests.rules.helpers import load, play, plays
from tests.rules.reference import reference_moves

MARK = Move("mark")

# Double-6, two players, nothing left to draw: seat 0 holds [2,6], which fits only seat 1's
# train (ending on 2, no marker); seat 1 holds [3,3], which fits nothing.
OPENS_A_PLAY: dict[str, Any] = {
    "players": 2,
    "options": {"set": 6},
    "hands": [[[2, 6]], [[3, 3]]],
    "trains": {
        "0": [[6, 3], [3, 4], [4, 4], [4, 2], [2, 2], [2, 3], [3, 5], [5, 5], [5, 2], [2, 1],
              [1, 5], [5, 4], [4, 6], [6, 1], [1, 3], [3, 0], [0, 1], [1, 1], [1, 4], [4, 0],
              [0, 5]],
        "1": [[6, 0], [0, 0], [0, 2]],
        "mexican": [[6, 5]],
    },
}  # fmt: skip

# The same shape under chicken foot (each double in a train followed by three toes): seat 0
# holds [2,2] for seat 1's train, seat 1 holds [4,4] and [4,6].
OPENS_A_PLAY_CHICKEN_FOOT: dict[str, Any] = {
    "players": 2,
    "options": {"set": 6, "chicken_foot": True},
    "hands": [[[2, 2]], [[4, 4], [4, 6]]],
    "trains": {
        "0": [[6, 5], [5, 5], [5, 2], [5, 4], [5, 3], [3, 2], [2, 4], [4, 3], [3, 3], [3, 1],
              [3, 6], [3, 0]],
        "1": [[6, 2], [2, 0], [0, 0], [0, 1], [0, 4], [0, 5], [5, 1], [1, 1], [1, 6], [1, 4],
              [1, 2]],
        "mexican": [[6, 0]],
    },
}  # fmt: skip


@pytest.mark.parametrize(
    ("doc", "preset"),
    [
        (OPENS_A_PLAY, "standard"),
        (OPENS_A_PLAY, "tournament"),  # mexican_needs_own_blocked
        (OPENS_A_PLAY_CHICKEN_FOOT, "standard"),
    ],
)
def test_s8_a_mark_that_opens_a_play_does_not_block(doc: dict[str, Any], preset: str) -> None:
    options = {**doc["options"], "hand_size": 5}  # no deal-table row for a double-6 set
    state = load(**{**doc, "preset": preset, "options": options})
    assert state.boneyard == []
    apply(state, 0, MARK)
    events = apply(state, 1, MARK)  # two marks in a row by two players: the old rule blocked
    assert state.status == "in_round", events
    assert events == [{"type": "marker_placed", "seat": 1}, {"type": "turn_passed", "seat": 0}]
    tile = doc["hands"][0][0]
    assert plays(state) == {((tile[0], tile[1]), "1")}
    over = apply(state, 0, play(tile, "1"))[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "out", [0])


# The example of docs/rules.md section 8 at engine 7 of a double-9 set (round 3 for two
# players): seat 0 holds [7,9], seat 1 holds [2,2], seat 1's unmarked train ends on 9. With
# only those two tiles in hands no complete position exists (every train starts on 7, so the
# pips' parities leave more odd ends than three trains have), so each hand holds a few more
# tiles that fit nothing: seat 0 [4,9] [6,6] [7,8], seat 1 [0,6] [8,8] [2,3].
ENGINE_SEVEN: dict[str, Any] = {
    "players": 2,
    "round": 3,
    "hands": [[[7, 9], [4, 9], [6, 6], [7, 8]], [[2, 2], [0, 6], [8, 8], [2, 3]]],
    "trains": {
        "0": [[7, 0], [0, 0], [0, 3], [3, 6], [6, 8], [8, 2], [2, 0], [0, 9], [9, 8], [8, 4],
              [4, 1], [1, 0], [0, 8], [8, 3], [3, 7], [7, 5], [5, 2], [2, 4], [4, 4], [4, 5],
              [5, 0], [0, 4], [4, 3], [3, 5], [5, 5], [5, 9], [9, 2], [2, 6], [6, 4], [4, 7],
              [7, 2], [2, 1], [1, 1], [1, 9], [9, 9], [9, 3], [3, 3], [3, 1]],
        "1": [[7, 1], [1, 8], [8, 5], [5, 6], [6, 9]],
        "mexican": [[7, 6], [6, 1], [1, 5]],
    },
    "scores": [[10, 0], [0, 12]],
}  # fmt: skip


@pytest.mark.parametrize("preset", ["standard", "tournament"])
def test_s8_the_documented_example_continues_after_two_marks(preset: str) -> None:
    state = load(**ENGINE_SEVEN, preset=preset)
    assert (state.engine, state.boneyard, plays(state)) == (7, [], set())
    apply(state, 0, MARK)
    events = apply(state, 1, MARK)
    assert state.status == "in_round", events
    assert ((7, 9), "1") in plays(state)
    apply(state, 0, play([7, 9], "1"))
    assert state.status == "in_round" and state.turn == 1


def _stuck(preset: str) -> dict[str, Any]:
    """Double-6, 3 players, empty boneyard: every train ends on 5 and every 5 is placed."""
    return {
        "preset": preset,
        "options": {"set": 6, "hand_size": 5},
        "hands": [[[0, 0]], [[1, 1]], [[2, 2]]],
        "trains": {
            "0": [[6, 5], [5, 5], [5, 1], [1, 2], [2, 5]],
            "1": [[6, 0], [0, 5]],
            "2": [[6, 3], [3, 5]],
            "mexican": [[6, 4], [4, 5]],
        },
        "rest_to": 2,
    }


@pytest.mark.parametrize("preset", ["standard", "tournament"])
def test_s8_nobody_can_play_even_with_every_train_open_blocks_at_the_first_mark(
    preset: str,
) -> None:
    state = load(**_stuck(preset))
    assert state.boneyard == []
    over = apply(state, 0, MARK)[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "blocked", [])
    assert state.status == "round_over"


# Chicken foot, double-6, three players: every train ends on 6 (three are still empty), every 6
# is placed, and no hand holds a tile that fits.
STUCK_CHICKEN_FOOT: dict[str, Any] = {
    "options": {"set": 6, "chicken_foot": True, "hand_size": 5},
    "hands": [[[3, 4], [2, 3]], [[0, 0], [1, 1]], [[4, 5]]],
    "trains": {
        "0": [[6, 3], [3, 3], [3, 5], [3, 0], [3, 1], [1, 0], [0, 5], [5, 5], [5, 6], [5, 2],
              [5, 1], [1, 6], [6, 4], [4, 4], [4, 1], [4, 0], [4, 2], [2, 2], [2, 6], [2, 1],
              [2, 0], [0, 6]],
    },
}  # fmt: skip


def test_s8_chicken_foot_nobody_can_play_blocks_at_the_first_mark() -> None:
    state = load(**STUCK_CHICKEN_FOOT)
    assert state.boneyard == [] and round_blocked(state)
    over = apply(state, 0, MARK)[-1]
    assert (over["type"], over["reason"]) == ("round_over", "blocked")


# Double-6, two players, nothing to draw. Seat 1 has not had its opening turn and holds no 6,
# so it cannot start its train; but every tile it holds bears a 3, and train 0 and the Mexican
# train end on 3. Seat 0 holds no 3 and no 6: it has no play now nor on seat 1's train once
# that is marked.
OPENER_PLAYS_LATER: dict[str, Any] = {
    "players": 2,
    "options": {"set": 6, "hand_size": 5},
    "hands": [[], [[0, 3], [1, 3], [3, 3], [3, 4], [3, 5]]],
    "trains": {
        "0": [[6, 0], [0, 1], [1, 6], [6, 2], [2, 3]],
        "mexican": [[6, 4], [4, 5], [5, 6], [6, 3]],
    },
    "opened": [True, False],
    "rest_to": 0,
}


def test_s8_a_seat_that_cannot_open_but_can_play_after_keeps_the_round_going() -> None:
    # Rule 8: a player whose next turn is an opening turn in which they cannot play counts as
    # able to play if they could on the turn after it (opened, own train marked).
    state = load(**OPENER_PLAYS_LATER)
    assert state.boneyard == [] and legal_moves(state, 0) == [MARK]
    events = apply(state, 0, MARK)
    assert state.status == "in_round", events
    assert legal_moves(state, 1) == [MARK]  # the opening turn: no 6 to start train 1
    apply(state, 1, MARK)
    apply(state, 0, MARK)
    assert state.status == "in_round"
    assert ((3, 4), "mexican") in plays(state) and ((3, 4), "0") in plays(state)


# Double-6, two players, nothing to draw. The Mexican train ends on an open [2,2] and every
# other 2 is placed, so nobody can satisfy it. Seat 0 holds [0,5] for its own train, and seat
# 1 holds [1,5], which would fit train 0 once seat 0 marks it.
OPEN_DOUBLE_NOBODY_SATISFIES: dict[str, Any] = {
    "players": 2,
    "options": {"set": 6, "hand_size": 5},
    "hands": [[[0, 5]], [[1, 5]]],
    "trains": {
        "0": [[6, 0], [0, 2], [2, 1], [1, 3], [3, 2], [2, 5]],
        "1": [[6, 2]],
        "mexican": [[6, 4], [4, 2], [2, 2]],
    },
    "open_doubles": ["mexican"],
    "rest_to": 0,
}


def test_s8_an_open_double_nobody_can_satisfy_blocks_although_other_tiles_fit() -> None:
    # Rule 8 counts plays by rules 5-7, open doubles included: rule 7 lets a player facing
    # an open double play nowhere else, so no player could play a tile.
    state = load(**OPEN_DOUBLE_NOBODY_SATISFIES)
    assert state.boneyard == [] and plays(state) == set()
    over = apply(state, 0, MARK)[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "blocked", [])


# Tournament, double-6, two players, nothing to draw, no Mexican train yet. Every 5 is placed
# and both trains end on 5; seat 0 holds no 5 and no 6; seat 1 holds [0,6] and [1,6], which
# can start the Mexican train only because its own train has no play.
MEXICAN_FOR_THE_BLOCKED: dict[str, Any] = {
    "players": 2,
    "preset": "tournament",
    "options": {"set": 6, "hand_size": 5},
    "hands": [[], [[0, 6], [1, 6]]],
    "trains": {
        "0": [[6, 2], [2, 5], [5, 0], [0, 1], [1, 5]],
        "1": [[6, 3], [3, 5], [5, 5], [5, 6], [6, 4], [4, 5]],
    },
    "rest_to": 0,
}


def test_s8_a_seat_that_may_start_the_mexican_train_because_its_own_is_blocked_can_play() -> None:
    # Rule 8 counts plays by rule 6: with no play on its own train, a seat may start the
    # Mexican train even where mexican_needs_own_blocked holds.
    state = load(**MEXICAN_FOR_THE_BLOCKED)
    assert state.boneyard == [] and legal_moves(state, 0) == [MARK]
    events = apply(state, 0, MARK)
    assert state.status == "in_round", events
    assert plays(state) == {((0, 6), "mexican"), ((1, 6), "mexican")}


# Double-6, two players, nothing to draw. Seat 1 has not had its opening turn and holds no 6
# and no 5; both started trains end on 5 and every 5 is placed. Seat 0 holds [0,6] and [1,6],
# which fit only an empty train that carries a marker: seat 1's, once it marks.
OPENER_MUST_MARK: dict[str, Any] = {
    "players": 2,
    "options": {"set": 6, "hand_size": 5},
    "hands": [[[0, 6], [1, 6]], []],
    "trains": {
        "0": [[6, 2], [2, 5], [5, 0], [0, 1], [1, 5]],
        "mexican": [[6, 3], [3, 5], [5, 5], [5, 6], [6, 4], [4, 5]],
    },
    "opened": [True, False],
    "rest_to": 1,
}


def test_s8_the_train_of_a_seat_that_cannot_open_counts_as_marked() -> None:
    # Rule 8: the players who could not play if their turn began now (an opening turn
    # included) will mark, so their trains count as marked; here that opens seat 1's train
    # to seat 0's 6s.
    state = load(**OPENER_MUST_MARK)
    assert state.boneyard == [] and legal_moves(state, 0) == [MARK]
    events = apply(state, 0, MARK)
    assert state.status == "in_round", events
    assert legal_moves(state, 1) == [MARK]
    apply(state, 1, MARK)
    assert plays(state) == {((0, 6), "1"), ((1, 6), "1")}


# --------------------------------------------------------------------------- property


def _simulate(doc: dict[str, Any]) -> bool:
    """Whether any seat plays in the next two laps when each plays if the reference reading
    finds a play and marks otherwise (``doc``: the position right after a mark)."""
    doc = copy.deepcopy(doc)
    n = len(doc["players"])
    for _ in range(2 * n):
        seat = doc["turn"]
        if any(move[0] == "play" for move in reference_moves(doc)):
            return True
        doc["marked"][seat] = True
        doc["opened"][seat] = True
        doc["turn"] = (seat + 1) % n
        doc["turn_state"] = {"drawn": False, "tiles_played": 0, "must_follow": None}
    return False


def _after_mark(before: dict[str, Any], seat: int) -> dict[str, Any]:
    doc = copy.deepcopy(before)
    doc["marked"][seat] = True
    doc["opened"][seat] = True
    doc["turn"] = (seat + 1) % len(doc["players"])
    doc["turn_state"] = {"drawn": False, "tiles_played": 0, "must_follow": None}
    return doc


OPTIONS = st.sampled_from(
    [
        ("standard", {}),
        ("tournament", {}),
        ("classic", {}),
        ("standard", {"chicken_foot": True}),
        ("standard", {"set": 6, "hand_size": 4}),
        ("tournament", {"set": 9, "chicken_foot": True, "hand_size": 6}),
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPTIONS, st.integers(2, 6), st.integers(0, 2**32))
def test_s8_blocked_exactly_when_no_seat_can_play_in_the_laps_to_come(
    preset_options: tuple[str, dict[str, Any]], players: int, seed: int
) -> None:
    preset, options = preset_options
    state = new_game([f"p{i}" for i in range(players)], preset, options, seed=seed)
    rng = random.Random(seed)
    checked = 0
    while state.status != "game_over" and checked < 40:
        deal(state)
        while state.status == "in_round":
            seat = state.turn
            assert seat is not None
            move = rng.choice(legal_moves(state, seat))
            marks_empty = move.action == "mark" and not state.boneyard
            before = export_position(state) if marks_empty else None
            events = apply(state, seat, move)
            if before is None:
                continue
            checked += 1
            blocked = any(e["type"] == "round_over" and e["reason"] == "blocked" for e in events)
            assert blocked == (not _simulate(_after_mark(before, seat))), (before, seat)


# Double-6, two players. Seat 0 holds [2,2], which fits its own train (ending on 2), and [0,0],
# which fits nothing; every other 2 is placed, so nobody can follow or satisfy the double.
FOLLOW_NOBODY_CAN: dict[str, Any] = {
    "players": 2,
    "hands": [[[2, 2], [0, 0]], []],
    "trains": {
        "0": [[6, 2]],
        "1": [[6, 0], [0, 2], [2, 1], [1, 3], [3, 2], [2, 4], [4, 5], [5, 2]],
    },
    "rest_to": 1,
}


@pytest.mark.parametrize("follow", ["any", "satisfy"])
@pytest.mark.parametrize("boneyard", [[], [[1, 1]]])
def test_s8_a_double_nobody_can_follow_blocks_at_the_mark_that_ends_its_turn(
    follow: str, boneyard: list[list[int]]
) -> None:
    # Rules 7 and 8: the double's own draw (here the boneyard's last tile, or none) fails, the
    # player marks with the boneyard empty, and the open double binds every later turn.
    options = {"set": 6, "double_follow": follow}
    state = load(**FOLLOW_NOBODY_CAN, options=options, boneyard=boneyard)
    apply(state, 0, play([2, 2], "0"))
    assert state.open_doubles == [0] and state.turn == 0
    if boneyard:
        assert legal_moves(state, 0) == [Move("draw")]
        apply(state, 0, Move("draw"))
    assert legal_moves(state, 0) == [MARK]
    over = apply(state, 0, MARK)[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "blocked", [])
