"""Small immutable value objects: ``Tile`` and ``Move`` (the move object of docs/rules.md §12)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from service.rules.errors import InvalidMove
from service.rules.vocabulary import MEXICAN, Action

#: Highest pip number of any supported set (double-18).
MAX_PIP = 18
#: The longest train id a move may name ("mexican"; seat numbers have at most two digits).
MAX_TRAIN_ID = 16
#: The fields of a move object (``tile`` and ``train`` for a play alone).
_FIELDS = frozenset({"action", "tile", "train"})

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
    """Every tile of a double-``n`` set, in a fixed canonical order (the shuffle input): a
    fresh list, copied from one made once per set (every deal asks for it)."""
    tiles = _FULL_SETS.get(n)
    if tiles is None:
        tiles = _FULL_SETS[n] = tuple(_TILES[a][b] for a in range(n + 1) for b in range(a, n + 1))
    return list(tiles)


_FULL_SETS: dict[int, tuple[Tile, ...]] = {}


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
        """Parse a move object: the one parse of a move, for the API and its clients alike.

        A field of the wrong shape, or one no move has, raises ``InvalidMove`` naming it
        (``field``); a move without what its action needs, or with a field only another action
        takes, raises it naming none. Whether the tile is of the game's set and the train
        exists is ``apply``'s to say, which knows the game (``tile_not_in_set``,
        ``unknown_train``).

        >>> Move.from_json({"action": "play", "tile": [5, 3], "train": "mexican"})
        Move(action=<Action.PLAY: 'play'>, tile=Tile(a=3, b=5), train='mexican')
        >>> Move.from_json({"action": "draw", "tile": [1, 2]})
        Traceback (most recent call last):
        ...
        service.rules.errors.InvalidMove: draw takes no tile or train
        """
        if not isinstance(obj, dict):
            raise InvalidMove("a move is a JSON object with an 'action'", field="_schema")
        unknown = sorted(str(name) for name in obj if name not in _FIELDS)
        if unknown:
            raise InvalidMove(f"a move has no field {unknown[0]!r}", field=unknown[0])
        action = obj.get("action")
        if not isinstance(action, str) or action not in _ACTIONS:
            expected = ", ".join(Action)
            raise InvalidMove(
                f"unknown action {action!r}; expected one of {expected}", field="action"
            )
        tile, train = obj.get("tile"), obj.get("train")
        if action != _PLAY:
            if tile is not None or train is not None:
                raise InvalidMove(f"{action} takes no tile or train")
            return _SIMPLE[action]
        if tile is None or train is None:
            raise InvalidMove("a play needs a 'tile' ([a, b]) and a 'train' id")
        try:
            parsed = parse_tile(tile)
        except ValueError as err:
            raise InvalidMove(str(err), field="tile") from None
        if not isinstance(train, str) or not 0 < len(train) <= MAX_TRAIN_ID:
            raise InvalidMove(
                '\'train\' is a train id string: a seat number like "0", or "mexican"',
                field="train",
            )
        return _play_move(parsed, train)

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
