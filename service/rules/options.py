"""Presets, deal tables and option resolution (RULES.md sections 3, 4, 5, 7, 8).

``resolve_rules`` turns ``preset`` + ``options`` + the player count into a ``Rules`` value where
every option is fixed, refusing anything unknown, mistyped, out of range, contradictory, or a game
that cannot be dealt, with a sentence that names the option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from service.rules.errors import InvalidRules

PRESETS: tuple[str, ...] = ("standard", "tournament", "classic")
SETS: tuple[int, ...] = (6, 9, 12, 15, 18)
MIN_PLAYERS = 2
MAX_NAME_LENGTH = 40


def valid_name(name: object) -> bool:
    """A player name: 1 to 40 printable characters, not only spaces (views show it verbatim)."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME_LENGTH
        and name.isprintable()
        and not name.isspace()
    )


MAX_PLAYERS = {"standard": 14, "tournament": 14, "classic": 10}

ENUMS: dict[str, tuple[str, ...]] = {
    "engine_source": ("from_hand", "set_aside"),
    "opening": ("chain", "single"),
    "opening_no_play": ("mark", "draw_one", "draw_until"),
    "double_follow": ("any", "satisfy"),
}
BOOLS = ("opening_out_waits", "mexican_needs_own_blocked", "chicken_foot")
OPTION_NAMES: tuple[str, ...] = (
    "set",
    "hand_size",
    "rounds",
    "engine_source",
    "opening",
    "opening_no_play",
    "opening_out_waits",
    "mexican_needs_own_blocked",
    "double_follow",
    "chicken_foot",
    "double_blank_points",
)

# The preset-defined options (everything but the deal, which comes from the tables).
_PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "standard": {
        "engine_source": "from_hand",
        "opening": "chain",
        "opening_no_play": "mark",
        "opening_out_waits": True,
        "mexican_needs_own_blocked": False,
        "double_follow": "any",
        "chicken_foot": False,
        "double_blank_points": 50,
    },
    "tournament": {
        "engine_source": "set_aside",
        "opening": "chain",
        "opening_no_play": "draw_one",
        "opening_out_waits": False,
        "mexican_needs_own_blocked": True,
        "double_follow": "any",
        "chicken_foot": False,
        "double_blank_points": 0,
    },
    "classic": {
        "engine_source": "from_hand",
        "opening": "chain",
        "opening_no_play": "draw_until",
        "opening_out_waits": False,
        "mexican_needs_own_blocked": False,
        "double_follow": "any",
        "chicken_foot": False,
        "double_blank_points": 0,
    },
}

# Deal tables (RULES.md section 3): (min players, max players, set, tiles each, default row?).
# A non-default row only applies when the `set` option asks for it (standard's double-6 row).
DealRow = tuple[int, int, int, int, bool]
DEAL_TABLES: dict[str, tuple[DealRow, ...]] = {
    "standard": (
        (2, 3, 9, 15, True),
        (4, 4, 12, 15, True),
        (5, 6, 12, 12, True),
        (7, 8, 12, 11, True),
        (9, 12, 15, 11, True),
        (13, 14, 18, 11, True),
        (2, 4, 6, 7, False),
    ),
    "tournament": (
        (2, 3, 9, 8, True),
        (4, 6, 12, 12, True),
        (7, 8, 12, 10, True),
        (9, 12, 15, 11, True),
        (13, 14, 18, 11, True),
    ),
    "classic": (
        (2, 6, 12, 12, True),
        (7, 8, 12, 10, True),
        (9, 10, 12, 8, True),
    ),
}


def set_size(n: int) -> int:
    """Number of tiles in a double-``n`` set."""
    return (n + 1) * (n + 2) // 2


@dataclass(frozen=True, slots=True)
class Rules:
    """Every option of one game, resolved. Immutable and hashable."""

    preset: str
    set: int
    hand_size: int
    rounds: int
    engine_source: str
    opening: str
    opening_no_play: str
    opening_out_waits: bool
    mexican_needs_own_blocked: bool
    double_follow: str
    chicken_foot: bool
    double_blank_points: int

    def to_json(self) -> dict[str, Any]:
        """``{"preset": name, "options": {every option}}``; resolving it again gives ``self``."""
        options = _OPTIONS_JSON.get(self)
        if options is None:
            options = asdict(self)
            del options["preset"]
            if len(_OPTIONS_JSON) < 4096:
                _OPTIONS_JSON[self] = options
        return {"preset": self.preset, "options": dict(options)}


# Rules are immutable, so their option dicts are built once (game_view calls to_json each time).
_OPTIONS_JSON: dict[Rules, dict[str, Any]] = {}


def _is_int(value: Any) -> bool:
    return type(value) is int  # a bool is not an int here


def resolve_rules(preset: str, options: Mapping[str, Any] | None, n_players: int) -> Rules:
    """Resolve ``preset`` + ``options`` for ``n_players``; ``InvalidRules`` says what is wrong."""
    if not isinstance(preset, str) or preset not in PRESETS:
        raise InvalidRules(f"unknown preset {preset!r}; expected one of {', '.join(PRESETS)}")
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise InvalidRules("options must be a JSON object of option names to values")
    unknown = [str(k) for k in options if k not in OPTION_NAMES]
    if unknown:
        raise InvalidRules(
            f"unknown option(s) {', '.join(sorted(unknown))}; "
            f"known options: {', '.join(OPTION_NAMES)}"
        )
    max_players = MAX_PLAYERS[preset]
    if not _is_int(n_players) or not MIN_PLAYERS <= n_players <= max_players:
        raise InvalidRules(
            f"the {preset} preset is for {MIN_PLAYERS} to {max_players} players, not {n_players}"
        )

    resolved: dict[str, Any] = dict(_PRESET_OPTIONS[preset])
    for name, choices in ENUMS.items():
        if name in options:
            value = options[name]
            if not isinstance(value, str) or value not in choices:
                raise InvalidRules(
                    f"option {name} must be one of {', '.join(choices)}, not {value!r}"
                )
            resolved[name] = value
    for name in BOOLS:
        if name in options:
            value = options[name]
            if not isinstance(value, bool):
                raise InvalidRules(f"option {name} must be true or false, not {value!r}")
            resolved[name] = value
    if "double_blank_points" in options:
        value = options["double_blank_points"]
        if not _is_int(value) or not 0 <= value <= 1000:
            raise InvalidRules(
                f"option double_blank_points must be an integer 0..1000, not {value!r}"
            )
        resolved["double_blank_points"] = value

    table = DEAL_TABLES[preset]
    if "set" in options:
        tile_set = options["set"]
        if not _is_int(tile_set) or tile_set not in SETS:
            raise InvalidRules(
                f"option set must be one of {', '.join(map(str, SETS))}, not {tile_set!r}"
            )
        if preset == "classic" and tile_set != 12:
            raise InvalidRules("option set contradicts the classic preset, which is double-12 only")
        row = next((r for r in table if r[0] <= n_players <= r[1] and r[2] == tile_set), None)
    else:
        row = next(r for r in table if r[0] <= n_players <= r[1] and r[4])
        tile_set = row[2]
    if "hand_size" in options:
        hand_size = options["hand_size"]
        if not _is_int(hand_size) or hand_size < 1:
            raise InvalidRules(f"option hand_size must be an integer >= 1, not {hand_size!r}")
    elif row is None:
        raise InvalidRules(
            f"the {preset} deal table has no row for a double-{tile_set} set and {n_players} "
            "players, so option hand_size must be given"
        )
    else:
        hand_size = row[3]
    available = set_size(tile_set) - 1  # the engine never goes to a hand at the deal's start
    if n_players * hand_size > available - 1:
        raise InvalidRules(
            f"option hand_size {hand_size} cannot be dealt: {n_players} players x {hand_size} "
            f"tiles must leave at least one tile besides the engine in a double-{tile_set} set "
            f"of {available + 1} tiles"
        )
    if "rounds" in options:
        rounds = options["rounds"]
        if not _is_int(rounds) or not 1 <= rounds <= tile_set + 1:
            raise InvalidRules(
                f"option rounds must be an integer 1..{tile_set + 1} for a double-{tile_set} set, "
                f"not {rounds!r}"
            )
    else:
        rounds = tile_set + 1
    return Rules(preset=preset, set=tile_set, hand_size=hand_size, rounds=rounds, **resolved)
