"""The Mexican Train rules engine: pure Python, no I/O (see CONTRACT.md and RULES.md)."""

from service.rules.codec import dumps, loads
from service.rules.engine import Event, apply, deal, legal_moves, new_game
from service.rules.errors import (
    CorruptState,
    IllegalMove,
    InvalidMove,
    InvalidPosition,
    InvalidRules,
    RulesError,
)
from service.rules.options import OPTION_NAMES, PRESETS, Rules, resolve_rules
from service.rules.position import FORMAT, check_invariants, export_position, import_position
from service.rules.state import MEXICAN, GameState
from service.rules.tiles import Move, Tile
from service.rules.views import game_view, score_view, visible_events

__all__ = [
    "FORMAT",
    "MEXICAN",
    "OPTION_NAMES",
    "PRESETS",
    "CorruptState",
    "Event",
    "GameState",
    "IllegalMove",
    "InvalidMove",
    "InvalidPosition",
    "InvalidRules",
    "Move",
    "Rules",
    "RulesError",
    "Tile",
    "apply",
    "check_invariants",
    "deal",
    "dumps",
    "export_position",
    "game_view",
    "import_position",
    "legal_moves",
    "loads",
    "new_game",
    "resolve_rules",
    "score_view",
    "visible_events",
]
