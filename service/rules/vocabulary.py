"""The engine's closed vocabularies: every status, action, option value and role is a member here.

``StrEnum`` members are ``str`` instances, so they compare equal to, hash like and serialise
(orjson, ``json``) exactly as their plain string values: the JSON a client sees is the same
whether a value came from an enum or a literal.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

#: The id of the Mexican train (the other trains are named by their owner's seat number).
MEXICAN = "mexican"


class Status(StrEnum):
    """Where a game stands. ``deal`` leads from ``waiting_deal``/``round_over`` to ``in_round``."""

    WAITING_DEAL = "waiting_deal"
    IN_ROUND = "in_round"
    ROUND_OVER = "round_over"
    GAME_OVER = "game_over"


class Action(StrEnum):
    """The ``action`` of a move object."""

    PLAY = "play"
    DRAW = "draw"
    MARK = "mark"
    END_TURN = "end_turn"


class RoundOverReason(StrEnum):
    """Why a round ended: a player went out, or, the boneyard empty, no player could play a
    tile any more (docs/rules.md section 8; a mark can block before every player has marked)."""

    OUT = "out"
    BLOCKED = "blocked"


class Preset(StrEnum):
    STANDARD = "standard"
    TOURNAMENT = "tournament"
    CLASSIC = "classic"


class EngineSource(StrEnum):
    """Where the round's engine comes from: a player's hand, or set aside before the deal."""

    FROM_HAND = "from_hand"
    SET_ASIDE = "set_aside"


class Opening(StrEnum):
    """The opening turn: a chain of tiles on the own train, or a single tile."""

    CHAIN = "chain"
    SINGLE = "single"


class OpeningNoPlay(StrEnum):
    """What a player who cannot start their train does on the opening turn."""

    MARK = "mark"
    DRAW_ONE = "draw_one"
    DRAW_UNTIL = "draw_until"


class DoubleFollow(StrEnum):
    """Where the tile following one's own double may go: any open train, or on the double."""

    ANY = "any"
    SATISFY = "satisfy"


class RoleKind(StrEnum):
    HOST = "host"
    TABLE = "table"
    SEAT = "seat"
    PUBLIC = "public"


@dataclass(frozen=True, slots=True)
class Role:
    """Who is asking: the host, the table, one seat, or the public (no token).

    The table (a front end's credential for running the table) sees what the public sees. Use
    the shared values ``Role.HOST``, ``Role.TABLE``, ``Role.PUBLIC`` and ``Role.of_seat(n)``;
    ``seat`` is the seat number for a seat role and ``None`` otherwise.
    """

    kind: RoleKind
    seat: int | None = None

    HOST: ClassVar[Role]
    TABLE: ClassVar[Role]
    PUBLIC: ClassVar[Role]

    @staticmethod
    def of_seat(seat: int) -> Role:
        if 0 <= seat < len(_SEATS):
            return _SEATS[seat]
        return Role(RoleKind.SEAT, seat)

    @property
    def is_host(self) -> bool:
        return self.kind is RoleKind.HOST

    @property
    def is_seat(self) -> bool:
        return self.kind is RoleKind.SEAT

    @property
    def runs_table(self) -> bool:
        """Deals and changes seats: the host, or the table token."""
        return self.kind is RoleKind.HOST or self.kind is RoleKind.TABLE

    def __str__(self) -> str:
        return f"seat {self.seat}" if self.seat is not None else str(self.kind)


Role.HOST = Role(RoleKind.HOST)
Role.TABLE = Role(RoleKind.TABLE)
Role.PUBLIC = Role(RoleKind.PUBLIC)
# Seat roles are made once: identifying a token on every request allocates nothing.
_SEATS = tuple(Role(RoleKind.SEAT, seat) for seat in range(32))
