"""Kept answers to ``POST /games`` on a real redis-server: sealed under their Idempotency-Key,
kept once (a concurrent second request gets the first answer), unreadable without the key."""

from __future__ import annotations

import pytest
import redis

from service.store import GameStore, KeptResponse, StoreError
from service.store import games as store_games
from service.store import keys as K
from service.store.sealed import seal, unseal
from service.store.tokens import hash_token, new_token

FIRST = KeptResponse(201, b'{"game_id":"g1","host_token":"secret-host"}')


@pytest.fixture()
def gs(redis_client: redis.Redis) -> GameStore:
    return GameStore(redis_client, game_ttl=1000, idem_ttl=500)


def test_the_first_kept_create_answer_wins(gs: GameStore, redis_client: redis.Redis) -> None:
    assert gs.keep_create("key-1", FIRST) is None
    # A concurrent request with the same key finds the first answer and must send that one.
    second = KeptResponse(201, b'{"game_id":"g2","host_token":"other"}')
    assert gs.keep_create("key-1", second) == FIRST
    assert gs.kept_create("key-1") == FIRST
    assert 0 < redis_client.ttl(K.create_key("key-1")) <= 500


def test_a_kept_create_answer_is_sealed_under_its_key(
    gs: GameStore, redis_client: redis.Redis
) -> None:
    gs.keep_create("key-1", FIRST)
    stored = redis_client.get(K.create_key("key-1"))
    assert isinstance(stored, bytes) and b"secret-host" not in stored
    assert gs.kept_create("key-2") is None
    # An altered record is not replayed: the request is treated as new.
    redis_client.set(K.create_key("key-1"), stored[:-1] + bytes([stored[-1] ^ 1]))
    assert gs.kept_create("key-1") is None


def test_sealed_data_opens_only_with_its_key_and_unaltered() -> None:
    blob = seal("k", b"tokens")
    assert unseal("k", blob) == b"tokens"
    assert unseal("other", blob) is None
    assert unseal("k", blob[:5]) is None
    assert seal("k", b"tokens") != blob  # a fresh nonce each time


def test_kept_response_round_trip_and_unknown_format() -> None:
    assert KeptResponse.decode(FIRST.encode("k"), "k") == FIRST
    with pytest.raises(ValueError, match="unknown kept-response format"):
        KeptResponse.decode(b"2019" + FIRST.encode("k")[4:], "k")


def test_a_secret_kept_response_is_sealed_under_its_key() -> None:
    secret = KeptResponse(201, FIRST.body, secret=True)
    raw = secret.encode("token\nkey")
    assert b"secret-host" not in raw and raw[:4] == b"2012"
    assert KeptResponse.decode(raw, "token\nkey") == secret
    with pytest.raises(ValueError, match="does not open"):
        KeptResponse.decode(raw, "token\nother key")


def test_create_gives_up_when_every_drawn_id_is_taken(
    gs: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_games, "new_game_id", lambda: "sameidevery1")
    assert gs.create(b"s", new_token(), [hash_token(new_token())], [b"r1"]) == "sameidevery1"
    with pytest.raises(StoreError, match="free game id"):
        gs.create(b"s", new_token(), [hash_token(new_token())], [b"r1"])
    assert gs.load("sameidevery1").state == b"s"
