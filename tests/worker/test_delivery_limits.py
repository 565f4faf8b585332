"""Limits of webhook deliveries that a receiver's side cannot stretch: the lookup of its name
counts within an attempt's time. Sent by the worker's own Sender on a real Redis."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from devstack.redis_server import RedisServer
from service.api.webhook_urls import allowed_hosts
from service.store import keys
from service.store.hooks import Delivery, HookEvent, Webhooks
from service.worker import deliveries
from service.worker.deliveries import Sender, now_ms
from tests.redis_clients import flushed_client

RETRY_MS, GIVE_UP_MS = 60_000, 3_600_000


@pytest.fixture(scope="module")
def _own_redis_server() -> Iterator[RedisServer]:
    """A redis-server of this module's own: no live server's worker takes these deliveries."""
    with RedisServer() as server:
        yield server


@pytest.fixture()
def hooks(_own_redis_server: RedisServer) -> Iterator[Webhooks]:
    with flushed_client(_own_redis_server) as client:
        yield Webhooks(client)


def queued(hooks: Webhooks, url: str, n: int, due_ms: int) -> Delivery:
    """A delivery to ``url``, due at ``due_ms``, for a player of its own (10 webhooks each)."""
    hook = hooks.register(f"player{n}", url, [HookEvent.YOUR_TURN])
    assert hook is not None
    delivery = Delivery(f"msg_{n}", f"player{n}", hook.hook_id, "{}", now_ms())
    hooks.enqueue([delivery], due_ms)
    return delivery


def stored(client: redis.Redis, delivery: Delivery) -> Delivery | None:
    raw = client.hget(keys.HOOK_JOBS, delivery.delivery_id)
    return None if raw is None else Delivery.from_json(raw)


def test_a_slow_name_lookup_ends_within_the_attempts_time(
    hooks: Webhooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A receiver's name server that answers late held the sending thread for as long as it
    took, outside ATTEMPT_SECONDS. The resolver is the one stand-in here: a lookup of
    ``slow.example`` answers after 5 s; any other name (Redis's) is looked up as usual."""
    answered = threading.Event()
    real = socket.getaddrinfo

    def late(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "slow.example":
            return real(host, *args, **kwargs)
        answered.wait(5)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", late)
    monkeypatch.setattr(deliveries, "ATTEMPT_SECONDS", 1.0)
    sender = Sender(hooks, allowed_hosts("slow.example"), RETRY_MS, GIVE_UP_MS)
    delivery = queued(hooks, "http://slow.example/turns", 0, now_ms())
    [taken] = hooks.take_due(now_ms(), 10)
    started = time.monotonic()
    try:
        sender.deliver(taken)
    finally:
        answered.set()
    took = time.monotonic() - started
    assert took < 1.5, f"the attempt took {took:.1f} s, its lookup outside its 1 s"
    again = stored(hooks.client, delivery)  # a failed attempt: tried again later, not dropped
    assert again is not None and again.attempt == 1
