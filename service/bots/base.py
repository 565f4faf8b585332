"""The one bot interface, shared by HTTP and in-process play, and helpers every strategy uses.

A bot sees exactly what a seat sees over HTTP: the game view JSON (including its own ``hand``;
``view["turn"]`` is its seat, since it is only asked on its turn) and the legal moves.
Bots must depend on nothing else (not ``game_id``/``version``, not the order of ``moves``), so
the same seed gives the same games in-process and over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from service.rules import Action, Move

View = dict[str, Any]
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
    return [norm(t) for t in view.get("hand") or []]


def seat_of(view: View) -> int:
    return int(view["turn"])


def train_by_id(view: View) -> dict[str, dict[str, Any]]:
    return {str(t["id"]): t for t in view.get("trains") or []}


def plays(moves: Iterable[Move]) -> list[Move]:
    return [m for m in moves if m.action == Action.PLAY and m.tile is not None]


def play_tile(move: Move) -> TileT:
    assert move.tile is not None
    return norm(move.tile)


def other_end(tile: TileT, end: int) -> int:
    """The pip left open after placing ``tile`` on an end showing ``end``."""
    return tile[1] if tile[0] == end else tile[0]


def is_opening(view: View) -> bool:
    """True while the seat to move has not finished its opening turn of this round."""
    seat = seat_of(view)
    for p in view.get("players") or []:
        if int(p["seat"]) == seat:
            return not bool(p.get("opened", True))
    return False
