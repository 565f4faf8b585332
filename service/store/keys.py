"""Key names. Every key of one game carries the hash tag ``{<game id>}``.

Redis Cluster hashes only the part between braces, so all of a game's keys live in one slot
and the compare-and-set script may touch them together. Keys are built here, in Python, and
passed to Lua through ``KEYS``: a script never builds a key name itself.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = "mt:"
IDEM_SUFFIX = ":idem:"
RATE_SUFFIX = ":rate:"
LOG_SUFFIX = ":log"

# Game ids are what ``new_game_id`` makes; anything else is refused before touching Redis.
GAME_ID_RE = re.compile(r"[A-Za-z0-9_-]{8,32}")


def game_key(game_id: str) -> str:
    """The hash holding a game's version, state and token hashes."""
    return f"{PREFIX}{{{game_id}}}"


def log_key(game_id: str) -> str:
    """The list of the game's log records, entry ``N`` at index ``N - 1``."""
    return f"{PREFIX}{{{game_id}}}{LOG_SUFFIX}"


def idem_key(game_id: str, token: str, idempotency_key: str) -> str:
    """Where the first response to ``(token, Idempotency-Key)`` on this game is kept.

    The token is part of the hash so a key is private to its caller, and only a digest is
    stored so neither the token nor the client's key appears in Redis.
    """
    digest = hashlib.sha256(f"{token}\n{idempotency_key}".encode()).hexdigest()[:32]
    return f"{PREFIX}{{{game_id}}}{IDEM_SUFFIX}{digest}"


def rate_key(game_id: str, token: str) -> str:
    """The request counter of one token on one game (same hash tag: same slot as the game)."""
    digest = hashlib.sha256(token.encode()).hexdigest()[:32]
    return f"{PREFIX}{{{game_id}}}{RATE_SUFFIX}{digest}"


def address_rate_key(kind: str, address: str) -> str:
    """The counter of one kind of request from one client address: its own slot (one key per
    script call), and a digest so no address is stored."""
    digest = hashlib.sha256(f"{kind}\n{address}".encode()).hexdigest()[:32]
    return f"{PREFIX}{{rate:{kind}:{digest}}}"


def create_key(idempotency_key: str) -> str:
    """Where the sealed answer to a keyed ``POST /games`` is kept (its own slot: one key)."""
    digest = hashlib.sha256(f"create\n{idempotency_key}".encode()).hexdigest()[:40]
    return f"{PREFIX}{{create:{digest}}}"


def valid_game_id(game_id: str) -> bool:
    return GAME_ID_RE.fullmatch(game_id) is not None
