"""docs/rules.md section 9 via the position format and the storage codec; the views."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from service.rules import (
    CorruptState,
    InvalidPosition,
    InvalidRules,
    Move,
    apply,
    deal,
    dumps,
    export_position,
    game_view,
    import_position,
    legal_moves,
    loads,
    new_game,
    visible_events,
)
from tests.rules.helpers import play, position


def _api_example() -> dict[str, Any]:
    """The example position of docs/rules.md §14, completed (every other tile in the boneyard)."""
    return position(
        hands=[[[9, 4], [4, 4]], [[1, 2]], [[0, 0], [3, 9]]],
        trains={"0": [[9, 5]], "1": [], "2": [], "mexican": None},
        boneyard=[[5, 6], [2, 2]],
        opened=[True, False, False],
        marked=[False, True, False],
        turn=1,
    )


def test_s9_api_example_imports_and_round_trips() -> None:
    doc = _api_example()
    state = import_position(doc)
    assert state.status == "in_round" and state.turn == 1 and state.engine == 9
    assert state.boneyard[:2] == [(5, 6), (2, 2)]
    out = export_position(state)
    for key in doc:
        if key not in ("rules", "hands"):
            assert out[key] == doc[key], key
    for mine, theirs in zip(out["hands"], doc["hands"], strict=True):
        assert mine == sorted(sorted(t) for t in theirs)  # hands come back normalised, sorted
    assert out["rules"]["preset"] == "standard" and out["rules"]["options"]["set"] == 9
    assert import_position(out).__class__ is state.__class__
    assert export_position(import_position(out)) == out


def _broken(mutate: Any) -> dict[str, Any]:
    doc = copy.deepcopy(_api_example())
    mutate(doc)
    return doc


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda d: d.update(format="fen"), "format"),
        (lambda d: d.update(players=["solo"]), "players"),
        (lambda d: d.update(players=["a", "b", 3]), "players"),
        (lambda d: d.update(rules={"preset": "nope"}), "rules"),
        (lambda d: d.update(rules={"preset": "standard", "options": {"set": 7}}), "rules"),
        (lambda d: d.update(round=0), "round"),
        (lambda d: d.update(round=11), "round"),
        (lambda d: d.update(engine=8), "engine"),
        (lambda d: d.update(turn=3), "turn"),
        (lambda d: d.update(turn=None), "turn"),
        (lambda d: d.update(opened=[True, False]), "opened"),
        (lambda d: d.update(marked=[1, 0, 0]), "marked"),
        (lambda d: d.update(hands=d["hands"][:2]), "hands"),
        (lambda d: d["hands"][0].append([9, 9]), "both in the centre"),
        (lambda d: d["hands"][1].append([5, 6]), "both in"),
        (lambda d: d["boneyard"].pop(), "nowhere"),
        (lambda d: d["hands"][0].append([3, 10]), "not in a double-9"),
        (lambda d: d["hands"][0].append("x"), "hand 0"),
        (lambda d: d["trains"].pop("mexican"), "trains"),
        (lambda d: d["trains"].update({"7": []}), "trains"),
        (lambda d: d.update(trains=[]), "trains"),
        (lambda d: d["trains"].update({"1": [[4, 1]]}), "connect to the engine"),
        (lambda d: d.update(open_doubles=["0"]), "open_doubles"),
        (lambda d: d.update(open_doubles="0"), "open_doubles"),
        (lambda d: d.update(scores=[[1], [2], []]), "same length"),
        (lambda d: d.update(scores=[[1], [2], [3]]), "finished round"),
        (lambda d: d.update(scores=[[-1], [2], [3]]), "scores"),
        (lambda d: d.update(status="paused"), "status"),
        (lambda d: d.update(seed=-5), "seed"),
        (lambda d: d.update(starter=9), "starter"),
        (lambda d: d.update(turn_state={"drawn": "no"}), "turn_state"),
        (lambda d: d.update(turn_state={"must_follow": "0", "tiles_played": 1}), "must_follow"),
        (lambda d: d.update(hands=[[[9, 4], [4, 4]], [], [[0, 0], [3, 9]], [1, 2]]), "hands"),
        (lambda d: d["players"].__setitem__(1, "b" * 41), "1 to 40 printable"),
        (lambda d: d["players"].__setitem__(1, "bo\x00"), "1 to 40 printable"),
        (lambda d: d["players"].__setitem__(1, "   "), "1 to 40 printable"),
    ],
)
def test_s9_import_refuses_impossible_positions(mutate: Any, reason: str) -> None:
    with pytest.raises(InvalidPosition, match=reason) as err:
        import_position(_broken(mutate))
    assert err.value.code == "invalid_position"


def test_s9_import_refuses_doubles_not_followed_and_empty_hands() -> None:
    doc = position(hands=[[[1, 2]], [[1, 3]], [[1, 4]]], trains={"0": [[9, 4], [4, 4], [5, 6]]})
    with pytest.raises(InvalidPosition, match="does not connect"):
        import_position(doc)
    doc = position(hands=[[[1, 2]], [], [[1, 4]]], trains={"0": [[9, 4]]})
    with pytest.raises(InvalidPosition, match="no tiles"):
        import_position(doc)
    with pytest.raises(InvalidPosition, match="a JSON object"):
        import_position([1, 2])


def _out_in_the_opening(opened: list[bool], turn: int) -> dict[str, Any]:
    """Four seats, double-6; seat 1 went out in its opening turn (standard: it waits for the
    others' opening turns)."""
    return position(
        players=4,
        options={"set": 6, "hand_size": 2},
        hands=[[[6, 1], [2, 3]], [], [[6, 4], [4, 4]], [[6, 5], [5, 5]]],
        trains={"1": [[6, 2], [2, 2], [2, 0]]},
        opened=opened,
        turn=turn,
    )


def test_s14_import_refuses_an_opening_lap_that_would_hand_the_turn_to_a_seat_that_went_out() -> (
    None
):
    # Rule 5: the round ends once every player has had their opening turn, so the seats yet to
    # open are the seat on turn and the next ones, clockwise. Here seat 0 would end its opening
    # turn with seat 2 and 3 yet to open, and pass the turn to seat 1, which holds no tile.
    with pytest.raises(InvalidPosition, match="yet to open"):
        import_position(_out_in_the_opening([False, True, False, False], turn=0))
    with pytest.raises(InvalidPosition, match="yet to open"):
        import_position(_out_in_the_opening([True, True, False, False], turn=3))
    state = import_position(_out_in_the_opening([True, True, False, False], turn=2))
    apply(state, 2, play([6, 4], "2"))
    apply(state, 2, Move("end_turn"))
    assert state.turn == 3
    apply(state, 3, play([6, 5], "3"))
    over = apply(state, 3, Move("end_turn"))[-1]
    assert (over["type"], over["reason"], over["out"]) == ("round_over", "out", [1])


def test_s9_import_orients_train_tiles_and_checks_chicken_toes() -> None:
    doc = position(hands=[[[1, 2]], [[1, 3]], [[1, 5]]], trains={"0": [[4, 9], [4, 6]]})
    state = import_position(doc)
    assert [t.to_json() for t in state.trains[0]] == [[9, 4], [4, 6]]
    toes = {"0": [[9, 4], [4, 4], [4, 1], [4, 2]]}
    doc = position(options={"chicken_foot": True}, hands=[[[1, 1]], [[1, 3]], [[1, 5]]],
                   trains=toes, open_doubles=["0"])  # fmt: skip
    assert import_position(doc).ends[0] == 4
    doc["open_doubles"] = []
    with pytest.raises(InvalidPosition, match="open_doubles"):
        import_position(doc)
    bad = {"0": [[9, 4], [4, 4], [4, 1], [1, 2]]}
    doc = position(options={"chicken_foot": True}, hands=[[[1, 1]], [[1, 3]], [[1, 5]]],
                   trains=bad, open_doubles=["0"])  # fmt: skip
    with pytest.raises(InvalidPosition, match="connect"):
        import_position(doc)


def test_s9_mid_turn_exports_round_trip() -> None:
    doc = position(
        hands=[[[4, 4], [1, 2]], [[4, 8], [3, 5]], [[0, 0]]],
        trains={"0": [[9, 4]], "1": [[9, 3]], "2": [[9, 2]]},
        boneyard=[[5, 6]],
    )
    state = import_position(doc)
    apply(state, 0, play([4, 4], "0"))  # after a double
    again = import_position(export_position(state))
    assert legal_moves(again, 0) == legal_moves(state, 0) == [Move("draw")]
    apply(state, 0, Move("draw"))  # after a draw
    again = import_position(export_position(state))
    assert legal_moves(again, 0) == legal_moves(state, 0) == [Move("mark")]
    assert dumps(again) == dumps(state)
    chain = import_position(
        position(hands=[[[9, 4], [4, 4], [4, 2]], [[9, 3]], [[9, 2]]], opened=[False, False, False])
    )
    apply(chain, 0, play([9, 4], "0"))
    apply(chain, 0, play([4, 4], "0"))  # during an opening chain, after a double
    again = import_position(export_position(chain))
    assert legal_moves(again, 0) == legal_moves(chain, 0)
    assert Move("end_turn") in legal_moves(again, 0) and dumps(again) == dumps(chain)
    fresh = new_game(["a", "b"], seed=4)
    assert dumps(import_position(export_position(fresh))) == dumps(fresh)  # waiting_deal


def test_s9_dumps_is_compact_versioned_and_round_trips() -> None:
    state = new_game(["ann", "bo", "cy", "di"], seed=8)  # double-12
    deal(state)
    for _ in range(12):
        assert state.turn is not None
        apply(state, state.turn, legal_moves(state, state.turn)[0])
    data = dumps(state)
    assert data[0] == 2
    assert len(data) <= 4096
    assert dumps(loads(data)) == data
    assert export_position(loads(data)) == export_position(state)


@pytest.mark.parametrize(
    "data", [b"", b"\x02[]", b"\x03[]", b"\x01{", b"\x01[]", b"\x01[1,2,3]", "text"]
)
def test_s9_loads_refuses_corrupt_bytes(data: Any) -> None:
    with pytest.raises(CorruptState) as err:
        loads(data)
    assert err.value.code == "corrupt_state"


@pytest.mark.parametrize("secret", [True, False])
def test_s9_states_stored_with_the_old_mark_count_still_load(secret: bool) -> None:
    """Version 1 held a count of marks in a row (the old blocked-round rule) before ``winners``;
    it is read and dropped."""
    state = new_game(["ann", "bo", "cy"], seed=3)
    deal(state)
    body = orjson.loads(dumps(state)[1:])
    if not secret:
        body.pop()  # states stored before deal secrets existed
        state.deal_secret = None
    old = bytes([1]) + orjson.dumps([*body[:18], 2, *body[18:]])
    assert export_position(loads(old)) == export_position(state)


def test_s9_a_hand_is_seen_by_its_owner_alone() -> None:
    state = new_game(["a", "b", "c"], seed=2)
    events = deal(state)
    public = game_view(state, None)
    assert "hand" not in public
    assert game_view(state, 1)["hand"] == [t.to_json() for t in state.hands[1]]
    assert all(p["hand_size"] == len(state.hands[p["seat"]]) for p in public["players"])
    seat = state.turn
    assert seat is not None
    while legal_moves(state, seat) != [Move("draw")] and state.status == "in_round":
        events = apply(state, seat, legal_moves(state, seat)[0])
        seat = state.turn  # type: ignore[assignment]
        if seat is None:
            break
    drawn = [{"type": "tile_drawn", "seat": 0, "tile": [1, 2]}]
    assert visible_events(drawn, 0) == drawn
    assert visible_events(drawn, 1) == [{"type": "tile_drawn", "seat": 0}]
    assert visible_events(drawn, None) == [{"type": "tile_drawn", "seat": 0}]
    assert events is not None


def test_s9_game_view_shape_before_and_after_the_deal() -> None:
    state = new_game(["a", "b", "c"], seed=2)
    view = game_view(state, None)
    assert view["status"] == "waiting_deal" and view["trains"] == [] and view["engine"] is None
    assert view["round"] == 1 and view["turn"] is None
    deal(state)
    view = game_view(state, 0)
    assert [t["id"] for t in view["trains"]] == ["0", "1", "2", "mexican"]
    assert view["trains"][-1] == {
        "id": "mexican", "owner": None, "tiles": [], "open_end": 9, "marked": False,
        "started": False,
    }  # fmt: skip
    assert view["rules"]["preset"] == "standard"
    assert set(view) >= {"status", "round", "rounds", "engine", "turn", "starter", "players",
                         "trains", "open_doubles", "boneyard_size", "rules", "turn_state",
                         "winners", "hand"}  # fmt: skip


def test_s9_waiting_deal_positions_hold_no_tiles() -> None:
    doc = export_position(new_game(["a", "b"], seed=4))
    assert import_position(doc).status == "waiting_deal"
    doc["hands"][0] = [[1, 2]]
    with pytest.raises(InvalidPosition, match="first deal"):
        import_position(doc)


def test_s9_copy_is_independent() -> None:
    state = new_game(["a", "b", "c"], seed=21)
    deal(state)
    before = dumps(state)
    twin = state.copy()
    assert dumps(twin) == before
    seat = twin.turn
    assert seat is not None
    apply(twin, seat, legal_moves(twin, seat)[0])
    assert dumps(state) == before and dumps(twin) != before
    assert legal_moves(state, seat) and legal_moves(new_game(["a", "b"], seed=1), 0) == []


def test_s2_player_names_are_short_printable_text_on_create_and_import() -> None:
    """One rule for names whichever way a game starts: views show them verbatim."""
    assert new_game(["ann", "b" * 40, "Zoë 🚂"], seed=1).players[1] == "b" * 40
    for bad in ("b" * 41, "bo\x00", "\t", ""):
        with pytest.raises(InvalidRules, match="1 to 40 printable"):
            new_game(["ann", bad], seed=1)


U64 = 2**64 - 1  # orjson's largest integer: beyond it, or summed past it, nothing encodes


def _round_two(**extra: Any) -> dict[str, Any]:
    return position(round=2, hands=[[[1, 2]], [[1, 3]], [[1, 4]]], **extra)


def test_s14_import_bounds_scores_by_the_pips_of_the_set() -> None:
    rules = import_position(_round_two()).rules
    top = rules.max_round_score  # double-9 (3 players): 495 pips, the double-blank at 50
    assert top == 9 * 10 * 11 // 2 + rules.double_blank_points
    assert import_position(_round_two(scores=[[top], [0], [top]])).scores == [[top], [0], [top]]
    for bad in (top + 1, U64, 2**64):
        with pytest.raises(InvalidPosition, match=f"integer 0..{top}"):
            import_position(_round_two(scores=[[bad], [0], [0]]))
    too_many = [[0] * (rules.rounds + 1)] * 3
    with pytest.raises(InvalidPosition, match=f"at most {rules.rounds} round scores"):
        import_position(_round_two(scores=too_many))


def test_s14_import_bounds_tiles_played_by_the_set_size() -> None:
    opening = {"opened": [False, True, True]}  # a chain opening may play many tiles
    most = import_position(_round_two()).rules.tiles
    state = import_position(_round_two(**opening, turn_state={"tiles_played": most}))
    assert state.tiles_played == most == 55
    for bad in (most + 1, U64):
        with pytest.raises(InvalidPosition, match=f"tiles_played \\(an integer 0..{most}"):
            import_position(_round_two(**opening, turn_state={"tiles_played": bad}))


def test_s9_loads_refuses_numbers_beyond_the_game_as_corrupt() -> None:
    """A state stored before imports were bounded answers CorruptState, never a crash later."""
    state = import_position(_round_two())
    for field, value in (("scores", [[U64], [0], [0]]), ("tiles_played", U64), ("round", 99)):
        broken = copy.copy(state)
        setattr(broken, field, value)
        with pytest.raises(CorruptState, match="beyond what the game can reach"):
            loads(dumps(broken))
    assert loads(dumps(state)).scores == state.scores
