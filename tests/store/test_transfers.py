"""Seat transfer tickets in Redis: a digest of the token, never the token; found until spent
(a claim's compare-and-set spends it: tests/api/test_store.py)."""

from __future__ import annotations

import redis

from service.store import keys
from service.store.tokens import hash_token, new_token
from service.store.transfers import TRANSFER_SECONDS, Claim, Transfer, Transfers


def test_a_ticket_is_found_and_keeps_no_secret(redis_client: redis.Redis) -> None:
    transfers, token = Transfers(redis_client), new_token()
    transfers.issue("gameaaaa", "tt.secret", Transfer(2, hash_token(token)))
    key = keys.transfer_key("gameaaaa", "tt.secret")
    stored = redis_client.get(key) or b""
    assert token.encode() not in stored and b"tt.secret" not in stored + key.encode()
    assert 0 < redis_client.ttl(key) <= TRANSFER_SECONDS
    assert transfers.find("gamebbbb", "tt.secret") == (Claim.UNKNOWN, None)
    found = (Claim.FOUND, Transfer(2, hash_token(token)))
    assert transfers.find("gameaaaa", "tt.secret") == found
    assert transfers.find("gameaaaa", "tt.secret") == found  # finding spends nothing
    assert transfers.find("../../x", "tt.secret") == (Claim.UNKNOWN, None)
