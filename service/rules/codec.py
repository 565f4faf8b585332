"""Compact, versioned storage encoding of a whole ``GameState`` (``dumps``/``loads``).

Layout: one version byte (``0x02``) followed by an orjson array. Tiles are small integers
``a * 32 + b`` (oriented on trains, normalised in hands), so a 4-player double-12 state mid-round is
well under 1 KB. Decoding trusts the bytes' structure (they come from our own store) but any
malformed input raises ``CorruptState`` instead of crashing.
"""

from __future__ import annotations

from typing import Any

import orjson

from service.rules.errors import CorruptState
from service.rules.options import OPTION_NAMES, rules_from_values
from service.rules.rng import MAX_SEED, valid_secret
from service.rules.state import GameState
from service.rules.tiles import MAX_PIP, Tile
from service.rules.vocabulary import Status

VERSION = 2
_HEADER = bytes([VERSION])
# Version 1 also held a count of marks in a row (the old blocked-round rule): read, then dropped.
_WITH_MARK_COUNT = 1

# A status is stored as its position in this tuple: never reorder it.
_STATUSES: tuple[Status, ...] = (
    Status.WAITING_DEAL,
    Status.IN_ROUND,
    Status.ROUND_OVER,
    Status.GAME_OVER,
)
_FIELDS = 19  # the body's fields before the optional deal secret (version 2)

_STATUS_CODES: dict[str, int] = {status: code for code, status in enumerate(_STATUSES)}


def _enc(tiles: list[Tile]) -> list[int]:
    return [t.a * 32 + t.b for t in tiles]


# Decoding tables: code -> oriented tile, and code -> normalised (interned) tile.
_ORIENTED = [Tile(c >> 5, c & 31) for c in range(32 * (MAX_PIP + 1))]
_NORMAL = [
    Tile.of(c >> 5, c & 31) if (c & 31) <= MAX_PIP else _ORIENTED[c] for c in range(len(_ORIENTED))
]


def _dec(codes: list[int]) -> list[Tile]:
    table = _ORIENTED
    return [table[c] for c in codes]


def _hand(codes: list[int]) -> list[Tile]:
    table = _NORMAL
    return [table[c] for c in codes]


def dumps(state: GameState) -> bytes:
    rules = state.rules
    body = [
        state.players,
        [rules.preset, *(getattr(rules, name) for name in OPTION_NAMES)],
        state.seed,
        _STATUS_CODES[state.status],
        state.round,
        state.engine,
        state.starter,
        state.turn,
        [_enc(h) for h in state.hands],
        _enc(state.boneyard),
        [_enc(t) for t in state.trains],
        state.marked,
        state.opened,
        state.open_doubles,
        state.scores,
        state.tiles_played,
        state.drawn,
        state.must_follow,
        state.winners,
        state.deal_secret,
    ]
    return _HEADER + orjson.dumps(body)


def _check_bounds(state: GameState) -> None:
    """Every number within what the game can reach (as imports are held to): a state stored
    before that check, or damaged, answers ``CorruptState`` instead of failing to encode later."""
    rules = state.rules
    top = rules.max_round_score
    if not (
        0 <= state.round <= rules.rounds
        and 0 <= state.tiles_played <= rules.tiles
        and 0 <= state.seed <= MAX_SEED
        and (state.deal_secret is None or valid_secret(state.deal_secret))
        and all(len(s) <= rules.rounds and all(0 <= x <= top for x in s) for s in state.scores)
    ):
        raise CorruptState("stored game state holds a number beyond what the game can reach")


def loads(data: bytes) -> GameState:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise CorruptState("stored game state is not bytes")
    raw = bytes(data)
    if not raw or raw[0] not in (VERSION, _WITH_MARK_COUNT):
        raise CorruptState(f"unknown game state encoding version {raw[:1]!r}")
    try:
        body: list[Any] = orjson.loads(raw[1:])
        if raw[0] == _WITH_MARK_COUNT:
            del body[18]  # the mark count, before ``winners``
        # States stored before deal secrets existed end at ``winners``: no secret.
        secret = body.pop() if len(body) == _FIELDS + 1 else None
        (
            players,
            rule_values,
            seed,
            status,
            rnd,
            engine,
            starter,
            turn,
            hands,
            boneyard,
            trains,
            marked,
            opened,
            open_doubles,
            scores,
            tiles_played,
            drawn,
            must_follow,
            winners,
        ) = body
        state = GameState(players, rules_from_values(rule_values), seed, secret)
        state.status = _STATUSES[status]
        state.round = rnd
        state.engine = engine
        state.starter = starter
        state.turn = turn
        state.hands = [_hand(h) for h in hands]
        state.boneyard = _hand(boneyard)
        state.trains = [_dec(t) for t in trains]
        state.marked = marked
        state.opened = opened
        state.open_doubles = open_doubles
        state.scores = scores
        state.tiles_played = tiles_played
        state.drawn = drawn
        state.must_follow = must_follow
        state.winners = winners
        if len(state.trains) != len(players) + 1 or len(state.hands) != len(players):
            raise ValueError("seat count mismatch")
        state.recompute_trains()
        state.reindex()
        _check_bounds(state)
    except CorruptState:
        raise
    except Exception as err:  # any decoding problem is a server-side fault, never a crash
        raise CorruptState(f"stored game state cannot be decoded: {err}") from None
    return state
