"""What the streams keep in Redis beyond the games: single-use stream tickets, and each client
address's open streams (so a cap holds across every instance).

- ``mt:{<id>}:ticket:<sha256(ticket)>`` string: the role a ticket stands for and the digest of
  the token it was issued to, for ``TICKET_SECONDS``; taken with ``GETDEL`` (single use). Only
  a digest of the ticket names the key, so Redis never holds a ticket's value.
- ``mt:{streams:<digest of the address>}`` sorted set: the address's open streams by their
  opening time; a member older than a stream's longest life belonged to a process that died.
"""

from __future__ import annotations

import time

import redis
from redis.cluster import RedisCluster

from . import keys, scripts

#: A stream ticket opens one stream within this many seconds of its issue.
TICKET_SECONDS = 60


class StreamSlots:
    """Open streams per client address, across every instance."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self._take = client.register_script(scripts.TAKE_STREAM_SLOT)

    def take(self, address: str, stream_id: str, cap: int, lifetime_ms: int) -> bool:
        """Hold one of the address's ``cap`` slots for ``stream_id``; False when all are held."""
        now = int(time.time() * 1000)
        key = keys.stream_slots_key(address)
        return bool(self._take(keys=[key], args=[now, cap, lifetime_ms, stream_id]))

    def release(self, address: str, stream_id: str) -> None:
        self.client.zrem(keys.stream_slots_key(address), stream_id)


class Tickets:
    """Short-lived, single-use stream tickets (what a browser may put in a URL)."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client

    def issue(self, game_id: str, ticket: str, grant: bytes) -> None:
        """Keep ``grant`` (what :meth:`redeem` gives back) under ``ticket`` for its lifetime."""
        self.client.set(keys.ticket_key(game_id, ticket), grant, ex=TICKET_SECONDS)

    def redeem(self, game_id: str, ticket: str) -> bytes | None:
        """The ticket's grant, once: a used, expired or unknown ticket gives None."""
        if not keys.valid_game_id(game_id):
            return None
        grant = self.client.getdel(keys.ticket_key(game_id, ticket))
        return grant if isinstance(grant, bytes) else None
