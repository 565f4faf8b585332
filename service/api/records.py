"""Game records as this process last saw them: decoded states and tables, and each game's
record at its last known version. Only the game transaction (:mod:`.transaction`) uses them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Generic, TypeVar

import orjson

from service import rules
from service.seating import Table
from service.store import GameRecord
from service.store.lobby import TableKind

from .remembered import Remembered

T = TypeVar("T")


class Decoded(Generic[T]):
    """Values decoded from stored bytes, once per process, copied per request (a copy costs a
    fifth of a decode). Legal-moves and then the move of one turn load the same bytes, and the
    process that stored a change is often asked for the next request of its game. A kept value
    is never handed out, so no request sees another's changes."""

    def __init__(self, size: int, decode: Callable[[bytes], T], copy: Callable[[T], T]) -> None:
        self.decode = decode
        self.copy = copy
        self.kept: Remembered[bytes, T] = Remembered(size)

    def get(self, raw: bytes) -> T:
        kept = self.kept.get(raw)
        if kept is None:
            kept = self.decode(raw)
            self.kept.put(raw, kept)
        return self.copy(kept)

    def peek(self, raw: bytes) -> T:
        """The value of ``raw`` for a look that keeps nothing: a listing reads thousands of
        games, which would push out of this copy the ones the process is playing."""
        kept = self.kept.get(raw)
        return self.decode(raw) if kept is None else self.copy(kept)

    def keep(self, raw: bytes, value: T) -> None:
        """Remember ``value`` (which its owner no longer changes) as the decoding of ``raw``."""
        self.kept.put(raw, value)


def _decode_state(raw: bytes) -> rules.GameState:
    """The state, with the legal moves of the seat on turn already made: its copies share
    them, so legal-moves and the move that follows (which checks against them) do not each
    generate them again."""
    state = rules.loads(raw)
    if state.turn is not None:
        rules.legal_moves(state, state.turn)
    return state


def _decode_table(raw: bytes) -> Table:
    return Table.from_json(orjson.loads(raw))


# A few KB each.
DECODED = Decoded(256, _decode_state, rules.GameState.copy)
DECODED_TABLES = Decoded(256, _decode_table, Table.copy)


class KnownRecords:
    """Each game's record as this process last read or stored it (a version names a whole
    record: every stored change moves it). A move that names that version in If-Match is judged
    on this copy and sent straight to the compare-and-set, one Redis round trip instead of two;
    see :mod:`.transaction` for when the copy was behind."""

    def __init__(self, size: int) -> None:
        self.by_game: Remembered[str, GameRecord] = Remembered(size)

    def get(self, game_id: str, version: int) -> GameRecord | None:
        record = self.by_game.get(game_id)
        return record if record is not None and record.version == version else None

    def keep(self, record: GameRecord) -> None:
        if record.kept is not None or record.rate_count:
            record = replace(record, kept=None, rate_count=0, rate_reset=0)
        self.by_game.put(record.game_id, record)


KNOWN = KnownRecords(1024)


def lobby_kind(state: rules.GameState, table: Table) -> TableKind:
    """What the lobby's filters look at in a table, which says where the lobby lists it."""
    return TableKind(str(state.rules.preset), state.n_players, table.turn_seconds)


def table_of(record: GameRecord, state: rules.GameState, *, keep: bool = True) -> Table:
    """The stored table; a game stored without one has a person in every seat. ``keep``:
    remember its decoding (False for a look at many games, see :meth:`Decoded.peek`)."""
    if not record.table:
        return Table.of_people(state.n_players)
    if not keep:
        return DECODED_TABLES.peek(record.table)
    return DECODED_TABLES.get(record.table)
