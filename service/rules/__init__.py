"""The Mexican Train rules engine: pure Python, no I/O (see CONTRACT.md)."""

from service.rules.codec import dumps, loads
from service.rules.engine import apply, deal, legal_moves, new_game
from service.rules.errors import (
    CorruptState,
    IllegalMove,
    InvalidMove,
    InvalidPosition,
    InvalidRules,
    RulesError,
)
from service.rules.events import Event, ends_game
from service.rules.history import Chronicle, Clue, ClueKind
from service.rules.observer import (
    View,
    audience,
    game_view,
    observe,
    score_view,
    seat_view,
    turn_moves,
    visible_events,
)
from service.rules.options import (
    MAX_NAME_LENGTH,
    MAX_PLAYERS,
    MAX_PLAYERS_ANY,
    MIN_PLAYERS,
    OPTION_NAMES,
    PRESETS,
    Rules,
    resolve_rules,
)
from service.rules.position import FORMAT, check_invariants, export_position, import_position
from service.rules.rng import MAX_SEED
from service.rules.sampling import Sampler, sample_positions, sample_state, sampling_rng
from service.rules.state import GameState
from service.rules.tiles import MAX_PIP, Move, Tile
from service.rules.vocabulary import (
    MEXICAN,
    Action,
    DoubleFollow,
    EngineSource,
    Opening,
    OpeningNoPlay,
    Preset,
    Role,
    RoleKind,
    RoundOverReason,
    Status,
)

__all__ = [
    "FORMAT",
    "MAX_NAME_LENGTH",
    "MAX_PIP",
    "MAX_PLAYERS",
    "MAX_PLAYERS_ANY",
    "MAX_SEED",
    "MEXICAN",
    "MIN_PLAYERS",
    "OPTION_NAMES",
    "PRESETS",
    "Action",
    "Chronicle",
    "Clue",
    "ClueKind",
    "CorruptState",
    "DoubleFollow",
    "EngineSource",
    "Event",
    "GameState",
    "IllegalMove",
    "InvalidMove",
    "InvalidPosition",
    "InvalidRules",
    "Move",
    "Opening",
    "OpeningNoPlay",
    "Preset",
    "Role",
    "RoleKind",
    "RoundOverReason",
    "Rules",
    "RulesError",
    "Sampler",
    "Status",
    "Tile",
    "View",
    "apply",
    "audience",
    "check_invariants",
    "deal",
    "dumps",
    "ends_game",
    "export_position",
    "game_view",
    "import_position",
    "legal_moves",
    "loads",
    "new_game",
    "observe",
    "resolve_rules",
    "sample_positions",
    "sample_state",
    "sampling_rng",
    "score_view",
    "seat_view",
    "turn_moves",
    "visible_events",
]
