"""Hypothesis property tests over random games: every preset, 2-14 players, random options.

After every move: the docs/rules.md section 9 invariants hold; every listed move applies (the one
chosen is applied, and the list is checked against a fresh copy); a play or action that is not
listed is refused and leaves the state byte-for-byte unchanged; the game ends; positions and
storage bytes round-trip at every point.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rules import (
    MEXICAN,
    PRESETS,
    IllegalMove,
    InvalidMove,
    InvalidRules,
    Move,
    apply,
    check_invariants,
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
from service.rules.options import MAX_PLAYERS, SETS
from service.rules.tiles import full_set


@st.composite
def games(draw: st.DrawFn) -> tuple[str, int, dict[str, Any], int]:
    preset = draw(st.sampled_from(PRESETS))
    n = draw(st.integers(2, MAX_PLAYERS[preset]))
    options: dict[str, Any] = {}
    if preset != "classic" and draw(st.booleans()):
        tile_set = draw(st.sampled_from(SETS))
        options["set"] = tile_set
        room = ((tile_set + 1) * (tile_set + 2) // 2 - 2) // n
        options["hand_size"] = draw(st.integers(1, max(1, min(room, 16))))
    for name, values in (
        ("engine_source", ["from_hand", "set_aside"]),
        ("opening", ["chain", "single"]),
        ("opening_no_play", ["mark", "draw_one", "draw_until"]),
        ("opening_out_waits", [True, False]),
        ("mexican_needs_own_blocked", [True, False]),
        ("double_follow", ["any", "satisfy"]),
        ("chicken_foot", [True, False]),
        ("double_blank_points", [0, 25, 50]),
    ):
        if draw(st.booleans()):
            options[name] = draw(st.sampled_from(values))
    options["rounds"] = draw(st.integers(1, 2))
    return preset, n, options, draw(st.integers(0, 2**63 - 1))


def _not_listed(state: Any, legal: list[Move], rng: random.Random) -> list[Move]:
    """A few moves that are well-formed but not in the legal list."""
    trains = [*map(str, range(state.n_players)), MEXICAN]
    candidates = [Move.play(rng.choice(full_set(state.rules.set)), rng.choice(trains))
                  for _ in range(3)]  # fmt: skip
    candidates += [Move("draw"), Move("mark"), Move("end_turn")]
    return [m for m in candidates if m not in legal]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(games())
def test_s9_random_games_keep_every_invariant(game: tuple[str, int, dict[str, Any], int]) -> None:
    preset, n, options, seed = game
    try:
        state = new_game([f"p{i}" for i in range(n)], preset, options, seed=seed)
    except InvalidRules:
        return  # an undealable combination: refusing it is the correct behaviour
    rng = random.Random(seed)
    moves = 0
    while state.status != "game_over":
        deal(state)
        check_invariants(state)
        while state.status == "in_round":
            seat = state.turn
            assert seat is not None
            legal = legal_moves(state, seat)
            assert legal
            assert all(legal_moves(state, s) == [] for s in range(n) if s != seat)
            before = dumps(state)
            for bad in _not_listed(state, legal, rng):
                try:
                    apply(state, seat, bad)
                except (IllegalMove, InvalidMove) as err:
                    assert err.code in ("illegal_move", "invalid_move", "tile_not_in_set")
                    assert str(err) and "not legal now" not in str(err), err  # says why
                else:
                    raise AssertionError(f"{bad} was applied but not listed in {legal}")
                assert dumps(state) == before
            if rng.random() < 0.1:
                assert dumps(loads(before)) == before
                again = import_position(export_position(state))
                assert legal_moves(again, seat) == legal
            # every listed move applies (on copies), then one of them is played for real
            for move in rng.sample(legal, min(3, len(legal))):
                apply(state.copy(), seat, move)
            assert dumps(state) == before
            apply(state, seat, rng.choice(legal))
            moves += 1
            assert moves < 20_000, "the game must end"
            check_invariants(state)
    assert state.winners


class _PublicModel:
    """What a client can rebuild from the public events alone."""

    def __init__(self) -> None:
        self.trains: dict[str, list[list[int]]] = {}
        self.marked: set[int] = set()
        self.open: list[str] = []
        self.turn: int | None = None

    def feed(self, events: list[dict[str, Any]], n: int) -> None:
        for e in events:
            kind = e["type"]
            if kind == "round_started":
                self.trains = {**{str(s): [] for s in range(n)}, MEXICAN: []}
                self.marked, self.open, self.turn = set(), [], e["starter"]
            elif kind == "tile_played":
                self.trains[e["train"]].append(e["tile"])
            elif kind == "marker_placed":
                self.marked.add(e["seat"])
            elif kind == "marker_removed":
                self.marked.discard(e["seat"])
            elif kind == "double_opened":
                self.open.append(e["train"])
            elif kind == "double_satisfied":
                self.open.remove(e["train"])
            elif kind == "turn_passed":
                self.turn = e["seat"]
            elif kind == "round_over":
                self.turn = None
            elif kind == "tile_drawn":
                assert "tile" not in e  # hidden from the public

    def check(self, view: dict[str, Any]) -> None:
        assert {t["id"]: t["tiles"] for t in view["trains"]} == self.trains
        assert {p["seat"] for p in view["players"] if p["marked"]} == self.marked
        assert view["open_doubles"] == self.open
        assert view["turn"] == self.turn


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_s9_public_events_rebuild_the_public_view(
    game: tuple[str, int, dict[str, Any], int],
) -> None:
    preset, n, options, seed = game
    try:
        state = new_game([f"p{i}" for i in range(n)], preset, options, seed=seed)
    except InvalidRules:
        return
    rng = random.Random(seed)
    model = _PublicModel()
    while state.status != "game_over":
        model.feed(visible_events(deal(state), None), n)
        model.check(game_view(state, None))
        while state.status == "in_round":
            seat = state.turn
            assert seat is not None
            events = apply(state, seat, rng.choice(legal_moves(state, seat)))
            model.feed(visible_events(events, None), n)
            model.check(game_view(state, None))
