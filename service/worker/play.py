"""One slice of a game's server moves, through the game transaction."""

from __future__ import annotations

from collections.abc import Callable

from service.api.transaction import play_server_moves

from .loop import Outcome


def play_game(game_id: str, spent: Callable[[], bool]) -> Outcome:
    """Make the game's server moves until ``spent()`` and store them; what is left."""
    more, due_ms = play_server_moves(game_id, spent)
    return Outcome(more, due_ms)
