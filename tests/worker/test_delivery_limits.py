"""Limits of webhook deliveries that a receiver's side cannot stretch: the lookup of its name
counts within an attempt's time, and one host's slow receivers hold at most
DELIVERIES_PER_HOST of the sending threads, under one name or many. Sent by the worker's own
Sender on a real Redis, to receivers the tests start."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import redis

from devstack.redis_server import RedisServer
from service.api import webhook_urls
from service.api.webhook_urls import allowed_hosts
from service.store import keys
from service.store.hooks import Delivery, HookEvent, Webhooks
from service.worker import deliveries
from service.worker.deliveries import Sender, now_ms
from tests.players.receiver import receiver
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
    ``slow.example`` answers only once the test lets it (60 s at most); any other name
    (Redis's) is looked up as usual. The attempt must end while its lookup still hangs."""
    answered, lookup_ended = threading.Event(), threading.Event()
    real = socket.getaddrinfo

    def late(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "slow.example":
            return real(host, *args, **kwargs)
        answered.wait(60)
        lookup_ended.set()
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", late)
    monkeypatch.setattr(deliveries, "ATTEMPT_SECONDS", 1.0)
    sender = Sender(hooks, allowed_hosts("slow.example"), RETRY_MS, GIVE_UP_MS)
    delivery = queued(hooks, "http://slow.example/turns", 0, now_ms())
    [taken] = hooks.take_due(now_ms(), 10)
    try:
        sender.deliver(taken)
        ended_first = not lookup_ended.is_set()
    finally:
        answered.set()
    assert ended_first, "the attempt waited for its lookup, outside its 1 s"
    again = stored(hooks.client, delivery)  # a failed attempt: tried again later, not dropped
    assert again is not None and again.attempt == 1


@dataclass
class Holding:
    """A receiver that reads each request and never answers, until the test ends: how many
    connections it held at once, at most."""

    url: str
    now: int = 0
    most: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def holding(address: str) -> Iterator[Holding]:
    listener = socket.create_server((address, 0))
    seen = Holding(f"http://{address}:{listener.getsockname()[1]}")
    done = threading.Event()

    def hold(conn: socket.socket) -> None:
        with seen.lock:
            seen.now += 1
            seen.most = max(seen.most, seen.now)
        with conn:
            conn.recv(65536)
            done.wait(30)
        with seen.lock:
            seen.now -= 1

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed: the test is over
                return
            threading.Thread(target=hold, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield seen
    finally:
        done.set()
        listener.close()


def served_beside(hooks: Webhooks, allow: frozenset[str], slow: Holding, fast: Any) -> Sender:
    """Run a sender until ``fast`` gets its delivery, queued behind ``slow``'s, within 5 s;
    ``slow`` must have held 1 to DELIVERIES_PER_HOST connections at once. The sender, whose
    threads end with the slow receiver's connections."""
    sender = Sender(hooks, allow, RETRY_MS, GIVE_UP_MS)
    stop = threading.Event()
    threading.Thread(target=sender.run, args=(stop,), daemon=True).start()
    try:
        got = fast.next(timeout=5)
    finally:
        stop.set()
    assert got.path == "/turns"
    with slow.lock:
        assert 1 <= slow.most <= deliveries.DELIVERIES_PER_HOST, slow.most
    return sender


def test_one_hosts_slow_receivers_leave_the_other_hosts_their_threads(hooks: Webhooks) -> None:
    """Deliveries to one host that never answers, more than the sender has threads, queued
    first, then one to another host. Without a cap per host, every thread waits on the slow
    host for ATTEMPT_SECONDS (10 s) and the other delivery with them."""
    with holding("127.0.0.2") as slow, receiver() as fast:
        first = now_ms() - 1_000
        for n in range(deliveries.THREADS + 2):
            queued(hooks, f"{slow.url}/turns", n, first)
        queued(hooks, f"{fast.url}/turns", 99, now_ms())
        sender = served_beside(hooks, allowed_hosts("127.0.0.1,127.0.0.2"), slow, fast)
    for _ in range(deliveries.THREADS):  # the slow host's attempts ended with its connections
        assert sender.free.acquire(timeout=15)


def test_many_names_for_one_slow_receiver_leave_the_other_hosts_their_threads(
    hooks: Webhooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, with the slow receiver's deliveries spread over five names that all resolve
    to it (a wildcard DNS zone costs nothing): counted by name only, the five take every thread.
    The resolver is the one stand-in: ``nN.example`` resolves to 127.0.0.2."""
    real = socket.getaddrinfo

    def wildcard(host: Any, *args: Any, **kwargs: Any) -> Any:
        return real("127.0.0.2" if str(host).endswith(".example") else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", wildcard)
    names = [f"n{n}.example" for n in range(5)]
    with holding("127.0.0.2") as slow, receiver() as fast:
        port = slow.url.rsplit(":", 1)[1]
        first = now_ms() - 1_000
        for n in range(deliveries.THREADS + 2):
            queued(hooks, f"http://{names[n % len(names)]}:{port}/turns", n, first)
        queued(hooks, f"{fast.url}/turns", 99, now_ms())
        sender = served_beside(hooks, allowed_hosts(",".join(["127.0.0.1", *names])), slow, fast)
    for _ in range(deliveries.THREADS):
        assert sender.free.acquire(timeout=15)


def test_a_name_whose_lookup_never_ends_holds_one_lookup_thread_not_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An attempt gives up on a lookup at its deadline, and the lookup goes on holding its
    thread: attempts at one name whose lookup never ends must share one lookup, or
    LOOKUP_THREADS of them hold every lookup thread and no other name is looked up in time. The
    resolver is the one stand-in: ``hung.example`` never answers until the test ends."""
    release = threading.Event()
    real = socket.getaddrinfo

    def hung(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "hung.example":
            return real(host, *args, **kwargs)
        release.wait(60)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    allow = allowed_hosts("hung.example,127.0.0.1")
    try:
        for _ in range(webhook_urls.LOOKUP_THREADS + 1):
            with pytest.raises(TimeoutError):
                webhook_urls.target(
                    "http://hung.example/turns", allow, time.monotonic() + 0.05, "ann"
                )
        found = webhook_urls.target("http://127.0.0.1:9/turns", allow, time.monotonic() + 5, "ann")
    finally:
        release.set()
    assert isinstance(found, webhook_urls.Target), found


def attempted(sender: Sender, player: str, url: str) -> None:
    """One delivery of ``player``'s to ``url`` taken and attempted, its webhook removed after
    (a player keeps 10 at most, and makes new ones at will)."""
    hook = sender.hooks.register(player, url, [HookEvent.YOUR_TURN])
    assert hook is not None
    delivery = Delivery(f"msg_{hook.hook_id}", player, hook.hook_id, "{}", now_ms())
    sender.hooks.enqueue([delivery], now_ms())
    [taken] = sender.hooks.take_due(now_ms(), 10)
    sender.deliver(taken)
    sender.hooks.remove(player, hook.hook_id)


def test_one_players_names_whose_lookups_never_end_leave_other_players_theirs(
    hooks: Webhooks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A player's webhooks at ever new names whose lookups never end (a name server of theirs
    that never answers): each attempt gives up at its deadline and its lookup goes on holding a
    lookup thread, so with no cap per player, LOOKUP_THREADS of them hold every one and another
    player's delivery is not looked up in time. The resolver is the one stand-in: a name under
    ``hung.example`` never answers until the test ends."""
    release = threading.Event()
    real = socket.getaddrinfo

    def hung(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not str(host).endswith(".hung.example"):
            return real(host, *args, **kwargs)
        release.wait(60)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    names = [f"n{n}.hung.example" for n in range(webhook_urls.LOOKUP_THREADS + 1)]
    with receiver() as fast:
        allow = allowed_hosts(",".join(["127.0.0.1", *names]))
        sender = Sender(hooks, allow, RETRY_MS, GIVE_UP_MS)
        try:
            monkeypatch.setattr(deliveries, "ATTEMPT_SECONDS", 0.1)
            for name in names:
                attempted(sender, "mallory", f"http://{name}/turns")
            monkeypatch.setattr(deliveries, "ATTEMPT_SECONDS", 10.0)
            attempted(sender, "ann", f"{fast.url}/turns")
            got = fast.next(timeout=5)
        finally:
            release.set()
    assert got.path == "/turns"


def busy_sender(hooks: Webhooks, host: str) -> Sender:
    """A sender with DELIVERIES_PER_HOST deliveries to ``host`` in flight already."""
    sender = Sender(hooks, allowed_hosts(host), RETRY_MS, GIVE_UP_MS)
    sender.in_flight[host] = deliveries.DELIVERIES_PER_HOST
    return sender


def test_a_delivery_past_its_hour_to_a_busy_host_is_dropped_not_put_back(
    hooks: Webhooks,
) -> None:
    """A delivery put back for a busy host is given up on an hour after its first try, as
    after an attempt: a host kept busy must not keep its deliveries queued for ever."""
    old = queued(hooks, "http://127.0.0.2/turns", 0, now_ms())
    old = replace(old, first_ms=now_ms() - GIVE_UP_MS - 1)
    hooks.enqueue([old], now_ms())
    [taken] = hooks.take_due(now_ms(), 10)
    busy_sender(hooks, "127.0.0.2").deliver(taken)
    assert stored(hooks.client, old) is None, "put back past its hour"


@pytest.mark.parametrize(
    ("age_ms", "least_ms", "most_ms"),
    [(0, 1_000, 6_000), (100_000, 10_000, 15_000), (600_000, 60_000, 65_000)],
)
def test_a_delivery_waiting_long_for_a_busy_host_is_read_again_less_often(
    hooks: Webhooks, age_ms: int, least_ms: int, most_ms: int
) -> None:
    """A delivery put back for a busy host is due again later the longer it has waited: one
    due again every second, a queue of thousands for a host kept busy would be read and written
    again thousands of times a second."""
    delivery = queued(hooks, "http://127.0.0.2/turns", 0, now_ms())
    delivery = replace(delivery, first_ms=now_ms() - age_ms)
    hooks.enqueue([delivery], now_ms())
    [taken] = hooks.take_due(now_ms(), 10)
    before = now_ms()
    busy_sender(hooks, "127.0.0.2").deliver(taken)
    due = hooks.client.zscore(keys.HOOK_DUE, delivery.delivery_id)
    assert due is not None and least_ms <= due - before <= most_ms, due - before
