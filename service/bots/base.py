"""The one bot interface, shared by HTTP and in-process play, and helpers every strategy uses.

A bot sees exactly what its seat sees: the seat's :class:`~service.rules.View` (its own hand,
the table, every hand size; asked only on its turn) and the legal moves. In process the server
makes that view with ``rules.seat_view``; over HTTP a client reads it from the game view JSON
(``View.from_json``). Bots depend on nothing else (not the game id or version, not the order of
``moves``), so the same seed gives the same games in-process and over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from service.rules import Action, Move, View

TileT = tuple[int, int]

_ACTION_ORDER: dict[str, int] = {action: rank for rank, action in enumerate(Action)}


class Bot(Protocol):
    name: str

    def choose(self, view: View, moves: list[Move]) -> Move: ...


def move_key(move: Move) -> tuple[int, int, int, str]:
    """A total order on moves, so strategies never depend on the order the server listed them."""
    tile = move.tile
    a, b = (min(tile[0], tile[1]), max(tile[0], tile[1])) if tile is not None else (-1, -1)
    return (_ACTION_ORDER.get(move.action, 9), a, b, move.train or "")


def canonical(moves: Iterable[Move]) -> list[Move]:
    return sorted(moves, key=move_key)


def norm(tile: Sequence[int]) -> TileT:
    a, b = int(tile[0]), int(tile[1])
    return (a, b) if a <= b else (b, a)


def pips(tile: Sequence[int]) -> int:
    return int(tile[0]) + int(tile[1])


def hand_of(view: View) -> list[TileT]:
    return [norm(t) for t in view.hand]


def plays(moves: Iterable[Move]) -> list[Move]:
    return [m for m in moves if m.action == Action.PLAY and m.tile is not None]


def play_tile(move: Move) -> TileT:
    assert move.tile is not None
    return norm(move.tile)


def other_end(tile: TileT, end: int) -> int:
    """The pip left open after placing ``tile`` on an end showing ``end``."""
    return tile[1] if tile[0] == end else tile[0]
