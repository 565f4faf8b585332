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

from enum import StrEnum


class RuleCode(StrEnum):
    """The stable codes of the engine's errors (the API answers them as they are)."""

    INVALID_RULES = "invalid_rules"
    INVALID_POSITION = "invalid_position"
    INVALID_MOVE = "invalid_move"
    TILE_NOT_IN_SET = "tile_not_in_set"
    UNKNOWN_TRAIN = "unknown_train"
    ILLEGAL_MOVE = "illegal_move"
    NOT_YOUR_TURN = "not_your_turn"
    ROUND_NOT_RUNNING = "round_not_running"
    ROUND_IN_PROGRESS = "round_in_progress"
    GAME_OVER = "game_over"
    CORRUPT_STATE = "corrupt_state"


class RulesError(Exception):
    """Base class of every error raised by ``service.rules``."""

    code: RuleCode = RuleCode.ILLEGAL_MOVE

    def __init__(self, message: str, *, code: RuleCode | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidRules(RulesError):
    code = RuleCode.INVALID_RULES


class InvalidPosition(RulesError):
    code = RuleCode.INVALID_POSITION


class InvalidMove(RulesError):
    """Malformed move. Codes: ``invalid_move``, ``tile_not_in_set``, ``unknown_train``.

    ``field`` names the field of the move object that has the wrong shape (or that no move
    has); None when the move as a whole is wrong (a play without its tile)."""

    code = RuleCode.INVALID_MOVE

    def __init__(
        self, message: str, *, code: RuleCode | None = None, field: str | None = None
    ) -> None:
        super().__init__(message, code=code)
        self.field = field


class IllegalMove(RulesError):
    """A well-formed move that the rules refuse now.

    Codes: ``illegal_move`` (generic, the message says why), ``not_your_turn``,
    ``round_not_running``, ``round_in_progress`` (deal while a round runs), ``game_over``.
    """

    code = RuleCode.ILLEGAL_MOVE


class CorruptState(RulesError):
    code = RuleCode.CORRUPT_STATE
