"""Seats: the bot levels, joining an open seat through its invite, the host's seat changes."""
