"""Slots per address (open streams' and others) and single-use stream tickets, on a real
Redis."""

from __future__ import annotations

import time

import pytest
import redis

from service.store import keys
from service.store.slots import AddressSlots, SlotKind
from service.store.streams import TICKET_SECONDS, Tickets


@pytest.fixture()
def slots(redis_client: redis.Redis) -> AddressSlots:
    return AddressSlots(redis_client, SlotKind.STREAMS)


def test_an_address_holds_at_most_its_cap(slots: AddressSlots) -> None:
    assert [slots.take("10.0.0.1", f"s{n}", 3, 60_000) for n in range(4)] == [True] * 3 + [False]
    assert slots.take("10.0.0.2", "other", 3, 60_000) is True
    slots.release("10.0.0.1", "s0")
    assert slots.take("10.0.0.1", "s4", 3, 60_000) is True


def test_slots_of_a_dead_process_age_out(slots: AddressSlots, redis_client: redis.Redis) -> None:
    assert slots.take("10.0.0.1", "old", 1, 50)
    assert not slots.take("10.0.0.1", "new", 1, 50)
    time.sleep(0.1)
    assert slots.take("10.0.0.1", "new", 1, 50)
    # The address is kept only as a digest.
    assert b"10.0.0.1" not in b"".join(redis_client.keys("*"))


def test_each_kind_has_slots_of_its_own(redis_client: redis.Redis) -> None:
    streams = AddressSlots(redis_client, SlotKind.STREAMS)
    lookups = AddressSlots(redis_client, SlotKind.WEBHOOK_LOOKUPS)
    assert streams.take("10.0.0.1", "s", 1, 60_000)
    assert lookups.take("10.0.0.1", "l", 1, 60_000)
    assert not lookups.take("10.0.0.1", "m", 1, 60_000)


def test_a_ticket_opens_once(redis_client: redis.Redis) -> None:
    tickets = Tickets(redis_client)
    tickets.issue("gameaaaa", "tk-secret", b"grant")
    key = keys.ticket_key("gameaaaa", "tk-secret")
    assert 0 < redis_client.ttl(key) <= TICKET_SECONDS
    assert b"tk-secret" not in key.encode()
    assert tickets.redeem("gameaaaa", "tk-other") is None
    assert tickets.redeem("gamebbbb", "tk-secret") is None
    assert tickets.redeem("gameaaaa", "tk-secret") == b"grant"
    assert tickets.redeem("gameaaaa", "tk-secret") is None
    assert tickets.redeem("../../x", "tk-secret") is None
