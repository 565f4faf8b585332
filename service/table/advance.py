"""What the server plays by itself after a change: automatic deals, bot seats, late turns."""

from __future__ import annotations

from dataclasses import dataclass

from service.bots.base import Bot
from service.bots.registry import make_bot
from service.rules import GameState, Status, apply, deal, game_view, legal_moves
from service.rules.events import Event
from service.rules.log import By, Kind, Record

from .table import Table

#: The strategy that plays a seat whose turn time ran out.
CLOCK_BOT = "planner"
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


def advance(state: GameState, table: Table, now_ms: int, version: int) -> list[Applied]:
    """Apply every change the server makes by itself, starting after ``version``: deal when
    ``auto_deal`` and every seat is filled, move for bot seats, and finish a person's turn that
    ran out of time as :data:`CLOCK_BOT` would. Stops where a person must act."""
    done: list[Applied] = []
    while len(done) < MAX_SERVER_MOVES:
        step = _next(state, table, now_ms, version + len(done))
        if step is None:
            break
        table.restart_clock(state, step.events, now_ms)
        done.append(step)
    return done


def _next(state: GameState, table: Table, now_ms: int, version: int) -> Applied | None:
    if state.status in _BETWEEN_ROUNDS and table.auto_deal and table.full:
        return Applied(Record(Kind.DEAL, By.AUTO, now_ms), deal(state))
    if state.status != Status.IN_ROUND or state.turn is None:
        return None
    seat = state.turn
    seat_bot = table.seats[seat].bot
    if table.is_bot(seat) and seat_bot is not None:
        by, level = By.BOT, seat_bot
    elif table.overdue(now_ms):
        by, level = By.CLOCK, CLOCK_BOT
    else:
        return None
    bot: Bot = make_bot(level, bot_seed(state, version + 1))
    move = bot.choose(game_view(state, seat), legal_moves(state, seat))
    events = apply(state, seat, move)
    return Applied(Record.of_move(move, seat, by, now_ms), events)
