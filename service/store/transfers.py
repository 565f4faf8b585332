"""One-time seat transfer tickets: a seat moved to another device.

``mt:{<id>}:transfer:<sha256(ticket)>`` string, for ``TRANSFER_SECONDS``: the seat and the
digest of the token that asked for the ticket (never a token), then ``spent`` once claimed, so
a second claim is told apart from an unknown ticket until it expires.

A claim reads the ticket, and the game's compare-and-set that stores the seat's new token
marks it spent (the key shares the game's hash tag): a refused claim (a stale ``If-Match``, a
lost race) leaves it to be claimed again, and a claim that lost to another finds it spent. What
makes a ticket work once is that compare-and-set: it stores the new token only if the seat
still has the digest the ticket names, which a claim changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import orjson
import redis
from redis.cluster import RedisCluster

from . import keys

#: A transfer ticket is claimed within this many seconds of its issue, or never.
TRANSFER_SECONDS = 600


@dataclass(frozen=True)
class Transfer:
    """What a ticket moves: the seat, held by the token with this digest when it was issued."""

    seat: int
    digest: bytes


class Claim(Enum):
    UNKNOWN = 0
    SPENT = 1
    FOUND = 2  # to be claimed


#: A claimed ticket's value until it expires (written by scripts.COMPARE_AND_SET).
SPENT = b"spent"


class Transfers:
    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client

    def issue(self, game_id: str, ticket: str, transfer: Transfer) -> None:
        record = orjson.dumps({"seat": transfer.seat, "digest": transfer.digest.hex()})
        self.client.set(keys.transfer_key(game_id, ticket), record, ex=TRANSFER_SECONDS)

    def find(self, game_id: str, ticket: str) -> tuple[Claim, Transfer | None]:
        """What the ticket moves, unless it is spent or unknown (it stays as it is)."""
        if not keys.valid_game_id(game_id):
            return Claim.UNKNOWN, None
        found = self.client.get(keys.transfer_key(game_id, ticket))
        if not isinstance(found, bytes):
            return Claim.UNKNOWN, None
        if found == SPENT:
            return Claim.SPENT, None
        record = orjson.loads(found)
        return Claim.FOUND, Transfer(int(record["seat"]), bytes.fromhex(record["digest"]))
