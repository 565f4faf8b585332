"""The events ``deal`` and ``apply`` return: one ``TypedDict`` per ``type``, ``Event`` their union.

At run time an event is a plain dict (JSON-ready, no conversion on the way out); the types give
each shape a name for mypy and for readers. ``tile`` is ``[a, b]`` (oriented on a train),
``train`` a train id (``"0"``, ``"1"``, ... or ``"mexican"``).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from service.rules.vocabulary import RoundOverReason


class RoundStarted(TypedDict):
    type: Literal["round_started"]
    round: int
    engine: int
    starter: int


class EnginePlaced(TypedDict):
    """``seat`` is the player who placed it (``from_hand``), ``None`` for ``set_aside``."""

    type: Literal["engine_placed"]
    seat: int | None
    tile: list[int]


class TileDrawn(TypedDict):
    """``tile`` is only present for the drawing seat (``visible_events`` removes it)."""

    type: Literal["tile_drawn"]
    seat: int
    tile: NotRequired[list[int]]


class StarterDraw(TypedDict):
    """A tile turned up to pick the starter (``set_aside``): public."""

    type: Literal["starter_draw"]
    seat: int
    tile: list[int]


class BoneyardShuffled(TypedDict):
    type: Literal["boneyard_shuffled"]
    boneyard_size: int


class TilePlayed(TypedDict):
    type: Literal["tile_played"]
    seat: int
    tile: list[int]
    train: str


class MarkerPlaced(TypedDict):
    type: Literal["marker_placed"]
    seat: int


class MarkerRemoved(TypedDict):
    type: Literal["marker_removed"]
    seat: int


class DoubleOpened(TypedDict):
    type: Literal["double_opened"]
    seat: int
    train: str
    tile: list[int]


class DoubleSatisfied(TypedDict):
    type: Literal["double_satisfied"]
    seat: int
    train: str


class TurnPassed(TypedDict):
    """``seat`` is the seat whose turn it is now."""

    type: Literal["turn_passed"]
    seat: int


class RoundOver(TypedDict):
    type: Literal["round_over"]
    round: int
    reason: RoundOverReason
    out: list[int]
    scores: list[int]
    totals: list[int]


class GameOver(TypedDict):
    type: Literal["game_over"]
    winners: list[int]
    totals: list[int]


class SeatJoined(TypedDict):
    """A person took an open seat through its invite."""

    type: Literal["seat_joined"]
    seat: int
    name: str


class SeatChanged(TypedDict):
    """The host handed a seat to a bot (``bot``) or reopened it (``open``)."""

    type: Literal["seat_changed"]
    seat: int
    bot: str | None
    open: bool


Event = (
    RoundStarted
    | EnginePlaced
    | TileDrawn
    | StarterDraw
    | BoneyardShuffled
    | TilePlayed
    | MarkerPlaced
    | MarkerRemoved
    | DoubleOpened
    | DoubleSatisfied
    | TurnPassed
    | RoundOver
    | GameOver
    | SeatJoined
    | SeatChanged
)


def ends_game(events: list[Event]) -> bool:
    """Whether these events end the game (its last round is over)."""
    return any(event["type"] == "game_over" for event in events)
