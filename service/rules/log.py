"""A game's log: one compact record per applied change, and the replay that rebuilds entries.

The store keeps records, not entries: a record holds only what the engine cannot recompute (the
action, who made it, when). The engine is deterministic, so replaying the records from the
creation record rebuilds every entry with its events, and a finished 13-round game costs a few
bytes per move instead of a few hundred.

Wire form of a record: one byte ``kind * 8 + by``, a varint of the time since the creation
(the creation record holds the absolute time in milliseconds), a varint ``seat + 1`` (0: none),
then what the kind needs: a play's tile (its index in the set order) and train index; a join's
name; a seat change's bot level (empty: reopened), then, when the change renames the seat, a
NUL byte and its new name (no level holds one; without it the seat keeps its name); the
creation's engine state.

Times since the creation count ticks of ``TICK_MS`` milliseconds, which the creation record
announces by its kind (logs made before ticks count milliseconds): a 3-byte varint then
covers 5.8 hours instead of 35 minutes, so an evening's game keeps 3-byte times.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from functools import cached_property
from typing import Any

from service.rules import codec
from service.rules.engine import apply, deal
from service.rules.errors import CorruptState
from service.rules.events import Event
from service.rules.history import Chronicle
from service.rules.observer import turn_moves
from service.rules.position import export_position
from service.rules.state import GameState
from service.rules.tiles import DRAW, END_TURN, MARK, Move, Tile
from service.rules.vocabulary import MEXICAN, Action, Role


class By(StrEnum):
    """Who made a change: a seat's token, the host, the server for a bot seat, the server for a
    seat whose turn time ran out, or the server dealing by itself."""

    PLAYER = "player"
    HOST = "host"
    BOT = "bot"
    CLOCK = "clock"
    AUTO = "auto"


#: Who acts for no seat: their entries show ``seat`` null (a seat change names its seat in its
#: action).
NO_SEAT = frozenset({By.HOST, By.AUTO})


class EntryAction(StrEnum):
    """The ``action`` of an entry that is no move (a move's is its own ``Action``)."""

    CREATE = "create"
    DEAL = "deal"
    JOIN = "join"
    SEAT = "seat"
    REMATCH = "rematch"
    TRANSFER = "transfer"


class Kind(IntEnum):
    CREATE = 0
    DEAL = 1
    PLAY = 2
    DRAW = 3
    MARK = 4
    END_TURN = 5
    JOIN = 6
    SEAT = 7
    # 8 is the creation's wire form in ticks (_CREATE_IN_TICKS)
    REMATCH = 9
    TRANSFER = 10  # a seat moved to another device: a new token, the old one revoked


#: Between a seat change's bot level and the name it gives the seat, on the wire.
_NAMED = b"\x00"
#: Milliseconds per tick of the times in a game's log (entries' ``at`` are this precise).
TICK_MS = 10
#: The creation record's kind on the wire when the game's later times count ``TICK_MS`` ticks.
_CREATE_IN_TICKS = 8

_BY = tuple(By)
_MOVE_KINDS = {Action.PLAY: Kind.PLAY, Action.DRAW: Kind.DRAW, Action.MARK: Kind.MARK}
_MOVE_KINDS[Action.END_TURN] = Kind.END_TURN
_SIMPLE_MOVES = {Kind.DRAW: DRAW, Kind.MARK: MARK, Kind.END_TURN: END_TURN}
_ACTION_NAMES = {
    Kind.CREATE: EntryAction.CREATE,
    Kind.DEAL: EntryAction.DEAL,
    Kind.JOIN: EntryAction.JOIN,
    Kind.SEAT: EntryAction.SEAT,
    Kind.REMATCH: EntryAction.REMATCH,
    Kind.TRANSFER: EntryAction.TRANSFER,
}


@dataclass(frozen=True, slots=True)
class Record:
    """One applied change. ``text`` is a join's name or a seat change's bot level ("" reopens);
    ``name`` a seat change's new name for its seat (None: the name it had, or its bot's for the
    server's fill); ``state`` the creation's engine state; ``tick_ms`` the creation's unit of
    the log's later times (1: a log made before ticks)."""

    kind: Kind
    by: By
    at_ms: int
    seat: int | None = None
    move: Move | None = None
    text: str = ""
    state: bytes = b""
    tick_ms: int = 1
    name: str | None = None

    @classmethod
    def of_move(cls, move: Move, seat: int, by: By, at_ms: int) -> Record:
        return cls(_MOVE_KINDS[move.action], by, at_ms, seat, move)


def _varint(value: int, out: bytearray) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _tile_index(tile: Tile) -> int:
    lo, hi = (tile.a, tile.b) if tile.a <= tile.b else (tile.b, tile.a)
    return hi * (hi + 1) // 2 + lo


def _index_tile(index: int) -> Tile:
    hi = 0
    while (hi + 1) * (hi + 2) // 2 <= index:
        hi += 1
    return Tile.of(index - hi * (hi + 1) // 2, hi)


def encode(record: Record, created_ms: int, n_players: int, tick_ms: int = 1) -> bytes:
    """The record's wire form; times count ``tick_ms`` ticks since the game's creation."""
    ticked = record.kind == Kind.CREATE and record.tick_ms == TICK_MS
    kind = _CREATE_IN_TICKS if ticked else int(record.kind)
    out = bytearray([kind * 8 + _BY.index(record.by)])
    since = max(record.at_ms - created_ms, 0) // tick_ms
    _varint(record.at_ms if record.kind == Kind.CREATE else since, out)
    _varint(0 if record.seat is None else record.seat + 1, out)
    if record.kind == Kind.PLAY and record.move is not None:
        assert record.move.tile is not None and record.move.train is not None
        _varint(_tile_index(record.move.tile), out)
        train = record.move.train
        _varint(n_players if train == MEXICAN else int(train), out)
    elif record.kind in (Kind.JOIN, Kind.SEAT, Kind.REMATCH):
        out += record.text.encode()
        if record.kind == Kind.SEAT and record.name is not None:
            out += _NAMED + record.name.encode()
    elif record.kind == Kind.CREATE:
        out += record.state
    return bytes(out)


def decode(data: bytes, created_ms: int, n_players: int, tick_ms: int = 1) -> Record:
    """The record of a wire form (``created_ms``, ``n_players`` and ``tick_ms``, as the
    creation record gave them, are unused for the creation itself)."""
    try:
        ticked = data[0] >> 3 == _CREATE_IN_TICKS
        kind, by = Kind.CREATE if ticked else Kind(data[0] >> 3), _BY[data[0] & 7]
        at, pos = _read_varint(data, 1)
        seat_plus, pos = _read_varint(data, pos)
    except (IndexError, ValueError) as err:
        raise CorruptState(f"unreadable log record: {err}") from None
    seat = seat_plus - 1 if seat_plus else None
    if kind == Kind.CREATE:
        return Record(kind, by, at, seat, state=data[pos:], tick_ms=TICK_MS if ticked else 1)
    at = created_ms + at * tick_ms
    if kind == Kind.PLAY:
        tile, pos = _read_varint(data, pos)
        train, pos = _read_varint(data, pos)
        train_id = MEXICAN if train == n_players else str(train)
        return Record(kind, by, at, seat, Move.play(_index_tile(tile), train_id))
    if kind in _SIMPLE_MOVES:
        return Record(kind, by, at, seat, _SIMPLE_MOVES[kind])
    if kind == Kind.SEAT and _NAMED in data[pos:]:
        level, name = data[pos:].split(_NAMED, 1)
        return Record(kind, by, at, seat, text=level.decode(), name=name.decode())
    return Record(kind, by, at, seat, text=data[pos:].decode())


def rfc3339(ms: int) -> str:
    """``2026-12-01T10:00:00.123Z``: UTC with milliseconds, as every entry's ``at``."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def action_of(record: Record) -> dict[str, Any]:
    """The entry's ``action`` object."""
    if record.move is not None:
        return record.move.to_json()
    action: dict[str, Any] = {"action": _ACTION_NAMES[record.kind]}
    if record.kind in (Kind.JOIN, Kind.TRANSFER):
        action["seat"] = record.seat
    elif record.kind == Kind.SEAT:
        action.update(seat=record.seat, bot=record.text or None, open=not record.text)
    elif record.kind == Kind.REMATCH:
        action["game_id"] = record.text
    return action


def seat_events(record: Record) -> list[Event]:
    """The events of a change the engine does not see: a join or a seat change."""
    assert record.seat is not None
    if record.kind == Kind.JOIN:
        return [{"type": "seat_joined", "seat": record.seat, "name": record.text}]
    bot = record.text or None
    return [{"type": "seat_changed", "seat": record.seat, "bot": bot, "open": bot is None}]


@dataclass
class Entry:
    """A rebuilt log entry, unredacted; :meth:`to_json` shows it to one reader."""

    version: int
    record: Record
    events: list[Event]
    position: dict[str, Any] | None = None
    #: Whose turn it is after the entry in a running round, and that seat's legal moves then
    #: (kept when the replayer was asked for them): what that seat's reader is sent with it.
    turn: tuple[int, tuple[Move, ...]] | None = None

    # Cached: a feed's readers each ask these of every entry they are sent.
    @cached_property
    def ends_game(self) -> bool:
        return any(e["type"] == "game_over" for e in self.events)

    @cached_property
    def drawers(self) -> frozenset[int]:
        """Seats that drew in this entry: the only readers besides the host who see more of it
        than the public does."""
        return frozenset(e["seat"] for e in self.events if e["type"] == "tile_drawn")

    def to_json(self, events: list[Event]) -> dict[str, Any]:
        body: dict[str, Any] = {
            "version": self.version,
            "at": rfc3339(self.record.at_ms),
            "seat": None if self.record.by in NO_SEAT else self.record.seat,
            "by": self.record.by,
            "action": action_of(self.record),
            "events": events,
        }
        if self.position is not None:
            body["position"] = self.position
        return body


class Replayer:
    """Rebuilds entries from records, in order, on its own copy of the game.

    ``positions`` adds the position right after each deal (the history's replay anchors);
    ``moves``, the legal moves of the seat whose turn follows each entry (a stream's).
    """

    def __init__(self, *, positions: bool = False, moves: bool = False) -> None:
        self.state: GameState | None = None
        self.version = 0
        self.created_ms = 0
        self.tick_ms = 1
        self.positions = positions
        self.moves = moves

    def feed(self, raw: bytes) -> Entry:
        """The entry of the next record's wire form."""
        return self.apply(self.read(raw))

    def read(self, raw: bytes) -> Record:
        """The next record of a wire form (to :meth:`apply` next)."""
        n = self.state.n_players if self.state is not None else 0
        record = decode(raw, self.created_ms, n, self.tick_ms)
        if record.kind == Kind.CREATE:
            self.created_ms, self.tick_ms = record.at_ms, record.tick_ms
        return record

    def apply(self, record: Record) -> Entry:
        self.version += 1
        events = self._run(record)
        entry = Entry(self.version, record, events)
        if self.positions and record.kind == Kind.DEAL and self.state is not None:
            entry.position = export_position(self.state)
        if self.moves and self.state is not None and self.state.turn is not None:
            moves = turn_moves(self.state, Role.of_seat(self.state.turn))
            if moves is not None:
                entry.turn = (self.state.turn, tuple(moves))
        return entry

    def _run(self, record: Record) -> list[Event]:
        if record.kind == Kind.CREATE:
            self.state = codec.loads(record.state)
            return []
        state = self.state
        if state is None:
            raise CorruptState("a log must begin with its creation")
        if record.kind == Kind.DEAL:
            return deal(state)
        if record.move is not None and record.seat is not None:
            return apply(state, record.seat, record.move)
        if record.kind == Kind.REMATCH:
            return []  # the game is over; the entry names the next game (its action)
        if record.kind == Kind.TRANSFER:
            return []  # the game is as it was: only the seat's token changed
        if record.seat is not None:
            _name_seat(state.players, record.seat, record)
        return seat_events(record)


def _name_seat(names: list[str], seat: int, record: Record) -> None:
    """A join names the seat for the person who took it; a seat change that carries a name
    gives it that one. A host's change keeps the name: a bot taking over an absent person
    plays on under that person's name."""
    if record.kind == Kind.JOIN:
        names[seat] = record.text
    elif record.kind == Kind.SEAT and record.name is not None:
        names[seat] = record.name
    elif record.kind == Kind.SEAT and record.by == By.AUTO and record.text:
        names[seat] = _unnamed_fill_name(record.text, seat)


def _unnamed_fill_name(level: str, seat: int) -> str:
    """The seat's name after a server's fill whose record carries none (an older release's):
    the game's stored state names it by level and seat index, and the replay names it alike."""
    return f"{level} {seat}"


def chronicle(raw_log: Iterable[bytes]) -> Chronicle:
    """The clues of a game's current round, from its whole log (every move replayed)."""
    replayer, clues = Replayer(), Chronicle()
    for raw in raw_log:
        record = replayer.read(raw)
        if record.move is not None and record.seat is not None and replayer.state is not None:
            clues.note(replayer.state, record.seat, record.move)
        replayer.apply(record)
    return clues
