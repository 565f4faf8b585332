"""A game's table: who sits in each seat (a person, a server bot, or nobody yet), the table
options, the turn clock, and the moves the server makes for bot seats, late turns and deals.

Pure decisions over the engine and the bot strategies; the API stores what they return.
"""

from .advance import Applied, advance, bot_seed
from .table import MAX_TURN_SECONDS, MIN_TURN_SECONDS, Seat, SeatKind, Table

__all__ = [
    "MAX_TURN_SECONDS",
    "MIN_TURN_SECONDS",
    "Applied",
    "Seat",
    "SeatKind",
    "Table",
    "advance",
    "bot_seed",
]
