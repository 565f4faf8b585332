"""Webhooks: each player's registrations, and the deliveries waiting to be sent.

- ``mt:{player:<id>}:hooks`` hash (the player's slot): webhook id → JSON ``{"url", "events",
  "secret"}``. The secret is kept as it was given: it is the key that signs each delivery, so a
  digest would not do (treat Redis's data as secret, as for any signing key).
- ``mt:{hooks}:due`` sorted set and ``mt:{hooks}:jobs`` hash (one slot): delivery id → when it
  is due, and its JSON (the player and webhook it goes to, its body, its attempts). A sender
  takes due deliveries with one script, under a lease, so each is sent by one sender at a time
  and a sender that dies leaves its deliveries to the next.
"""

from __future__ import annotations

import logging
import secrets
from base64 import b64encode
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import cast

import orjson
import redis
from redis.cluster import RedisCluster

from . import keys, scripts

log = logging.getLogger(__name__)

#: A player registers at most this many webhooks.
MAX_HOOKS = 10
#: A taken delivery is the taker's for this long, then due again (a dead sender's).
LEASE_MS = 60_000


class HookEvent(StrEnum):
    YOUR_TURN = "your_turn"
    GAME_OVER = "game_over"
    REMATCH = "rematch"


@dataclass(frozen=True)
class Hook:
    hook_id: str
    url: str
    events: tuple[HookEvent, ...]
    secret: str


@dataclass(frozen=True)
class Delivery:
    """One message to one webhook; its id is the same on every attempt (``webhook-id``)."""

    delivery_id: str
    player_id: str
    hook_id: str
    body: str
    first_ms: int
    attempt: int = 0

    def to_json(self) -> bytes:
        return orjson.dumps(asdict(self))

    @classmethod
    def from_json(cls, raw: bytes) -> Delivery:
        return cls(**orjson.loads(raw))


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 24 random bytes in base64."""
    return "whsec_" + b64encode(secrets.token_bytes(24)).decode()


class Webhooks:
    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self._take = client.register_script(scripts.TAKE_DUE_DELIVERIES)
        self._register = client.register_script(scripts.REGISTER_HOOK)

    def register(self, player_id: str, url: str, events: list[HookEvent]) -> Hook | None:
        """A new webhook of the player; None when it has ``MAX_HOOKS`` already (counted and
        written in one script: concurrent registrations never pass the cap)."""
        hook = Hook("wh_" + secrets.token_urlsafe(12), url, tuple(events), new_secret())
        fields = {"url": url, "events": list(events), "secret": hook.secret}
        key = keys.player_hooks_key(player_id)
        made = self._register(keys=[key], args=[hook.hook_id, orjson.dumps(fields), MAX_HOOKS])
        return hook if made else None

    def of_player(self, player_id: str) -> list[Hook]:
        found = cast("dict[bytes, bytes]", self.client.hgetall(keys.player_hooks_key(player_id)))
        return sorted((_hook(k.decode(), v) for k, v in found.items()), key=lambda h: h.hook_id)

    def get(self, player_id: str, hook_id: str) -> Hook | None:
        raw = self.client.hget(keys.player_hooks_key(player_id), hook_id)
        return _hook(hook_id, raw) if isinstance(raw, bytes) else None

    def remove(self, player_id: str, hook_id: str) -> bool:
        return bool(self.client.hdel(keys.player_hooks_key(player_id), hook_id))

    def enqueue(self, deliveries: list[Delivery], due_ms: int) -> None:
        if not deliveries:
            return
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(keys.HOOK_JOBS, mapping={d.delivery_id: d.to_json() for d in deliveries})
        pipe.zadd(keys.HOOK_DUE, {d.delivery_id: due_ms for d in deliveries})
        pipe.execute()

    def take_due(self, now_ms: int, limit: int, lease_ms: int = LEASE_MS) -> list[Delivery]:
        """Up to ``limit`` deliveries due by ``now_ms``, each leased for ``lease_ms``. One that
        cannot be read (written by another version, or damaged) is dropped, not returned:
        taken again and again, it would stop every sender that meets it."""
        raw = self._take(keys=[keys.HOOK_DUE, keys.HOOK_JOBS], args=[now_ms, limit, lease_ms])
        pairs = cast("list[bytes]", raw)
        out = []
        for delivery_id, job in zip(pairs[::2], pairs[1::2], strict=True):
            try:
                out.append(Delivery.from_json(job))
            except (orjson.JSONDecodeError, TypeError, ValueError) as err:
                log.error("webhook delivery %r dropped: unreadable: %s", delivery_id, err)
                self._drop(delivery_id.decode())
        return out

    def retry(self, delivery: Delivery, due_ms: int) -> None:
        self.enqueue([delivery], due_ms)

    def done(self, delivery: Delivery) -> None:
        self._drop(delivery.delivery_id)

    def _drop(self, delivery_id: str) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.zrem(keys.HOOK_DUE, delivery_id)
        pipe.hdel(keys.HOOK_JOBS, delivery_id)
        pipe.execute()

    def pending(self) -> int:
        return int(self.client.zcard(keys.HOOK_DUE))


def _hook(hook_id: str, raw: bytes) -> Hook:
    fields = orjson.loads(raw)
    events = tuple(HookEvent(e) for e in fields["events"])
    return Hook(hook_id, fields["url"], events, fields["secret"])
