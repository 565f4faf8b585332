"""Bad input never crashes: arbitrary JSON gives only the engine's typed errors (rules §9).

Positions, options and moves come from users through the API, so every parser is fed random
JSON and randomly damaged valid documents; the only exceptions allowed are the typed ones.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.rules import (
    PRESETS,
    IllegalMove,
    InvalidMove,
    InvalidPosition,
    InvalidRules,
    Move,
    apply,
    check_invariants,
    deal,
    export_position,
    import_position,
    legal_moves,
    new_game,
    resolve_rules,
)
from service.rules.options import OPTION_NAMES

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 200)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "0", "1", "mexican", "play", "standard", "chain", "x"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["action", "tile", "train", "preset", "options", *OPTION_NAMES]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(json_values)
def test_s6_move_from_json_only_raises_invalid_move(obj: Any) -> None:
    try:
        move = Move.from_json(obj)
    except InvalidMove:
        return
    assert Move.from_json(move.to_json()) == move


@SETTINGS
@given(st.sampled_from([*PRESETS, "x", 3, None]), json_values, st.integers(0, 16))
def test_s3_resolve_rules_only_raises_invalid_rules(preset: Any, options: Any, n: int) -> None:
    try:
        rules = resolve_rules(preset, options, n)
    except InvalidRules:
        return
    doc = rules.to_json()
    assert resolve_rules(doc["preset"], doc["options"], n) == rules


def _mid_game_position(seed: int) -> dict[str, Any]:
    state = new_game(["a", "b", "c"], "standard", {"chicken_foot": seed % 2 == 0}, seed=seed)
    deal(state)
    for _ in range(seed % 40):
        if state.status != "in_round":
            break
        assert state.turn is not None
        apply(state, state.turn, legal_moves(state, state.turn)[-1])
    return export_position(state)


PATHS = st.lists(st.sampled_from([0, 1, 2, 3, "format", "players", "rules", "round", "engine",
                                  "turn", "opened", "hands", "boneyard", "trains", "marked",
                                  "open_doubles", "scores", "status", "turn_state", "starter",
                                  "consecutive_marks", "seed", "0", "1", "mexican", "options",
                                  "preset"]), min_size=1, max_size=4)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 60), PATHS, json_values)
def test_s9_damaged_positions_are_refused_or_valid(seed: int, path: list[Any], value: Any) -> None:
    doc = copy.deepcopy(_mid_game_position(seed))
    # walk the path as far as it goes, then replace what is there with the random value
    node: Any = doc
    for key in path[:-1]:
        inside_dict = isinstance(node, dict) and isinstance(node.get(key), dict | list)
        inside_list = isinstance(node, list) and isinstance(key, int) and key < len(node)
        if inside_dict or inside_list:
            node = node[key]
    last = path[-1]
    if isinstance(node, dict):
        node[str(last)] = value
    elif isinstance(node, list) and isinstance(last, int) and last < len(node):
        node[last] = value
    try:
        state = import_position(doc)
    except InvalidPosition as err:
        assert err.code == "invalid_position" and str(err)
        return
    check_invariants(state)
    if state.status == "in_round" and state.turn is not None:
        for move in legal_moves(state, state.turn):
            apply(state.copy(), state.turn, move)


@SETTINGS
@given(st.integers(0, 30), json_values)
def test_s6_random_moves_are_refused_cleanly(seed: int, obj: Any) -> None:
    doc = _mid_game_position(seed)
    state = import_position(doc)
    try:
        move = Move.from_json(obj)
    except InvalidMove:
        return
    for seat in range(3):
        with contextlib.suppress(InvalidMove, IllegalMove):
            apply(state.copy(), seat, move)
