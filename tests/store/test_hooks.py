"""Webhooks in Redis: registrations per player, deliveries taken once under a lease."""

from __future__ import annotations

import time

import pytest
import redis
from standardwebhooks.webhooks import Webhook

from service.store import keys
from service.store.hooks import MAX_HOOKS, Delivery, Hook, HookEvent, Webhooks


@pytest.fixture()
def hooks(redis_client: redis.Redis) -> Webhooks:
    return Webhooks(redis_client)


def delivery(n: int, first_ms: int = 1000) -> Delivery:
    return Delivery(f"msg_{n}", "player000001", "wh_1", f'{{"n": {n}}}', first_ms)


def test_a_player_registers_lists_and_removes_webhooks(hooks: Webhooks) -> None:
    made = [hooks.register("player000001", "https://x.example/0", [HookEvent.YOUR_TURN])]
    made += [
        hooks.register("player000001", f"https://x.example/{n}", list(HookEvent))
        for n in range(1, MAX_HOOKS)
    ]
    assert all(made) and hooks.register("player000001", "https://x.example/late", []) is None
    assert hooks.of_player("player000002") == []
    listed = hooks.of_player("player000001")
    assert len(listed) == MAX_HOOKS and {h.hook_id for h in listed} == {
        h.hook_id for h in made if h
    }
    first = made[0]
    assert first is not None and hooks.get("player000001", first.hook_id) == first
    assert first.events == (HookEvent.YOUR_TURN,)
    Webhook(first.secret)  # a secret the Standard Webhooks library takes
    assert first.secret.startswith("whsec_") and first.secret != (made[1] and made[1].secret)
    assert hooks.remove("player000001", first.hook_id) and not hooks.remove(
        "player000001", first.hook_id
    )
    assert hooks.get("player000001", first.hook_id) is None


def test_due_deliveries_are_taken_once_until_their_lease_ends(hooks: Webhooks) -> None:
    hooks.enqueue([delivery(1), delivery(2)], 1000)
    hooks.enqueue([delivery(3)], 5000)
    hooks.enqueue([], 0)
    assert hooks.take_due(999, 10) == []
    taken = hooks.take_due(1000, 10, lease_ms=50)
    assert sorted(d.delivery_id for d in taken) == ["msg_1", "msg_2"]
    assert hooks.take_due(1001, 10) == []  # leased
    hooks.done(taken[0])
    assert [d.delivery_id for d in hooks.take_due(1050, 10)] == [taken[1].delivery_id]
    assert hooks.pending() == 2


def test_a_retry_keeps_the_delivery_and_counts_the_attempt(hooks: Webhooks) -> None:
    hooks.enqueue([delivery(1)], 1000)
    (taken,) = hooks.take_due(1000, 1)
    hooks.retry(Delivery(**{**taken.__dict__, "attempt": 1}), 2000)
    assert hooks.take_due(1999, 5) == []
    (again,) = hooks.take_due(2000, 5)
    assert (again.delivery_id, again.attempt, again.body, again.first_ms) == (
        "msg_1",
        1,
        taken.body,
        1000,
    )


def test_a_delivery_whose_record_is_gone_is_dropped(
    hooks: Webhooks, redis_client: redis.Redis
) -> None:
    hooks.enqueue([delivery(1)], int(time.time() * 1000))
    redis_client.delete("mt:{hooks}:jobs")
    assert hooks.take_due(int(time.time() * 1000) + 1, 5) == []
    assert hooks.pending() == 0


def test_a_delivery_that_cannot_be_read_is_dropped_and_the_others_taken(
    hooks: Webhooks, redis_client: redis.Redis
) -> None:
    hooks.enqueue([delivery(1), delivery(2)], 1000)
    redis_client.hset(keys.HOOK_JOBS, "msg_bad", b'{"delivery_id": "msg_bad"}')
    redis_client.hset(keys.HOOK_JOBS, "msg_worse", b"not json")
    redis_client.zadd(keys.HOOK_DUE, {"msg_bad": 1000, "msg_worse": 1000})
    taken = hooks.take_due(1000, 10)
    assert sorted(d.delivery_id for d in taken) == ["msg_1", "msg_2"]
    assert hooks.pending() == 2
    assert redis_client.hmget(keys.HOOK_JOBS, ["msg_bad", "msg_worse"]) == [None, None]


def test_concurrent_registrations_never_pass_the_cap(hooks: Webhooks) -> None:
    """Registrations racing for a player's last free places: at most MAX_HOOKS are stored, and
    every one answered as made is among them."""
    import threading

    threads, barrier = 30, threading.Barrier(30)
    for round_ in range(3):
        player = f"player00010{round_}"
        made: list[Hook | None] = []

        def register(n: int, player: str = player, made: list[Hook | None] = made) -> None:
            barrier.wait()
            made.append(hooks.register(player, f"https://x.example/{n}", []))

        workers = [threading.Thread(target=register, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        stored = hooks.of_player(player)
        assert len(stored) == MAX_HOOKS, f"{len(stored)} webhooks stored"
        assert {h.hook_id for h in stored} == {h.hook_id for h in made if h}
