"""Key names. Every key of one game carries the hash tag ``{<game id>}``.

Redis Cluster hashes only the part between braces, so all of a game's keys live in one slot
and the compare-and-set script may touch them together. Keys are built here, in Python, and
passed to Lua through ``KEYS``: a script never builds a key name itself.
"""

from __future__ import annotations

import binascii
import functools
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


def address_slots_key(kind: str, address: str) -> str:
    """What one client address holds of one ``kind`` (its own slot), named by a digest of the
    address."""
    digest = hashlib.sha256(f"{kind}\n{address}".encode()).hexdigest()[:32]
    return f"{PREFIX}{{{kind}:{digest}}}"


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
#: Held by the worker that sweeps for games the queue lost (service/worker/sweep.py).
WORK_SWEEP = f"{PREFIX}{{work}}:sweep"
#: Held by the worker backfilling the due sets (service/worker/backfill.py), and set once a
#: backfill has read every node.
WORK_BACKFILL = f"{PREFIX}{{work}}:backfill"
WORK_BACKFILLED = f"{PREFIX}{{work}}:backfilled"
LEASE_SUFFIX = ":lease"


def lease_key(game_id: str) -> str:
    """Held by the one worker computing the game's server moves (same slot as the game)."""
    return f"{PREFIX}{{{game_id}}}{LEASE_SUFFIX}"


#: Games the server owes a change, scored by when (service/store/due.py), on one Redis.
DUE = f"{PREFIX}{{due}}"
#: On a cluster, one such set per hash slot, ``mt:{due:<4 letters>}``: the letters make its
#: name hash to the slot of the games it holds, so the compare-and-set script may write it with
#: the game (Redis Cluster lets one script touch keys of different tags in one slot).
DUE_SLOT_PREFIX = "due:"
_SLOTS = 16384
#: The letters' alphabet: 16 bytes that differ in their low 4 bits only, so a name's CRC16 is
#: affine in those 16 bits (and, as it happens, a bijection: every slot has a name).
_DUE_LETTERS = b"@ABCDEFGHIJKLMNO"


def _due_name(bits: int) -> bytes:
    letters = (_DUE_LETTERS[(bits >> shift) & 15] for shift in (12, 8, 4, 0))
    return DUE_SLOT_PREFIX.encode() + bytes(letters)


def _crc(bits: int) -> int:
    return binascii.crc_hqx(_due_name(bits), 0) & (_SLOTS - 1)


def _due_basis() -> list[tuple[int, int]]:
    """An XOR basis of the slots each bit of the letters flips, each with the bits that make
    it, highest slot bit first: a slot is solved for in at most 14 steps."""
    basis: list[tuple[int, int]] = []
    for bit in range(16):
        vector, bits = _crc(1 << bit) ^ _crc(0), 1 << bit
        for have, made in basis:
            if vector ^ have < vector:
                vector, bits = vector ^ have, bits ^ made
        if vector:
            basis = sorted([*basis, (vector, bits)], reverse=True)
    return basis


_DUE_BASIS = _due_basis()


def slot_of(name: str) -> int:
    """The Redis Cluster slot of a key name (CRC16 of its hash tag, or of the whole name)."""
    raw = name.encode()
    start = raw.find(b"{")
    if start >= 0:
        end = raw.find(b"}", start + 1)
        if end > start + 1:
            raw = raw[start + 1 : end]
    return binascii.crc_hqx(raw, 0) & (_SLOTS - 1)


@functools.cache
def due_slot_key(slot: int) -> str:
    """The due set of one hash slot (a cluster's)."""
    target, bits = slot ^ _crc(0), 0
    for have, made in _DUE_BASIS:
        if target ^ have < target:
            target, bits = target ^ have, bits ^ made
    if target:
        raise AssertionError(f"no due-set name for slot {slot}")
    return f"{PREFIX}{{{_due_name(bits).decode()}}}"


def due_key(game_id: str, sharded: bool) -> str:
    """The set that holds the game when the server owes it a change: its slot's on a
    cluster (``sharded``), else the one set."""
    return due_slot_key(slot_of(game_key(game_id))) if sharded else DUE


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


def lobby_key(
    preset: str | None = None, players: int | None = None, turn_seconds: int | None = None
) -> str:
    """The public tables with open seats that fit a filter (None: any value), by creation
    time: one sorted set per combination of filters, all in the lobby's slot."""
    fits = (("preset", preset), ("players", players), ("turn", turn_seconds))
    named = ",".join(f"{name}={value}" for name, value in fits if value is not None)
    return f"{PREFIX}{{lobby}}:by:{named or 'any'}"


#: Public tables with open seats, by creation time (every kind).
LOBBY = lobby_key()
#: Each listed table's kind, which names the sorted sets that list it (same slot).
LOBBY_KINDS = f"{PREFIX}{{lobby}}:kinds"
#: Public tables listed without their kind (by a version that kept no per-filter sets): each
#: listing moves some into the sets above, until none is left.
LOBBY_UNSORTED = f"{PREFIX}{{lobby}}:tables"
#: Where the next look at a few of the lobby's tables in turn starts (a rank in LOBBY); gone
#: once a round of the whole lobby is over.
LOBBY_ROUND = f"{PREFIX}{{lobby}}:round"


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
