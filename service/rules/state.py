"""``GameState``: the whole mutable state of one game.

Trains are indexed ``0 .. P-1`` by owner seat, and ``P`` is the Mexican train. Besides the tiles,
each train keeps two derived numbers so that move generation never rescans a train:
``ends[t]`` is the pip a new tile must bear, and ``pending[t]`` counts the tiles the double at the
end of the train still needs (0 = no open double; 1 normally, up to 3 with ``chicken_foot``).
"""

from __future__ import annotations

from collections.abc import Callable

from service.rules.options import Rules
from service.rules.tiles import MAX_PIP, Move, Tile
from service.rules.vocabulary import MEXICAN, Status

__all__ = ["MEXICAN", "TRAIN_MEMORY", "GameState", "next_end"]

#: The most tiles one double takes (three with ``chicken_foot``): a train's last this many tiles
#: decide its open end and follow count.
TRAIN_MEMORY = 3

_copy = list.copy
_PIPS = range(MAX_PIP + 1)


def next_end(end: int, pending: int, placed: Tile, chicken_foot: bool) -> tuple[int, int]:
    """A train's (open end, follow count) after ``placed`` (oriented) joins it.

    ``pending`` counts the tiles the double at the train's end still needs. A tile played while
    it is open takes one; the open end moves to the tile's outer pip, except that with
    ``chicken_foot`` the double's three tiles all join the double itself, so the end stays its
    pip until the last of them. A double opens a new follow count.
    """
    if pending:
        pending -= 1
        if not (chicken_foot and pending):
            end = placed.b
    else:
        end = placed.b
    if placed.a == placed.b:
        pending = 3 if chicken_foot else 1
    return end, pending


class GameState:
    """Mutable game state. Change it only through ``deal`` and ``apply``."""

    __slots__ = (
        "_legal",
        "boneyard",
        "deal_secret",
        "drawn",
        "ends",
        "engine",
        "hands",
        "index",
        "marked",
        "must_follow",
        "open_doubles",
        "opened",
        "pending",
        "players",
        "round",
        "rules",
        "scores",
        "seed",
        "starter",
        "status",
        "tiles_played",
        "trains",
        "turn",
        "winners",
    )

    def __init__(
        self, players: list[str], rules: Rules, seed: int, deal_secret: str | None = None
    ) -> None:
        n = len(players)
        self.players: list[str] = players
        self.rules: Rules = rules
        self.seed: int = seed
        # 32 hex digits mixed into every deal when the server picked the randomness; None when
        # the seed alone fixes the deals (docs/rules.md §13). The host's position only.
        self.deal_secret: str | None = deal_secret
        self.status: Status = Status.WAITING_DEAL
        self.round: int = 0
        self.engine: int | None = None
        self.starter: int | None = None
        self.turn: int | None = None
        self.hands: list[list[Tile]] = [[] for _ in range(n)]  # sorted, normalised
        # index[seat][pip]: the sorted tiles of that hand bearing pip (a double once), so move
        # generation looks up a train's open end instead of scanning the hand.
        self.index: list[list[list[Tile]]] = [[[] for _ in range(MAX_PIP + 1)] for _ in range(n)]
        self.boneyard: list[Tile] = []  # draw order: boneyard[0] is drawn first
        self.trains: list[list[Tile]] = [[] for _ in range(n + 1)]
        self.ends: list[int] = [0] * (n + 1)
        self.pending: list[int] = [0] * (n + 1)
        self.marked: list[bool] = [False] * n
        self.opened: list[bool] = [False] * n
        self.open_doubles: list[int] = []  # train indices, oldest first
        self.scores: list[list[int]] = [[] for _ in range(n)]
        # Turn state: tiles played this turn, whether the player drew since the turn began or
        # since the last double they played, and the train of a double they must follow.
        self.tiles_played: int = 0
        self.drawn: bool = False
        self.must_follow: int | None = None
        self.winners: list[int] | None = None
        self._legal: list[Move] | None = None  # the legal moves of the seat on turn, once known

    @property
    def n_players(self) -> int:
        return len(self.players)

    def train_id(self, index: int) -> str:
        return MEXICAN if index == len(self.players) else str(index)

    def train_index(self, train_id: str) -> int | None:
        """Index of a train id, or ``None`` when there is no such train."""
        if train_id == MEXICAN:
            return len(self.players)
        if train_id.isdigit() and train_id.isascii() and (train_id == "0" or train_id[0] != "0"):
            index = int(train_id)
            if index < len(self.players):
                return index
        return None

    def legal(self, generate: Callable[[GameState], list[Move]]) -> list[Move]:
        """The legal moves of the seat on turn, made by ``generate`` once per state.

        Callers must not mutate the list (it is shared until the next change)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = generate(self)
        return legal

    def forget_legal(self) -> None:
        self._legal = None

    def totals(self) -> list[int]:
        return [sum(s) for s in self.scores]

    def copy(self) -> GameState:
        """A cheap structural copy (tiles and rules are immutable and shared). ``map`` with
        ``list.copy`` copies the nested lists without a Python frame per list: the ``hard``
        bot copies a state per roll-out."""
        new = GameState.__new__(GameState)
        new.players = list(self.players)
        new.rules = self.rules
        new.seed = self.seed
        new.deal_secret = self.deal_secret
        new.status = self.status
        new.round = self.round
        new.engine = self.engine
        new.starter = self.starter
        new.turn = self.turn
        new.hands = list(map(_copy, self.hands))
        new.index = [list(map(_copy, by_pip)) for by_pip in self.index]
        new.boneyard = list(self.boneyard)
        new.trains = list(map(_copy, self.trains))
        new.ends = list(self.ends)
        new.pending = list(self.pending)
        new.marked = list(self.marked)
        new.opened = list(self.opened)
        new.open_doubles = list(self.open_doubles)
        new.scores = list(map(_copy, self.scores))
        new.tiles_played = self.tiles_played
        new.drawn = self.drawn
        new.must_follow = self.must_follow
        new.winners = None if self.winners is None else list(self.winners)
        # Shared: the cached list is never handed out (callers get copies) and any change of
        # either state drops it, so it stays the legal moves of both until one of them moves.
        new._legal = self._legal
        return new

    def reindex(self) -> None:
        """Rebuild the per-pip hand index from the (sorted) hands."""
        self.index = []
        for hand in self.hands:
            by_pip: list[list[Tile]] = [[] for _ in _PIPS]
            for tile in hand:
                a, b = tile
                by_pip[a].append(tile)
                if b != a:
                    by_pip[b].append(tile)
            self.index.append(by_pip)

    def recompute_trains(self) -> None:
        """Rebuild ``ends``/``pending`` from the tiles (after decode; every request does it).

        Only a train's last ``TRAIN_MEMORY`` tiles are walked: a double sets (its pip, full
        follow count) whatever came before it, and after that many plain tiles any follow count
        is 0 and the end is the last tile's, so earlier tiles cannot change the result.
        Assumes valid chains (the engine and position import build only those)."""
        chicken = self.rules.chicken_foot
        engine = self.engine if self.engine is not None else 0
        for t, tiles in enumerate(self.trains):
            end, pending = engine, 0
            for tile in tiles[-TRAIN_MEMORY:]:
                end, pending = next_end(end, pending, tile, chicken)
            self.ends[t] = end
            self.pending[t] = pending
