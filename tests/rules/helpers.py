"""Test helpers: random self-play and scenario positions built from a few explicit tiles."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from service.rules import (
    FORMAT,
    GameState,
    Move,
    apply,
    check_invariants,
    deal,
    dumps,
    import_position,
    legal_moves,
    new_game,
)
from service.rules.tiles import full_set

Tiles = list[list[int]]


def play_random_game(
    preset: str,
    n_players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    *,
    check: bool = False,
    on_move: Callable[[GameState, int, list[Move]], None] | None = None,
    max_moves: int = 200_000,
) -> tuple[GameState, int]:
    """Play a whole game with uniformly random legal moves; return (final state, moves)."""
    state = new_game([f"p{i}" for i in range(n_players)], preset, options, seed=seed)
    rng = random.Random(seed)
    moves = 0
    while state.status != "game_over":
        deal(state)
        if check:
            check_invariants(state)
        while state.status == "in_round":
            seat = state.turn
            assert seat is not None
            legal = legal_moves(state, seat)
            assert legal, "a player on turn always has a legal move"
            if on_move is not None:
                on_move(state, seat, legal)
            apply(state, seat, rng.choice(legal))
            moves += 1
            assert moves < max_moves, "the game must end"
            if check:
                check_invariants(state)
    return state, moves


def position(
    *,
    players: int = 3,
    preset: str = "standard",
    options: Mapping[str, Any] | None = None,
    round: int = 1,
    turn: int = 0,
    hands: list[Tiles],
    trains: Mapping[str, Tiles | None] | None = None,
    boneyard: Tiles | None = None,
    opened: list[bool] | None = None,
    marked: list[bool] | None = None,
    open_doubles: list[str] | None = None,
    scores: list[list[int]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A complete position document: every tile not placed explicitly goes to the end of the
    boneyard (after any explicit ``boneyard`` tiles, which are drawn first), or into the hand of
    seat ``rest_to`` when given (to build an empty or short boneyard)."""
    rest_to: int | None = extra.pop("rest_to", None)
    opts = dict(options or {})
    probe = new_game([f"p{i}" for i in range(players)], preset, opts, seed=1)
    top = probe.rules.set
    engine = top - (round - 1)
    all_trains: dict[str, Tiles | None] = {str(s): [] for s in range(players)}
    all_trains["mexican"] = None
    all_trains.update(trains or {})
    used = {(min(t), max(t)) for h in hands for t in h}
    used |= {(min(t), max(t)) for tr in all_trains.values() if tr for t in tr}
    used |= {(min(t), max(t)) for t in boneyard or []}
    used.add((engine, engine))
    rest = [[t.a, t.b] for t in full_set(top) if (t.a, t.b) not in used]
    pile = list(boneyard or [])
    if rest_to is None:
        pile += rest
    else:
        hands = [list(h) for h in hands]
        hands[rest_to] = hands[rest_to] + rest
    doc: dict[str, Any] = {
        "format": FORMAT,
        "players": [f"p{i}" for i in range(players)],
        "rules": {"preset": preset, "options": opts},
        "round": round,
        "engine": engine,
        "turn": turn,
        "opened": opened if opened is not None else [True] * players,
        "hands": hands,
        "boneyard": pile,
        "trains": all_trains,
        "marked": marked if marked is not None else [False] * players,
        "open_doubles": open_doubles or [],
        "scores": scores if scores is not None else [[0] * (round - 1) for _ in range(players)],
    }
    doc.update(extra)
    return doc


def load(**kwargs: Any) -> GameState:
    return import_position(position(**kwargs))


def play(tile: list[int], train: str | int) -> Move:
    return Move.from_json({"action": "play", "tile": tile, "train": str(train)})


def plays(state: GameState, seat: int | None = None) -> set[tuple[tuple[int, int], str]]:
    """Legal plays as a set of ((a, b), train id) for compact assertions."""
    seat = state.turn if seat is None else seat
    assert seat is not None
    out = set()
    for m in legal_moves(state, seat):
        if m.action == "play":
            assert m.tile is not None and m.train is not None
            out.add(((m.tile.a, m.tile.b), m.train))
    return out


def actions(state: GameState) -> set[str]:
    assert state.turn is not None
    return {m.action for m in legal_moves(state, state.turn)}


def snapshot(state: GameState) -> bytes:
    return dumps(state)
