"""``WEBHOOK_ALLOW_HOSTS``: a bare host allows its every port, ``host:port`` only that one."""

from __future__ import annotations

import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api import webhook_urls
from service.api.app import create_app
from service.api.webhook_urls import Target, allowed_hosts, refusal, target

from .conftest import bearer


@pytest.mark.parametrize(
    ("setting", "url", "allowed"),
    [
        ("127.0.0.1", "http://127.0.0.1:8080/hook", True),
        ("127.0.0.1", "http://127.0.0.1:6379/", True),
        ("127.0.0.1:8080", "http://127.0.0.1:8080/hook", True),
        ("127.0.0.1:8080", "http://127.0.0.1:6379/", False),
        ("127.0.0.1:8080", "http://127.0.0.1/hook", False),
        ("localhost:80", "http://LOCALHOST/hook", True),
        ("receiver:443", "https://receiver/hook", True),
        ("[::1]:9000", "http://[::1]:9000/hook", True),
        ("[::1]:9000", "http://[::1]:9001/hook", False),
        ("10.0.0.5:8080, 10.0.0.6", "http://10.0.0.6:1/hook", True),
    ],
)
def test_an_allowed_host_with_a_port_allows_that_port_only(
    setting: str, url: str, allowed: bool
) -> None:
    why = refusal(url, allowed_hosts(setting), "ann")
    assert (why is None) == allowed, why


def test_a_delivery_connects_to_the_addresses_the_check_approved() -> None:
    """The delivery's target carries the addresses the policy checked: the connection is made
    to them, never to a second resolution of the name (DNS rebinding)."""
    soon = time.monotonic() + 10
    found = target(
        "http://127.0.0.1:8080/turns?player=ann", allowed_hosts("127.0.0.1"), soon, "ann"
    )
    assert isinstance(found, Target), found
    assert (found.host, found.port, found.path) == ("127.0.0.1", 8080, "/turns?player=ann")
    assert [address[:2] for _, address in found.addresses] == [("127.0.0.1", 8080)]
    refused = target("https://localhost/turns", frozenset(), soon, "ann")
    assert isinstance(refused, str) and "not public" in refused


@pytest.mark.parametrize(
    "address",
    [
        "64:ff9b::a00:5",  # NAT64 of 10.0.0.5: an IPv6-only cluster's gateway forwards there
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254, the cloud metadata service
        "64:ff9b:1::a00:5",  # NAT64's local-use prefix
        # 10.0.0.5 where a /48 NAT64 prefix puts it (RFC 6052 §2.2), 8.8.8.8 in the last 32 bits
        "64:ff9b:1:a00:0:500:808:808",
        "64:ff9b:1::808:808",  # 8.8.8.8 under a /96 of the local-use prefix: which one is not known
        "2002:a00:5::1",  # 6to4 of 10.0.0.5
        "::127.0.0.1",  # IPv4-compatible (deprecated) loopback
        "::ffff:0:a00:5",  # IPv4-translated 10.0.0.5 (SIIT, RFC 7915): a translator forwards it
        "::ffff:0:a9fe:a9fe",  # IPv4-translated 169.254.169.254
        "fec0::1",  # site-local (deprecated, still routed inside some networks)
        "ff05::1",  # multicast
        "224.0.0.1",  # multicast
    ],
)
def test_an_address_that_carries_a_private_one_is_not_public(address: str) -> None:
    """``is_global`` takes these for public: an IPv6 address that embeds a private IPv4 one,
    a site-local one, or a multicast group."""
    host = f"[{address}]" if ":" in address else address
    why = refusal(f"https://{host}/hook", frozenset(), "ann")
    assert why is not None and "not public" in why, why


def test_an_address_that_carries_a_public_one_is_public() -> None:
    public = ("[64:ff9b::808:808]", "[2002:808:808::1]", "[::ffff:8.8.8.8]", "[::ffff:0:808:808]")
    for address in (*public, "8.8.8.8"):
        assert refusal(f"https://{address}/hook", frozenset(), "ann") is None, address


def test_a_registrations_lookup_that_never_ends_is_answered_in_time(
    client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A webhook's name is looked up at registration, to refuse one that resolves into private
    space: a name server that never answers held the request, and its server thread, as long.
    The resolver is the one stand-in: ``hung.example`` answers (that it does not resolve) only
    when the test ends, or after 10 s."""
    release = threading.Event()
    real = socket.getaddrinfo

    def hung(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "hung.example":
            return real(host, *args, **kwargs)
        release.wait(10)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    monkeypatch.setattr(webhook_urls, "REGISTRATION_LOOKUP_SECONDS", 0.5, raising=False)
    made = client.post("/api/v1/players", json={"name": "ann"}).json
    assert made is not None
    hooks = f"/api/v1/players/{made['player_id']}/webhooks"
    try:
        url = "https://hung.example/turns"
        answered = client.post(hooks, json={"url": url}, headers=bearer(made["player_token"]))
    finally:
        release.set()
    assert answered.status_code == 503, answered.json
    assert answered.json is not None and answered.json["code"] == "webhook_lookup_timeout"
    assert answered.headers["Retry-After"].isdigit()
    listed = client.get(hooks, headers=bearer(made["player_token"])).json
    assert listed == {"webhooks": []}, "a refused registration stored a webhook"


def test_a_lookup_the_pool_cannot_start_counts_against_no_player(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool may refuse a lookup (a thread that cannot start, a pool shut down): none was
    started, so none counts against its player, who would otherwise be refused every lookup,
    for as long as the process lives, after LOOKUPS_PER_OWNER such refusals. A real pool, shut
    down, stands for one whose thread cannot start."""
    shut = ThreadPoolExecutor(1)
    shut.shutdown()
    url, soon = "https://8.8.8.8/turns", time.monotonic() + 10
    with monkeypatch.context() as patched:
        patched.setattr(webhook_urls, "_LOOKUPS", shut)
        for _ in range(webhook_urls.LOOKUPS_PER_OWNER):
            with pytest.raises(RuntimeError):
                target(url, frozenset(), soon, "zed")
    assert isinstance(target(url, frozenset(), soon, "zed"), Target)


def test_registrations_joining_a_lookup_past_its_window_are_answered_at_once(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registrations of a name being looked up wait for that lookup, not for one of their own:
    until REGISTRATION_LOOKUP_SECONDS after it started, not after they joined it. Otherwise a
    player sending one name its name server never answers, again and again, held a server
    thread per registration for the whole window each, and a few a second held them all.

    The first registration's window is 0.5 s; the registrations sent after it closed would wait
    60 s on a window of their own, far past the lookup, which ends when the test lets it (or
    after 10 s, and then answers 422: the name does not resolve). Each one is answered 503, so
    while the lookup was still held: none waited for it."""
    release = threading.Event()
    real = socket.getaddrinfo

    def hung(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "hung.example":
            return real(host, *args, **kwargs)
        release.wait(10)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    monkeypatch.setattr(webhook_urls, "REGISTRATION_LOOKUP_SECONDS", 0.5)
    made = client.post("/api/v1/players", json={"name": "ann"}).json
    assert made is not None
    hooks = f"/api/v1/players/{made['player_id']}/webhooks"
    auth, body = bearer(made["player_token"]), {"url": "https://hung.example/turns"}

    def register() -> tuple[int, str]:
        answer = app.test_client().post(hooks, json=body, headers=auth)
        return answer.status_code, (answer.json or {}).get("code", "")

    try:
        assert register() == (503, "webhook_lookup_timeout")
        monkeypatch.setattr(webhook_urls, "REGISTRATION_LOOKUP_SECONDS", 60.0)
        with ThreadPoolExecutor(8) as senders:
            answers = list(senders.map(lambda _: register(), range(8)))
    finally:
        release.set()
    assert answers == [(503, "webhook_lookup_timeout")] * 8


def test_an_address_has_at_most_its_cap_of_registrations_waiting_over_every_instance(
    redis_server: RedisServer, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each registration waiting for its URL's name holds a server thread, and players and
    names cost nothing to make: one address sending names that never resolve, from a new
    player every two names, held as many threads as it sent registrations. It may have
    WEBHOOK_LOOKUPS_PER_ADDRESS waiting, counted in Redis over every instance (two apps on one
    Redis here); the next is refused at once, 429, while another address is still served."""
    release, entered = threading.Event(), threading.Semaphore(0)
    real = socket.getaddrinfo

    def hung(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not str(host).endswith(".hung.example"):
            return real(host, *args, **kwargs)
        entered.release()
        release.wait(10)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hung)
    monkeypatch.setattr(webhook_urls, "REGISTRATION_LOOKUP_SECONDS", 60.0)
    config = {"REDIS_URL": redis_server.url, "WEBHOOK_LOOKUPS_PER_ADDRESS": 2}
    one, two = create_app(config), create_app(config)

    def register(app: Flask, name: str, url: str, address: str = "10.0.0.1") -> Any:
        sender = app.test_client()
        sender.environ_base["REMOTE_ADDR"] = address
        made = sender.post("/api/v1/players", json={"name": name}).json
        assert made is not None
        hooks = f"/api/v1/players/{made['player_id']}/webhooks"
        return sender.post(hooks, json={"url": url}, headers=bearer(made["player_token"]))

    with ThreadPoolExecutor(2) as senders:
        try:
            held = [
                senders.submit(register, one, name, f"https://{name}.hung.example/turns")
                for name in ("ann", "bob")
            ]
            assert all(entered.acquire(timeout=10) for _ in held), "no lookup started"
            refused = register(two, "cy", "https://cy.hung.example/turns")
            other = register(two, "dee", "https://8.8.8.8/turns", address="10.0.0.2")
        finally:
            release.set()
        assert [h.result().status_code for h in held] == [422, 422]
    assert refused.status_code == 429, refused.json
    assert refused.json["code"] == "rate_limited"
    assert refused.json["ratelimit"]["policy"]["name"] == "webhook_lookups"
    assert refused.headers["Retry-After"].isdigit()
    assert other.status_code == 201, other.json
    assert register(two, "eve", "https://8.8.8.8/turns").status_code == 201, "slots kept"
