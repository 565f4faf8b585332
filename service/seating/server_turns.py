"""What the server plays by itself after a change: automatic deals, bot seats, late turns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from service.bots.base import Bot
from service.bots.registry import make_bot
from service.rules import GameState, Status, apply, deal, legal_moves, seat_view
from service.rules.events import Event
from service.rules.log import By, Kind, Record, seat_events

from .names import bot_seat_name
from .table import Seat, SeatKind, Table

#: The strategy that plays a seat whose turn time ran out, and fills a seek table's open seats.
CLOCK_BOT = "planner"
FILL_BOT = "planner"
# Bounds one request's work even for a table of bots only: a whole round is far below it.
MAX_SERVER_MOVES = 2000
_BETWEEN_ROUNDS = (Status.WAITING_DEAL, Status.ROUND_OVER)


@dataclass(frozen=True)
class Applied:
    """A change applied to the state, with the events it produced (unredacted)."""

    record: Record
    events: list[Event]


def bot_seed(state: GameState, version: int) -> int:
    """A bot's seed for the decision made at ``version``: games replay the same way."""
    return (state.seed * 1_000_003 + version) % (1 << 63)


def server_turns(
    state: GameState,
    table: Table,
    now_ms: int,
    version: int,
    spent: Callable[[], bool] | None = None,
) -> list[Applied]:
    """Apply every change the server makes by itself, starting after ``version``: deal when
    ``auto_deal`` and every seat is filled, move for bot seats, and finish a person's turn that
    ran out of time as :data:`CLOCK_BOT` would. Stops where a person must act, or once
    ``spent()`` says the caller's budget is used (:func:`server_move_due` then tells that more
    is left)."""
    done: list[Applied] = []
    while len(done) < MAX_SERVER_MOVES and not (spent is not None and spent()):
        step = _next(state, table, now_ms, version + len(done))
        if step is None:
            break
        table.restart_clock(state, step.events, now_ms)
        done.append(step)
    return done


def server_move_due(state: GameState, table: Table, now_ms: int) -> bool:
    """Whether the server has a change to make now (what :func:`server_turns` would apply next)."""
    return (
        _fill_due(table, now_ms) is not None
        or _claims_due(table, now_ms)
        or _auto_deal_due(state, table)
        or _player(state, table, now_ms) is not None
    )


def _claims_due(table: Table, now_ms: int) -> bool:
    """A rematch's claim window is over (the worker opens the seats nobody claimed)."""
    until = table.listing.claim_until_ms
    return until is not None and now_ms >= until


def _fill_due(table: Table, now_ms: int) -> int | None:
    """The open seat a seek table hands to a bot now, its wait for people being over."""
    fill_at = table.listing.fill_at_ms
    if fill_at is None or now_ms < fill_at:
        return None
    return next((n for n, seat in enumerate(table.seats) if seat.kind == SeatKind.OPEN), None)


def _auto_deal_due(state: GameState, table: Table) -> bool:
    """A full table deals by itself, but not a rematch while its seats may still be claimed: a
    seat opened mid-round would hold up the game."""
    return (
        state.status in _BETWEEN_ROUNDS
        and table.auto_deal
        and table.full
        and table.rated_ready
        and table.listing.claim_until_ms is None
    )


def _player(state: GameState, table: Table, now_ms: int) -> tuple[By, str] | None:
    """Who the server plays the turn as (a bot seat, or the clock for a late person), if any."""
    if state.status != Status.IN_ROUND or state.turn is None:
        return None
    seat_bot = table.seats[state.turn].bot
    if table.is_bot(state.turn) and seat_bot is not None:
        return By.BOT, seat_bot
    if table.overdue(now_ms):
        return By.CLOCK, CLOCK_BOT
    return None


def _next(state: GameState, table: Table, now_ms: int, version: int) -> Applied | None:
    if (seat := _fill_due(table, now_ms)) is not None:
        return _fill(state, table, seat, now_ms)
    if _auto_deal_due(state, table):
        return Applied(Record(Kind.DEAL, By.AUTO, now_ms), deal(state))
    player = _player(state, table, now_ms)
    if player is None or state.turn is None:
        return None
    seat, (by, level) = state.turn, player
    bot: Bot = make_bot(level, bot_seed(state, version + 1))
    move = bot.choose(seat_view(state, seat), legal_moves(state, seat))
    events = apply(state, seat, move)
    return Applied(Record.of_move(move, seat, by, now_ms), events)


def _fill(state: GameState, table: Table, seat: int, now_ms: int) -> Applied:
    """Hand an open seat of a seek table to :data:`FILL_BOT`; once none is left, the table
    waits for nobody any more."""
    record = give_to_fill_bot(state, table, seat, now_ms)
    if table.full:
        table.listing = replace(table.listing, fill_at_ms=None)
    return Applied(record, seat_events(record))


def give_to_fill_bot(state: GameState, table: Table, seat: int, now_ms: int) -> Record:
    """The server's own handing of ``seat`` to :data:`FILL_BOT` (a seek table's fill, a rated
    table's seat whose token nobody holds), named as the bot's: its record carries the name,
    so the log's replay names the seat as the state does."""
    table.seats[seat] = Seat(SeatKind.BOT, FILL_BOT, player=table.bot_player(FILL_BOT))
    name = state.players[seat] = bot_seat_name(FILL_BOT, seat)
    return Record(Kind.SEAT, By.AUTO, now_ms, seat, text=FILL_BOT, name=name)
