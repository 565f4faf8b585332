"""The table of one game: seats, options and the turn clock, kept beside the engine state."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

from service.rules import GameState, Status
from service.rules.events import Event

#: The turn clock's range in seconds (0 is no clock); tests may lower the minimum by a setting.
MIN_TURN_SECONDS = 5
MAX_TURN_SECONDS = 86400

# A turn begins with either of these events: the clock restarts for the seat now on turn.
TURN_STARTS = frozenset({"turn_passed", "round_started"})


class SeatKind(StrEnum):
    PERSON = "person"
    BOT = "bot"
    OPEN = "open"


@dataclass(frozen=True)
class Seat:
    """``invite`` is the digest of an open seat's invite (never the invite itself); ``player``
    the id of the durable player who sits there (a person's, or a bot level's own)."""

    kind: SeatKind
    bot: str | None = None
    invite: str = ""
    player: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "bot": self.bot, "invite": self.invite}
        return {**out, "player": self.player} if self.player else out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Seat:
        return cls(SeatKind(obj["kind"]), obj.get("bot"), obj.get("invite", ""), obj.get("player"))


@dataclass(frozen=True)
class Listing:
    """How a table meets the players' loop: listed in the lobby (``public``), ``rated``, made by
    seeks of one bucket (``seek``) and filled with bots at ``fill_at_ms``; a rematch of
    another game (``rematch_of``), whose seats are claimed until ``claim_until_ms``."""

    public: bool = False
    rated: bool = False
    seek: str = ""
    fill_at_ms: int | None = None
    rematch_of: str = ""
    claim_until_ms: int | None = None
    next_game: str = ""  # the rematch made of this game, once there is one
    ended_ms: int | None = None  # when the game ended (its streams linger for a rematch)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (False, "", None)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Listing:
        return cls(**{f.name: obj[f.name] for f in fields(cls) if f.name in obj})


@dataclass
class Table:
    seats: list[Seat]
    auto_deal: bool = False
    turn_seconds: int = 0
    deadline_ms: int | None = None
    used_invites: list[str] = field(default_factory=list)
    created_ms: int = 0  # log times are kept relative to it
    tick_ms: int = 1  # in ticks of this many milliseconds (1: a game made before ticks)
    seat_changes: int = 0  # seats handed to bots or reopened so far (bounded by the API)
    listing: Listing = field(default_factory=Listing)

    def copy(self) -> Table:
        """A copy to change: seats are replaced, never changed (frozen), so they are shared."""
        return Table(
            list(self.seats),
            self.auto_deal,
            self.turn_seconds,
            self.deadline_ms,
            list(self.used_invites),
            self.created_ms,
            self.tick_ms,
            self.seat_changes,
            self.listing,
        )

    @classmethod
    def of_people(cls, n: int) -> Table:
        return cls([Seat(SeatKind.PERSON) for _ in range(n)])

    @property
    def full(self) -> bool:
        return all(seat.kind != SeatKind.OPEN for seat in self.seats)

    @property
    def rated_ready(self) -> bool:
        """Every seat of a rated table is a durable player or a bot (an unrated one: always)."""
        return not self.listing.rated or all(
            seat.player is not None or seat.kind == SeatKind.BOT for seat in self.seats
        )

    def is_bot(self, seat: int) -> bool:
        return self.seats[seat].kind == SeatKind.BOT

    def overdue(self, now_ms: int) -> bool:
        return self.deadline_ms is not None and now_ms >= self.deadline_ms

    def restart_clock(self, state: GameState, events: list[Event], now_ms: int) -> None:
        """After a change: a person's (or open seat's) new turn gets a fresh deadline; a bot's
        turn, or no turn at all, has none; a turn that goes on keeps its deadline."""
        turn = state.turn
        if (
            not self.turn_seconds
            or state.status != Status.IN_ROUND
            or turn is None
            or self.is_bot(turn)
        ):
            self.deadline_ms = None
        elif self.deadline_ms is None or any(e["type"] in TURN_STARTS for e in events):
            self.deadline_ms = now_ms + self.turn_seconds * 1000

    def bot_player(self, level: str) -> str | None:
        """The player a bot level sits as at this table: its own at a rated one."""
        return f"bot-{level}" if self.listing.rated else None

    def players(self) -> list[str | None]:
        """Each seat's player id (None: nobody durable sits there)."""
        return [seat.player for seat in self.seats]

    def wakes_at(self) -> int | None:
        """When the server next has something to do for this table by itself, if anything:
        the turn clock, filling a seek table with bots, opening a rematch's unclaimed seats. A
        fill time counts only while a seat is open: people who filled the table before it came
        leave nothing to fill, and a time past would bring the worker back at once, for ever."""
        fill_at = None if self.full else self.listing.fill_at_ms
        times = [self.deadline_ms, fill_at, self.listing.claim_until_ms]
        due = [t for t in times if t is not None]
        return min(due) if due else None

    def seat_of_invite(self, digest: str) -> int | None:
        for number, seat in enumerate(self.seats):
            if seat.kind == SeatKind.OPEN and seat.invite and seat.invite == digest:
                return number
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "seats": [seat.to_json() for seat in self.seats],
            "auto_deal": self.auto_deal,
            "turn_seconds": self.turn_seconds,
            "deadline_ms": self.deadline_ms,
            "used_invites": self.used_invites,
            "created_ms": self.created_ms,
            **({"tick_ms": self.tick_ms} if self.tick_ms != 1 else {}),
            **({"seat_changes": self.seat_changes} if self.seat_changes else {}),
            **({"listing": listed} if (listed := self.listing.to_json()) else {}),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Table:
        return cls(
            [Seat.from_json(s) for s in obj["seats"]],
            bool(obj.get("auto_deal")),
            int(obj.get("turn_seconds", 0)),
            obj.get("deadline_ms"),
            list(obj.get("used_invites", [])),
            int(obj.get("created_ms", 0)),
            int(obj.get("tick_ms", 1)),
            int(obj.get("seat_changes", 0)),
            Listing.from_json(obj.get("listing", {})),
        )
