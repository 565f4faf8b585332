"""Redis storage of games: keys, Lua compare-and-set, expiry, token digests, idempotency."""

from .connection import connect
from .games import (
    NO_TOKEN,
    Change,
    GameIdTaken,
    GameNotFound,
    GameRecord,
    GameStore,
    IdempotentReplay,
    KeptResponse,
    LogFull,
    RematchClosed,
    StoreError,
    VersionConflict,
)

__all__ = [
    "NO_TOKEN",
    "Change",
    "GameIdTaken",
    "GameNotFound",
    "GameRecord",
    "GameStore",
    "IdempotentReplay",
    "KeptResponse",
    "LogFull",
    "RematchClosed",
    "StoreError",
    "VersionConflict",
    "connect",
]
