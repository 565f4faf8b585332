"""A game's table: who sits in each seat (a person, a server bot, or nobody yet), the table
options, the turn clock, and the moves the server makes for bot seats, late turns and deals.

Pure decisions over the engine and the bot strategies; the API stores what they return.
"""

from .names import bot_seat_name, open_seat_name
from .server_turns import Applied, bot_seed, server_move_due, server_turns
from .table import (
    MAX_TURN_SECONDS,
    MIN_TURN_SECONDS,
    TURN_STARTS,
    Listing,
    Seat,
    SeatKind,
    Table,
)

__all__ = [
    "MAX_TURN_SECONDS",
    "MIN_TURN_SECONDS",
    "TURN_STARTS",
    "Applied",
    "Listing",
    "Seat",
    "SeatKind",
    "Table",
    "bot_seat_name",
    "bot_seed",
    "open_seat_name",
    "server_move_due",
    "server_turns",
]
