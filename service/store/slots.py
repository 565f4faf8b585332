"""What one client address holds at once, counted in Redis so that a cap holds across every
instance: open streams, and webhook registrations waiting for their URL's check.

- ``mt:{<kind>:<digest of the address>}`` sorted set: what the address holds of that kind, by
  the time each was taken; a member older than the kind's longest hold belonged to a process
  that died.
"""

from __future__ import annotations

import time
from enum import StrEnum

import redis
from redis.cluster import RedisCluster

from . import keys, scripts


class SlotKind(StrEnum):
    """What an address holds slots for (the key names it)."""

    STREAMS = "streams"  # open streams and long-polls
    WEBHOOK_LOOKUPS = "webhook_lookups"  # webhook registrations waiting for their URL's check


class AddressSlots:
    """What each client address holds of one kind, across every instance."""

    def __init__(self, client: redis.Redis | RedisCluster, kind: SlotKind) -> None:
        self.client = client
        self.kind = kind
        self._take = client.register_script(scripts.TAKE_ADDRESS_SLOT)

    def take(self, address: str, slot_id: str, cap: int, lifetime_ms: int) -> bool:
        """Hold one of the address's ``cap`` slots for ``slot_id``; False when all are held."""
        now = int(time.time() * 1000)
        key = keys.address_slots_key(self.kind, address)
        return bool(self._take(keys=[key], args=[now, cap, lifetime_ms, slot_id]))

    def release(self, address: str, slot_id: str) -> None:
        self.client.zrem(keys.address_slots_key(self.kind, address), slot_id)
