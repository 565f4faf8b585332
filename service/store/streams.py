"""What the streams keep in Redis beyond the games: single-use stream tickets (each client
address's open streams are :class:`~service.store.slots.AddressSlots`).

- ``mt:{<id>}:ticket:<sha256(ticket)>`` string: the role a ticket stands for and the digest of
  the token it was issued to, for ``TICKET_SECONDS``; taken with ``GETDEL`` (single use). Only
  a digest of the ticket names the key, so Redis never holds a ticket's value.
"""

from __future__ import annotations

import redis
from redis.cluster import RedisCluster

from . import keys

#: A stream ticket opens one stream within this many seconds of its issue.
TICKET_SECONDS = 60


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
