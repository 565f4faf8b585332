"""docs/rules.md section 8: end of a round (out, blocked), scoring, totals, game end, tie-breaks."""

from __future__ import annotations

import pytest

from service.rules import Move, apply, deal, score_view
from service.rules.engine import winners
from tests.rules.helpers import load, play

TRAINS = {"0": [[9, 4]], "1": [[9, 3]], "2": [[9, 2]]}


@pytest.mark.parametrize(
    ("preset", "options", "blank"),
    [
        ("standard", {}, 50),
        ("tournament", {}, 0),
        ("classic", {}, 0),
        ("standard", {"double_blank_points": 25}, 25),
    ],
)
def test_s8_out_scores_zero_others_their_pips_and_double_blank(
    preset: str, options: dict[str, int], blank: int
) -> None:
    # The trains start on 9: round 1 of a double-9 set, round 4 of classic's double-12.
    rnd = 4 if preset == "classic" else 1
    state = load(
        preset=preset,
        options=options,
        round=rnd,
        hands=[[[4, 5]], [[0, 0], [1, 6]], [[2, 2]]],
        trains=TRAINS,
    )
    events = apply(state, 0, play([4, 5], "0"))
    over = events[-1]
    assert over == {
        "type": "round_over", "round": rnd, "reason": "out", "out": [0],
        "scores": [0, blank + 7, 4], "totals": [0, blank + 7, 4],
    }  # fmt: skip
    assert state.status == "round_over" and state.turn is None
    assert score_view(state)["players"][1]["rounds"][-1] == blank + 7


def _stuck(seat1_hand: list[list[int]], train1: list[list[int]]) -> dict[str, object]:
    """Double-6, 3 players, empty boneyard: every train ends on 5 and every 5 is placed, so
    nobody can play (except what ``seat1_hand`` allows on train 1)."""
    return {
        "options": {"set": 6},
        "hands": [[[0, 0]], seat1_hand, [[2, 2]]],
        "trains": {
            "0": [[6, 5], [5, 5], [5, 1], [1, 2], [2, 5]],
            "1": train1,
            "2": [[6, 3], [3, 5]],
            "mexican": [[6, 4], [4, 5]],
        },
        "rest_to": 2,
    }


def test_s8_a_blocked_round_scores_every_hand() -> None:
    state = load(**_stuck([[1, 1]], [[6, 0], [0, 5]]))  # type: ignore[arg-type]
    assert state.boneyard == []
    events = apply(state, 0, Move("mark"))  # nobody can play even with every train open
    assert events[-1]["type"] == "round_over" and events[-1]["reason"] == "blocked"
    assert events[-1]["out"] == []
    assert events[-1]["scores"][:2] == [50, 2]
    assert events[-1]["scores"][2] == sum(t.pips for t in state.hands[2])


def test_s8_a_mark_while_someone_can_still_play_does_not_block() -> None:
    state = load(**_stuck([[0, 5], [1, 1]], [[6, 0]]))  # type: ignore[arg-type]
    apply(state, 0, Move("mark"))  # seat 1 can play [0,5] on its own train
    assert state.status == "in_round"
    apply(state, 1, play([0, 5], "1"))
    events = apply(state, 2, Move("mark"))  # now nobody can: blocked at this first mark
    assert state.status == "round_over" and events[-1]["reason"] == "blocked"


def test_s8_totals_accumulate_and_the_last_round_ends_the_game() -> None:
    state = load(
        options={"rounds": 2},
        round=2,
        hands=[[[4, 5]], [[1, 6]], [[2, 2]]],
        trains={"0": [[8, 4]], "1": [[8, 3]], "2": [[8, 2]]},
        scores=[[10], [0], [3]],
    )
    events = apply(state, 0, play([4, 5], "0"))
    assert events[-2]["totals"] == [10, 7, 7]
    assert events[-1] == {"type": "game_over", "winners": [1], "totals": [10, 7, 7]}
    view = score_view(state)
    assert view["winners"] == [1] and view["totals"] == [10, 7, 7]
    assert [p["zero_rounds"] for p in view["players"]] == [1, 1, 0]
    assert state.status == "game_over"
    from service.rules import IllegalMove

    with pytest.raises(IllegalMove) as err:
        deal(state)
    assert err.value.code == "game_over"
    with pytest.raises(IllegalMove) as err:
        apply(state, 0, Move("draw"))
    assert err.value.code == "game_over"


def test_s8_tie_break_lowest_total() -> None:
    assert winners([[5, 5], [3, 8], [0, 9]]) == [2]


def test_s8_tie_break_most_zero_rounds() -> None:
    assert winners([[0, 10, 0], [5, 5, 0], [2, 8, 0]]) == [0]


def test_s8_tie_break_lowest_single_non_zero_round() -> None:
    assert winners([[4, 6, 0], [7, 3, 0], [5, 5, 0]]) == [1]
    # the lowest single non-zero round decides (2 < 3), though both worst rounds are 4
    assert winners([[2, 4, 4, 0], [3, 3, 4, 0]]) == [0]


def test_s8_tie_break_shared_win() -> None:
    assert winners([[4, 6, 0], [6, 4, 0], [3, 8, 0]]) == [0, 1]
    assert winners([[0, 0], [0, 0]]) == [0, 1]


def test_s8_round_not_running_between_rounds() -> None:
    from service.rules import IllegalMove

    state = load(hands=[[[4, 5]], [[1, 6]], [[2, 2]]], trains=TRAINS)
    apply(state, 0, play([4, 5], "0"))
    with pytest.raises(IllegalMove) as err:
        apply(state, 1, Move("draw"))
    assert err.value.code == "round_not_running"
    events = deal(state)
    assert events[0]["round"] == 2 and events[0]["engine"] == 8


def test_s8_tie_break_through_a_finished_game() -> None:
    state = load(
        options={"rounds": 2},
        round=2,
        hands=[[[4, 5]], [[1, 4]], [[2, 2], [6, 6]]],
        trains={"0": [[8, 4]], "1": [[8, 3]], "2": [[8, 2]]},
        scores=[[5], [0], [3]],
    )
    events = apply(state, 0, play([4, 5], "0"))
    # totals 5, 5, 19; zero rounds 1 each for seats 0 and 1; lowest non-zero round 5 each
    assert events[-1] == {"type": "game_over", "winners": [0, 1], "totals": [5, 5, 19]}
    assert score_view(state)["winners"] == [0, 1]
