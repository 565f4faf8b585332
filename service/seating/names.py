"""The names the server gives seats nobody named: an open seat's, and a bot's it seats.

People read these names beside the seats' numbers, and people count seats from 1: the web
table's "Seat 3" and its "Invite for seat 3" are the API's seat index 2. A name carries the
number they read, so "planner 3" sits in "Seat 3"; the API's ``seat`` fields stay 0-based.
"""

from __future__ import annotations


def seat_number(seat: int) -> int:
    """The number people read for the seat of index ``seat`` (the web table's "Seat N")."""
    return seat + 1


def open_seat_name(seat: int) -> str:
    """An open seat's name until someone takes it: it tells of nobody, and which seat it is."""
    return f"open seat {seat_number(seat)}"


def bot_seat_name(level: str, seat: int) -> str:
    """The name of a seat the server hands to a bot (a seek table's fill): a seat's name is
    who sits there, and "open seat 3" would tell of nobody."""
    return f"{level} {seat_number(seat)}"
