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
WAKEUP_SUFFIX = ":wakeup"
TICKET_SUFFIX = ":ticket:"
TRANSFER_SUFFIX = ":transfer:"

# Game ids are what ``new_game_id`` makes; anything else is refused before touching Redis.
GAME_ID_RE = re.compile(r"[A-Za-z0-9_-]{8,32}")


def game_key(game_id: str) -> str:
    """The hash holding a game's version, state and token hashes."""
    return f"{PREFIX}{{{game_id}}}"


def log_key(game_id: str) -> str:
    """The list of the game's log records, entry ``N`` at index ``N - 1``."""
    return f"{PREFIX}{{{game_id}}}{LOG_SUFFIX}"


def wakeup_channel(game_id: str) -> str:
    """The game's sharded pub/sub channel (SPUBLISH): its hash tag puts it in the game's slot,
    so on a cluster a wake-up reaches only the shard that holds the game, not every node."""
    return f"{PREFIX}{{{game_id}}}{WAKEUP_SUFFIX}"


def wakeup_channel_game(channel: bytes) -> str | None:
    """The game whose :func:`wakeup_channel` this is, or None for another channel."""
    name = channel.decode(errors="replace")
    if not (name.startswith(PREFIX + "{") and name.endswith("}" + WAKEUP_SUFFIX)):
        return None
    return name[len(PREFIX) + 1 : -len(WAKEUP_SUFFIX) - 1]


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


def ticket_key(game_id: str, ticket: str) -> str:
    """A stream ticket's grant (same slot as the game); a digest names it, never the ticket."""
    digest = hashlib.sha256(f"ticket\n{ticket}".encode()).hexdigest()[:40]
    return f"{PREFIX}{{{game_id}}}{TICKET_SUFFIX}{digest}"


def transfer_key(game_id: str, ticket: str) -> str:
    """A seat transfer ticket's record (same slot as the game), named by a digest."""
    digest = hashlib.sha256(f"transfer\n{ticket}".encode()).hexdigest()[:40]
    return f"{PREFIX}{{{game_id}}}{TRANSFER_SUFFIX}{digest}"


def stream_slots_key(address: str) -> str:
    """One client address's open streams (its own slot), named by a digest of the address."""
    digest = hashlib.sha256(f"streams\n{address}".encode()).hexdigest()[:32]
    return f"{PREFIX}{{streams:{digest}}}"


def create_key(idempotency_key: str) -> str:
    """Where the sealed answer to a keyed request naming no game (``POST /games``, a seek) is
    kept (its own slot: one key). The key is bound to its request's path and body already."""
    digest = hashlib.sha256(f"create\n{idempotency_key}".encode()).hexdigest()[:40]
    return f"{PREFIX}{{create:{digest}}}"


#: The background worker's queue (service/store/work.py): one hash tag, one slot on a cluster.
WORK_JOBS = f"{PREFIX}{{work}}:jobs"
WORK_DUE = f"{PREFIX}{{work}}:due"
#: Games that used up a slice with more to do: read only when ``WORK_JOBS`` has nothing.
WORK_MORE = f"{PREFIX}{{work}}:more"
LEASE_SUFFIX = ":lease"


def lease_key(game_id: str) -> str:
    """Held by the one worker computing the game's server moves (same slot as the game)."""
    return f"{PREFIX}{{{game_id}}}{LEASE_SUFFIX}"


def valid_game_id(game_id: str) -> bool:
    return GAME_ID_RE.fullmatch(game_id) is not None


#: A player's id: what ``new_player_id`` makes, or a bot level's own (``bot-<level>``).
PLAYER_ID_RE = re.compile(r"[A-Za-z0-9_-]{12}|bot-[a-z]{1,20}")


def valid_player_id(player_id: str) -> bool:
    return PLAYER_ID_RE.fullmatch(player_id) is not None


def player_key(player_id: str) -> str:
    """A player's hash: name, kind, token digest, rating, counts (its own slot)."""
    return f"{PREFIX}{{player:{player_id}}}"


def player_rated_key(player_id: str) -> str:
    """The rated games already counted in the player's rating (same slot as the player)."""
    return f"{PREFIX}{{player:{player_id}}}:rated"


def player_hooks_key(player_id: str) -> str:
    """The player's webhooks, by id (same slot as the player)."""
    return f"{PREFIX}{{player:{player_id}}}:hooks"


def leaderboard_key(kind: str) -> str:
    """Players of one kind with enough rated games, by displayed rating."""
    return f"{PREFIX}{{leaderboard}}:{kind}"


#: Public tables with open seats, by creation time.
LOBBY = f"{PREFIX}{{lobby}}:tables"


def seek_keys(bucket: str) -> tuple[str, str]:
    """A seek bucket's tables in order of creation, and their claimed seats (one slot)."""
    digest = hashlib.sha256(bucket.encode()).hexdigest()[:24]
    return f"{PREFIX}{{seek:{digest}}}:order", f"{PREFIX}{{seek:{digest}}}:claims"


def presence_key(game_id: str) -> str:
    """When each seat of the game was last seen (same slot as the game)."""
    return f"{PREFIX}{{{game_id}}}:presence"


#: Webhook deliveries: each one's JSON, and when each is due (one slot).
HOOK_JOBS = f"{PREFIX}{{hooks}}:jobs"
HOOK_DUE = f"{PREFIX}{{hooks}}:due"
