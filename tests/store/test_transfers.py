"""Seat transfer tickets in Redis: a digest of the token, never the token; found until
spent, and spent until they expire."""

from __future__ import annotations

import redis

from service.store import keys
from service.store.tokens import hash_token, new_token
from service.store.transfers import TRANSFER_SECONDS, Claim, Transfer, Transfers


def test_a_ticket_is_claimed_once_and_keeps_no_secret(redis_client: redis.Redis) -> None:
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
    transfers.spend("gameaaaa", "tt.secret")
    assert transfers.find("gameaaaa", "tt.secret") == (Claim.SPENT, None)
    assert 0 < redis_client.ttl(key) <= TRANSFER_SECONDS  # spent, and still expires
    assert transfers.find("../../x", "tt.secret") == (Claim.UNKNOWN, None)


def test_a_ticket_gone_meanwhile_is_not_made_again_by_its_spending(
    redis_client: redis.Redis,
) -> None:
    transfers = Transfers(redis_client)
    transfers.spend("gameaaaa", "tt.expired")
    assert redis_client.exists(keys.transfer_key("gameaaaa", "tt.expired")) == 0
