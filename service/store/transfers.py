"""One-time seat transfer tickets: a seat moved to another device.

``mt:{<id>}:transfer:<sha256(ticket)>`` string, for ``TRANSFER_SECONDS``: the seat and the
digest of the token that asked for the ticket (never a token), then ``spent`` once claimed (the
claim is one script), so a second claim is told apart from an unknown ticket until it expires.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import orjson
import redis
from redis.cluster import RedisCluster

from . import keys, scripts

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
    CLAIMED = 2


class Transfers:
    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self._claim = client.register_script(scripts.CLAIM_TRANSFER)

    def issue(self, game_id: str, ticket: str, transfer: Transfer) -> None:
        record = orjson.dumps({"seat": transfer.seat, "digest": transfer.digest.hex()})
        self.client.set(keys.transfer_key(game_id, ticket), record, ex=TRANSFER_SECONDS)

    def claim(self, game_id: str, ticket: str) -> tuple[Claim, Transfer | None]:
        """Spend the ticket: what it moves, once; a spent or unknown ticket moves nothing."""
        if not keys.valid_game_id(game_id):
            return Claim.UNKNOWN, None
        found = self._claim(keys=[keys.transfer_key(game_id, ticket)])
        claim = Claim(int(found[0]))
        if claim is not Claim.CLAIMED:
            return claim, None
        record = orjson.loads(found[1])
        return claim, Transfer(int(record["seat"]), bytes.fromhex(record["digest"]))
