"""What the table learns from a round's moves: the clues a sampler must respect.

A move can tell more than the tile it shows. A seat may draw or mark only when it has no play,
so that move reveals its hand then held no tile bearing any end open to it; starting an empty
Mexican train where ``mexican_needs_own_blocked`` holds reveals the same about its own train.
A :class:`Chronicle` keeps, in order, every such fact of the current round with every play
and draw; :meth:`Chronicle.seen_by` gives one seat's copy, without the tiles others drew.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from service.rules.engine import in_opening_turn, oldest_open_double, own_double_to_follow
from service.rules.state import GameState
from service.rules.tiles import Move, Tile
from service.rules.vocabulary import Action

__all__ = ["Chronicle", "Clue", "ClueKind", "open_pips"]


class ClueKind(StrEnum):
    PLAYED = "played"  # the seat played ``tile`` (public)
    DREW = "drew"  # the seat drew the boneyard's next tile (``tile`` only for the drawer)
    LACKS = "lacks"  # the seat's hand then held no tile bearing any of ``pips``


@dataclass(frozen=True, slots=True)
class Clue:
    kind: ClueKind
    seat: int
    tile: Tile | None = None
    pips: frozenset[int] = frozenset()


def open_pips(state: GameState, seat: int) -> frozenset[int]:
    """The ends ``seat`` could play on now if its own train had no play (a draw or a mark
    says it had none): the own train in an opening turn, the double to follow or the oldest
    open double, else its own, the marked trains and the Mexican train."""
    if in_opening_turn(state, seat):
        trains: Sequence[int] = (seat,)
    else:
        duty = own_double_to_follow(state)
        if duty is None:
            duty = oldest_open_double(state)
        if duty is not None:
            trains = (duty,)
        else:
            n = state.n_players
            trains = [t for t in range(n) if t == seat or state.marked[t]] + [n]
    return frozenset(state.ends[t] for t in trains)


def _starts_guarded_mexican(state: GameState, seat: int, move: Move) -> bool:
    """A later-turn play that starts the Mexican train where only a blocked seat may."""
    n = state.n_players
    return (
        move.train is not None
        and state.train_index(move.train) == n
        and not state.trains[n]
        and state.rules.mexican_needs_own_blocked
        and not in_opening_turn(state, seat)
        and own_double_to_follow(state) is None
        and oldest_open_double(state) is None
    )


class Chronicle:
    """The clues of the current round, in order; :meth:`note` each move before it applies."""

    __slots__ = ("_round", "clues")

    def __init__(self) -> None:
        self._round = 0
        self.clues: list[Clue] = []

    def note(self, state: GameState, seat: int, move: Move) -> None:
        """Record what ``seat``'s legal ``move`` reveals (``state`` is from before it)."""
        if state.round != self._round:
            self._round, self.clues = state.round, []
        action, clues = move.action, self.clues
        if action == Action.DRAW or action == Action.MARK:
            clues.append(Clue(ClueKind.LACKS, seat, pips=open_pips(state, seat)))
            if action == Action.DRAW:
                clues.append(Clue(ClueKind.DREW, seat, state.boneyard[0]))
        elif action == Action.PLAY and move.tile is not None:
            if _starts_guarded_mexican(state, seat, move):
                end = state.ends[seat]
                clues.append(Clue(ClueKind.LACKS, seat, pips=frozenset((end,))))
            clues.append(Clue(ClueKind.PLAYED, seat, move.tile.normal))

    def seen_by(self, seat: int, round_no: int) -> tuple[Clue, ...]:
        """The clues of round ``round_no`` as ``seat`` knows them: the tiles other seats drew
        are hidden (none before the round's first move)."""
        if round_no != self._round:
            return ()
        return tuple(
            Clue(ClueKind.DREW, c.seat) if c.kind == ClueKind.DREW and c.seat != seat else c
            for c in self.clues
        )
