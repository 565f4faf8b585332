"""Small immutable value objects: ``Tile`` and ``Move`` (the move object of docs/rules.md §12)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from service.rules.errors import InvalidMove
from service.rules.vocabulary import MEXICAN, Action

#: Highest pip number of any supported set (double-18).
MAX_PIP = 18

_PLAY = Action.PLAY


class Tile(NamedTuple):
    """A domino. In a hand it is normalised (``a <= b``); on a train it is oriented so that
    ``a`` touches the previous tile (or the engine) and ``b`` is the outward end."""

    a: int
    b: int

    @classmethod
    def of(cls, x: int, y: int) -> Tile:
        """The normalised tile (tiles are unordered: ``[5, 12]`` is ``[12, 5]``)."""
        return _TILES[x][y] if 0 <= x <= MAX_PIP and 0 <= y <= MAX_PIP else _make(x, y)

    @property
    def pips(self) -> int:
        return self.a + self.b

    @property
    def is_double(self) -> bool:
        return self.a == self.b

    @property
    def normal(self) -> Tile:
        """The hand form of an oriented tile."""
        return Tile.of(self.a, self.b)

    def oriented(self, end: int) -> Tile:
        """This tile turned so that ``end`` comes first (caller guarantees it bears ``end``)."""
        return self if self.a == end else Tile(self.b, self.a)

    def to_json(self) -> list[int]:
        return [self.a, self.b]

    def __str__(self) -> str:
        return f"[{self.a},{self.b}]"


def _make(x: int, y: int) -> Tile:
    return Tile(x, y) if x <= y else Tile(y, x)


# Interned normalised tiles: Tile.of is a table look-up on the hot path.
_TILES: list[list[Tile]] = [[_make(x, y) for y in range(MAX_PIP + 1)] for x in range(MAX_PIP + 1)]


def full_set(n: int) -> list[Tile]:
    """Every tile of a double-``n`` set, in a fixed canonical order (the shuffle input)."""
    return [_TILES[a][b] for a in range(n + 1) for b in range(a, n + 1)]


def parse_tile(obj: Any) -> Tile:
    """A tile from JSON ``[a, b]``; ``ValueError`` when the shape or the numbers are wrong."""
    if not isinstance(obj, list | tuple) or len(obj) != 2:
        raise ValueError("a tile is a list of two integers, like [3, 7]")
    x, y = obj
    if type(x) is not int or type(y) is not int:
        raise ValueError("a tile is a list of two integers, like [3, 7]")
    if not (0 <= x <= MAX_PIP and 0 <= y <= MAX_PIP):
        raise ValueError(f"tile [{x},{y}] has a pip number outside 0..{MAX_PIP}")
    return _TILES[x][y]


@dataclass(frozen=True, slots=True)
class Move:
    """A player action, exactly the move object of the API. ``tile`` is normalised; ``train`` is a
    train id (``"0"``, ``"1"``, ... or ``"mexican"``); both are ``None`` except for ``play``."""

    action: Action
    tile: Tile | None = None
    train: str | None = None

    @classmethod
    def play(cls, tile: Tile, train: str) -> Move:
        return _play_move(tile.normal, train)

    @classmethod
    def from_json(cls, obj: Any) -> Move:
        """Parse a move object; raises ``InvalidMove`` (code ``invalid_move``) on a bad shape.

        Whether the tile belongs to the game's set and the train exists is checked by
        ``apply`` (codes ``tile_not_in_set`` / ``unknown_train``), which knows the game."""
        if not isinstance(obj, dict):
            raise InvalidMove("a move is a JSON object with an 'action'")
        action = obj.get("action")
        if not isinstance(action, str) or action not in _ACTIONS:
            raise InvalidMove(f"unknown action {action!r}; expected one of {', '.join(Action)}")
        extra = set(obj) - ({"action", "tile", "train"} if action == _PLAY else {"action"})
        extra -= {k for k in ("tile", "train") if obj.get(k) is None}
        if extra:
            raise InvalidMove(
                f"unexpected field(s) for {action}: {', '.join(sorted(map(str, extra)))}"
            )
        if action != _PLAY:
            return _SIMPLE[action]
        if "tile" not in obj or "train" not in obj:
            raise InvalidMove("a play needs a 'tile' ([a, b]) and a 'train' id")
        try:
            tile = parse_tile(obj["tile"])
        except ValueError as err:
            raise InvalidMove(str(err)) from None
        train = obj["train"]
        if not isinstance(train, str) or not train:
            raise InvalidMove(
                '\'train\' is a train id string: a seat number like "0", or "mexican"'
            )
        return _play_move(tile, train)

    def to_json(self) -> dict[str, Any]:
        if self.action == _PLAY:
            assert self.tile is not None
            return {"action": _PLAY, "tile": [self.tile.a, self.tile.b], "train": self.train}
        return {"action": self.action}

    def __str__(self) -> str:
        if self.action == _PLAY:
            return f"play {self.tile} on train {self.train}"
        return self.action


DRAW = Move(Action.DRAW)
MARK = Move(Action.MARK)
END_TURN = Move(Action.END_TURN)
_SIMPLE: dict[str, Move] = {Action.DRAW: DRAW, Action.MARK: MARK, Action.END_TURN: END_TURN}
_ACTIONS = frozenset(Action)

# Interned play moves: legal_moves returns the same objects every time, so membership tests in
# apply() hit the identity fast path and the hot loop allocates nothing.
_PLAY_CACHE: dict[tuple[Tile, str], Move] = {}


def _play_move(tile: Tile, train: str) -> Move:
    key = (tile, train)
    move = _PLAY_CACHE.get(key)
    if move is None:
        move = Move(_PLAY, tile, train)
        # only plausible train ids are interned, so hostile input cannot grow the cache
        if train == MEXICAN or (len(train) <= 2 and train.isdigit()):
            _PLAY_CACHE[key] = move
    return move
