"""Typed engine errors, split by meaning like python-chess.

Every error carries a stable machine-readable ``code`` and a human sentence (``str(err)``).
The HTTP layer maps the *class* to a status code; the engine knows nothing of HTTP:

- ``InvalidRules``     -> 422  (unknown/contradictory option, game that cannot be dealt)
- ``InvalidPosition``  -> 422  (position import breaks an invariant of docs/rules.md §9)
- ``InvalidMove``      -> 422  (malformed move: unknown action, tile not in the set, unknown train)
- ``IllegalMove``      -> 409  (well-formed but not legal now: wrong turn, no round, rule forbids)
- ``CorruptState``     -> 500  (stored bytes cannot be decoded: a server fault, never user input)
"""

from __future__ import annotations


class RulesError(Exception):
    """Base class of every error raised by ``service.rules``."""

    code: str = "rules_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidRules(RulesError):
    code = "invalid_rules"


class InvalidPosition(RulesError):
    code = "invalid_position"


class InvalidMove(RulesError):
    """Malformed move. Codes: ``invalid_move``, ``tile_not_in_set``, ``unknown_train``."""

    code = "invalid_move"


class IllegalMove(RulesError):
    """A well-formed move that the rules refuse now.

    Codes: ``illegal_move`` (generic, the message says why), ``not_your_turn``,
    ``round_not_running``, ``round_in_progress`` (deal while a round runs), ``game_over``.
    """

    code = "illegal_move"


class CorruptState(RulesError):
    code = "corrupt_state"
