"""Presets, deal tables and option resolution (docs/rules.md §§3, 4, 5, 7, 8).

``resolve_rules`` turns ``preset`` + ``options`` + the player count into a ``Rules`` value where
every option is fixed, refusing anything unknown, mistyped, out of range, contradictory, or a game
that cannot be dealt, with a sentence that names the option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from service.rules.errors import InvalidRules
from service.rules.vocabulary import DoubleFollow, EngineSource, Opening, OpeningNoPlay, Preset

PRESETS: tuple[str, ...] = tuple(Preset)
SETS: tuple[int, ...] = (6, 9, 12, 15, 18)
MIN_PLAYERS = 2
MAX_NAME_LENGTH = 40
MAX_DOUBLE_BLANK_POINTS = 1000


def valid_name(name: object) -> bool:
    """A player name: 1 to 40 printable characters, not only spaces (views show it verbatim)."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_NAME_LENGTH
        and name.isprintable()
        and not name.isspace()
    )


MAX_PLAYERS: dict[str, int] = {Preset.STANDARD: 14, Preset.TOURNAMENT: 14, Preset.CLASSIC: 10}
#: The most players any preset seats.
MAX_PLAYERS_ANY = max(MAX_PLAYERS.values())

# Each option with a closed set of values, and the StrEnum of those values.
ENUMS: dict[str, type[StrEnum]] = {
    "engine_source": EngineSource,
    "opening": Opening,
    "opening_no_play": OpeningNoPlay,
    "double_follow": DoubleFollow,
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
    Preset.STANDARD: {
        "engine_source": EngineSource.FROM_HAND,
        "opening": Opening.CHAIN,
        "opening_no_play": OpeningNoPlay.MARK,
        "opening_out_waits": True,
        "mexican_needs_own_blocked": False,
        "double_follow": DoubleFollow.ANY,
        "chicken_foot": False,
        "double_blank_points": 50,
    },
    Preset.TOURNAMENT: {
        "engine_source": EngineSource.SET_ASIDE,
        "opening": Opening.CHAIN,
        "opening_no_play": OpeningNoPlay.DRAW_ONE,
        "opening_out_waits": False,
        "mexican_needs_own_blocked": True,
        "double_follow": DoubleFollow.ANY,
        "chicken_foot": False,
        "double_blank_points": 0,
    },
    Preset.CLASSIC: {
        "engine_source": EngineSource.FROM_HAND,
        "opening": Opening.CHAIN,
        "opening_no_play": OpeningNoPlay.DRAW_UNTIL,
        "opening_out_waits": False,
        "mexican_needs_own_blocked": False,
        "double_follow": DoubleFollow.ANY,
        "chicken_foot": False,
        "double_blank_points": 0,
    },
}

# Deal tables (docs/rules.md §3): (min players, max players, set, tiles each, default row?).
# A non-default row only applies when the `set` option asks for it (standard's double-6 row).
DealRow = tuple[int, int, int, int, bool]
DEAL_TABLES: dict[str, tuple[DealRow, ...]] = {
    Preset.STANDARD: (
        (2, 3, 9, 15, True),
        (4, 4, 12, 15, True),
        (5, 6, 12, 12, True),
        (7, 8, 12, 11, True),
        (9, 12, 15, 11, True),
        (13, 14, 18, 11, True),
        (2, 4, 6, 7, False),
    ),
    Preset.TOURNAMENT: (
        (2, 3, 9, 8, True),
        (4, 6, 12, 12, True),
        (7, 8, 12, 10, True),
        (9, 12, 15, 11, True),
        (13, 14, 18, 11, True),
    ),
    Preset.CLASSIC: (
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

    preset: Preset
    set: int
    hand_size: int
    rounds: int
    engine_source: EngineSource
    opening: Opening
    opening_no_play: OpeningNoPlay
    opening_out_waits: bool
    mexican_needs_own_blocked: bool
    double_follow: DoubleFollow
    chicken_foot: bool
    double_blank_points: int

    @property
    def tiles(self) -> int:
        """How many tiles the set has: no count of tiles (played in a turn...) exceeds it."""
        return set_size(self.set)

    @property
    def max_round_score(self) -> int:
        """A bound on one seat's score for one round: every pip of the set, the double-blank
        counted at ``double_blank_points``. Imports are held to it (docs/rules.md §14)."""
        n = self.set
        return n * (n + 1) * (n + 2) // 2 + self.double_blank_points

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
    chosen = Preset(preset)
    options = _option_mapping(options)
    _check_players(chosen, n_players)
    resolved = _preset_options(chosen, options)
    tile_set, row = _tile_set(chosen, options, n_players)
    hand_size = _hand_size(chosen, options, n_players, tile_set, row)
    rounds = _rounds(options, tile_set)
    return Rules(preset=chosen, set=tile_set, hand_size=hand_size, rounds=rounds, **resolved)


def _option_mapping(options: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``options`` as a mapping of known option names (``None`` is no options)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InvalidRules("options must be a JSON object of option names to values")
    unknown = [str(k) for k in options if k not in OPTION_NAMES]
    if unknown:
        raise InvalidRules(
            f"unknown option(s) {', '.join(sorted(unknown))}; "
            f"known options: {', '.join(OPTION_NAMES)}"
        )
    return options


def _check_players(preset: Preset, n_players: int) -> None:
    max_players = MAX_PLAYERS[preset]
    if not _is_int(n_players) or not MIN_PLAYERS <= n_players <= max_players:
        raise InvalidRules(
            f"the {preset} preset is for {MIN_PLAYERS} to {max_players} players, not {n_players}"
        )


def _preset_options(preset: Preset, options: Mapping[str, Any]) -> dict[str, Any]:
    """The preset's own options (everything but the deal), overridden by ``options``."""
    resolved: dict[str, Any] = dict(_PRESET_OPTIONS[preset])
    for name, choices in _ENUM_VALUES.items():
        if name in options:
            value = options[name]
            if not isinstance(value, str) or value not in choices:
                raise InvalidRules(
                    f"option {name} must be one of {', '.join(choices)}, not {value!r}"
                )
            resolved[name] = choices[value]
    for name in BOOLS:
        if name in options:
            value = options[name]
            if not isinstance(value, bool):
                raise InvalidRules(f"option {name} must be true or false, not {value!r}")
            resolved[name] = value
    if "double_blank_points" in options:
        value = options["double_blank_points"]
        if not _is_int(value) or not 0 <= value <= MAX_DOUBLE_BLANK_POINTS:
            raise InvalidRules(
                "option double_blank_points must be an integer "
                f"0..{MAX_DOUBLE_BLANK_POINTS}, not {value!r}"
            )
        resolved["double_blank_points"] = value
    return resolved


def _tile_set(
    preset: Preset, options: Mapping[str, Any], n_players: int
) -> tuple[int, DealRow | None]:
    """The set size and the deal-table row for it (``None`` when the table has no such row)."""
    table = DEAL_TABLES[preset]
    if "set" not in options:
        row = next(r for r in table if r[0] <= n_players <= r[1] and r[4])
        return row[2], row
    tile_set = options["set"]
    if not _is_int(tile_set) or tile_set not in SETS:
        raise InvalidRules(
            f"option set must be one of {', '.join(map(str, SETS))}, not {tile_set!r}"
        )
    if preset == Preset.CLASSIC and tile_set != 12:
        raise InvalidRules("option set contradicts the classic preset, which is double-12 only")
    return tile_set, next(
        (r for r in table if r[0] <= n_players <= r[1] and r[2] == tile_set), None
    )


def _hand_size(
    preset: Preset, options: Mapping[str, Any], n_players: int, tile_set: int, row: DealRow | None
) -> int:
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
    return int(hand_size)


def _rounds(options: Mapping[str, Any], tile_set: int) -> int:
    """One round per engine, from double-``set`` down to double-blank, unless fewer are asked."""
    if "rounds" not in options:
        return tile_set + 1
    rounds = options["rounds"]
    if not _is_int(rounds) or not 1 <= rounds <= tile_set + 1:
        raise InvalidRules(
            f"option rounds must be an integer 1..{tile_set + 1} for a double-{tile_set} set, "
            f"not {rounds!r}"
        )
    return int(rounds)


# value -> member, per enum option (StrEnum membership of a plain string differs across Pythons).
_ENUM_VALUES: dict[str, dict[str, StrEnum]] = {
    name: {member.value: member for member in enum} for name, enum in ENUMS.items()
}
_PRESET_VALUES: dict[str, Preset] = {member.value: member for member in Preset}
_FIELD_ENUMS: tuple[type[StrEnum] | None, ...] = tuple(ENUMS.get(name) for name in OPTION_NAMES)


def rules_from_values(values: Sequence[Any]) -> Rules:
    """``Rules`` from ``[preset, *every option in OPTION_NAMES order]`` (the storage layout).

    The values are trusted (written by this package). The few distinct rule sets in use are
    built once and shared: decoding a stored game is on every request's path."""
    key = tuple(values)
    rules = _DECODED.get(key)
    if rules is None:
        fields: dict[str, Any] = {
            name: value if enum is None else enum(value)
            for name, enum, value in zip(OPTION_NAMES, _FIELD_ENUMS, key[1:], strict=True)
        }
        rules = Rules(_PRESET_VALUES[key[0]], **fields)
        if len(_DECODED) < 4096:
            _DECODED[key] = rules
    return rules


_DECODED: dict[tuple[Any, ...], Rules] = {}
