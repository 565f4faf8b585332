"""Limits per client address (game creation), counted in Redis: they hold across instances,
follow the real address behind a trusted proxy, and answer 429 problems with Retry-After."""

from __future__ import annotations

import re

import pytest
import redis
from flask import Flask
from werkzeug.test import TestResponse

from devstack.redis_server import RedisServer
from service.api.app import create_app
from service.api.config import load_settings
from service.api.limits import describe
from service.store import keys as K

CREATE = "/api/v1/games"
BODY = {"players": ["ann", "bo"]}


def limited_app(redis_server: RedisServer, **config: object) -> Flask:
    return create_app(
        {
            "REDIS_URL": redis_server.url,
            "RATE_LIMIT_CREATE_PER_MINUTE": 3,
            "TRUSTED_PROXIES": 1,
            **config,
        }
    )


def from_address(address: str) -> dict[str, object]:
    """As nginx forwards a request of ``address`` (it appends the peer to X-Forwarded-For)."""
    return {
        "headers": {"X-Forwarded-For": address},
        "environ_base": {"REMOTE_ADDR": "127.0.0.1"},
    }


def test_create_limit_per_address_holds_across_instances(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    one, two = limited_app(redis_server), limited_app(redis_server)
    a, b = one.test_client(), two.test_client()
    client = from_address("198.51.100.7")
    assert a.post(CREATE, json=BODY, **client).status_code == 201
    assert b.post(CREATE, json=BODY, **client).status_code == 201
    assert a.post(CREATE, json=BODY, **client).status_code == 201
    games = redis_client.dbsize()
    r = b.post(CREATE, json=BODY, **client)  # the 4th, on the other instance
    assert r.status_code == 429
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json["code"] == "rate_limited"
    assert 0 < int(r.headers["Retry-After"]) <= 60
    assert redis_client.dbsize() == games, "a refused create stores nothing"
    # Another address has its own allowance.
    assert a.post(CREATE, json=BODY, **from_address("198.51.100.8")).status_code == 201
    # The counter expires with its window and names no address.
    (key,) = redis_client.scan_iter(match=K.address_rate_key("create", "198.51.100.7"))
    assert 0 < redis_client.ttl(key) <= 60
    assert b"198.51.100" not in b"".join(redis_client.scan_iter(match="*"))


def test_the_address_is_the_one_the_trusted_proxy_saw(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    client = limited_app(redis_server).test_client()
    for _ in range(3):
        assert client.post(CREATE, json=BODY, **from_address("203.0.113.9")).status_code == 201
    # A client cannot escape by claiming other addresses in front of the one nginx appended.
    spoofed = from_address("192.0.2.1, 203.0.113.9")
    assert client.post(CREATE, json=BODY, **spoofed).status_code == 429


def test_limits_are_off_unless_set(redis_server: RedisServer, redis_client: redis.Redis) -> None:
    client = create_app({"REDIS_URL": redis_server.url}).test_client()
    for _ in range(5):
        assert client.post(CREATE, json=BODY).status_code == 201
    assert not list(redis_client.scan_iter(match="mt:{rate:*"))


def test_the_start_line_says_which_limits_are_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RATE_LIMIT_PER_MINUTE", raising=False)
    monkeypatch.delenv("RATE_LIMIT_CREATE_PER_MINUTE", raising=False)
    assert describe(load_settings()).startswith("rate limits: off (set RATE_LIMIT_PER_MINUTE")
    on = load_settings({"RATE_LIMIT_PER_MINUTE": 1200, "RATE_LIMIT_CREATE_PER_MINUTE": 60})
    assert describe(on) == ("rate limits: 1200/min per token per game, 60/min create per address")


def test_create_and_join_answers_say_where_their_limit_stands(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    """Every counted answer carries RateLimit-Policy and RateLimit; the 429 adds Retry-After
    and the policy in its problem body."""
    client = limited_app(redis_server, RATE_LIMIT_JOIN_PER_MINUTE=1).test_client()
    address = from_address("198.51.100.20")
    answers = [client.post(CREATE, json=BODY, **address) for _ in range(4)]
    assert [r.status_code for r in answers] == [201, 201, 201, 429]
    for left, r in zip([2, 1, 0, 0], answers, strict=True):
        assert r.headers["RateLimit-Policy"] == '"create";q=3;w=60'
        remaining, reset = re.fullmatch(
            r'"create";r=(\d+);t=(\d+)', r.headers["RateLimit"]
        ).groups()  # type: ignore[union-attr]
        assert int(remaining) == left and 0 < int(reset) <= 60
    refused = answers[-1]
    assert refused.json["ratelimit"] == {  # type: ignore[index]
        "policy": {"name": "create", "quota": 3, "window": 60},
        "retry_after": int(refused.headers["Retry-After"]),
    }
    game = (
        create_app({"REDIS_URL": redis_server.url})
        .test_client()
        .post(CREATE, json={"players": ["ann", {"open": True}, {"open": True}]})
        .json
    )
    invites = [seat["invite"] for seat in game["seats"][1:]]  # type: ignore[index]
    join = f"{CREATE}/{game['game_id']}/join"  # type: ignore[index]
    joined = client.post(join, json={"invite": invites[0], "name": "bo"}, **address)
    assert joined.status_code == 201 and joined.headers["RateLimit-Policy"] == '"join";q=1;w=60'
    again = client.post(join, json={"invite": invites[1], "name": "cy"}, **address)
    assert again.status_code == 429
    assert again.json["ratelimit"]["policy"]["name"] == "join"  # type: ignore[index]
    assert client.get(CREATE + "/" + game["game_id"]).headers.get("RateLimit") is None  # type: ignore[index]


def test_a_player_is_a_creation_counted_per_address(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    """A player never expires: creating players costs an address its allowance of creations,
    as a game does."""
    client = limited_app(redis_server).test_client()
    address = from_address("198.51.100.30")
    made = [client.post("/api/v1/players", json={"name": "ann"}, **address) for _ in range(2)]
    assert [r.status_code for r in made] == [201, 201]
    assert made[0].headers["RateLimit-Policy"] == '"create";q=3;w=60'
    assert client.post(CREATE, json=BODY, **address).status_code == 201  # the 3rd creation
    players = len(list(redis_client.scan_iter(match="mt:{player:*")))
    refused = client.post("/api/v1/players", json={"name": "bo"}, **address)
    assert (refused.status_code, refused.json["code"]) == (429, "rate_limited")  # type: ignore[index]
    assert len(list(redis_client.scan_iter(match="mt:{player:*"))) == players


def test_samples_count_against_their_address_whatever_the_token(
    redis_server: RedisServer,
) -> None:
    """A seat token costs nothing to make (a game gives fourteen), and 100 samples of a big
    table are seconds of CPU: the per-token limit alone let one address have hundreds of
    CPU-seconds worked a minute through fresh tokens. Samples also count, n each, against the
    address; another address has its own budget."""
    client = limited_app(redis_server, RATE_LIMIT_SAMPLES_PER_MINUTE=150).test_client()
    here, there = "198.51.100.30", "198.51.100.31"

    def seat_of_a_dealt_game() -> tuple[str, str]:
        made = client.post(CREATE, json=BODY, **from_address(there)).json
        assert made is not None
        url = f"{CREATE}/{made['game_id']}"
        host = {"Authorization": f"Bearer {made['host_token']}"}
        assert client.post(url + "/deal", headers=host).status_code == 200
        return url + "/samples", made["seats"][0]["token"]

    def samples(seat: tuple[str, str], address: str) -> TestResponse:
        url, token = seat
        headers = {"X-Forwarded-For": address, "Authorization": f"Bearer {token}"}
        return client.get(
            url + "?n=100", headers=headers, environ_base={"REMOTE_ADDR": "127.0.0.1"}
        )

    first, second = seat_of_a_dealt_game(), seat_of_a_dealt_game()
    answered = samples(first, here)
    assert answered.status_code == 200
    assert answered.headers["RateLimit-Policy"] == '"samples";q=150;w=60'
    refused = samples(second, here)  # another game's token, the same address
    assert refused.status_code == 429 and refused.json is not None
    assert refused.json["ratelimit"]["policy"]["name"] == "samples"
    assert "150 samples asked for a minute" in refused.json["detail"]
    assert "Retry-After" in refused.headers
    assert samples(second, there).status_code == 200


def test_an_ipv6_client_is_counted_by_its_64(
    redis_server: RedisServer, redis_client: redis.Redis
) -> None:
    """A host given a /64 may take any address in it: every address of one /64 shares one
    allowance, another /64 has its own, and an IPv4-mapped address is its IPv4 client."""
    client = limited_app(redis_server).test_client()
    rotated = [f"2001:db8:aa:bb::{n:x}" for n in range(1, 4)] + ["2001:db8:aa:bb:ffff::9"]
    made = [client.post(CREATE, json=BODY, **from_address(a)).status_code for a in rotated]
    assert made == [201, 201, 201, 429]
    assert client.post(CREATE, json=BODY, **from_address("2001:db8:aa:bc::1")).status_code == 201
    for _ in range(3):
        assert client.post(CREATE, json=BODY, **from_address("198.51.100.40")).status_code == 201
    mapped = client.post(CREATE, json=BODY, **from_address("::ffff:198.51.100.40"))
    assert mapped.status_code == 429
    assert redis_client.exists(K.address_rate_key("create", "2001:db8:aa:bb::/64"))


def test_an_ipv6_address_carrying_an_ipv4_one_is_counted_as_that_ipv4_client(
    redis_server: RedisServer,
) -> None:
    """A 6to4 site holds the whole 2002:<its IPv4>::/48, 65,536 /64s, on one IPv4 address; a
    Teredo address's /64 is its relay server's, shared by every client of that server, and
    carries the client's own (NAT) IPv4 address further on. Either is counted as the IPv4
    address it carries, as an IPv4-mapped one is."""
    client = limited_app(redis_server).test_client()

    def made(address: str) -> int:
        return client.post(CREATE, json=BODY, **from_address(address)).status_code

    # 203.0.113.50 is cb00:7132: three subnets of its 6to4 /48, then the address itself.
    sixtofour = [f"2002:cb00:7132:{n:x}::1" for n in range(1, 4)] + ["203.0.113.50"]
    assert [made(a) for a in sixtofour] == [201, 201, 201, 429]
    # Two clients of one Teredo server (65.54.227.120): 203.0.113.51 and 203.0.113.52, each
    # stored inverted in the last 32 bits. The second keeps its own allowance...
    first, second = "2001:0:4136:e378:8000:63bf:34ff:8ecc", "2001:0:4136:e378:8000:63bf:34ff:8ecb"
    assert [made(first) for _ in range(3)] == [201, 201, 201]
    assert made(second) == 201
    # ...and the first is the IPv4 client it carries.
    assert made("203.0.113.51") == 429


def test_an_ipv6_client_holds_its_open_streams_by_its_64(redis_server: RedisServer) -> None:
    """The open-streams cap (a cap on what is held at once, not a window) keys the same way."""
    app = limited_app(redis_server, STREAMS_PER_ADDRESS=1)
    client = app.test_client()
    game = client.post(CREATE, json=BODY, **from_address("198.51.100.50")).json
    assert game is not None
    url = f"{CREATE}/{game['game_id']}/events"

    def stream(address: str) -> TestResponse:
        headers = {"X-Forwarded-For": address, "Accept": "text/event-stream"}
        environ = {"REMOTE_ADDR": "127.0.0.1"}
        return client.get(url, headers=headers, environ_base=environ, buffered=False)

    held = stream("2001:db8:cc:dd::1")
    try:
        assert held.status_code == 200
        refused = stream("2001:db8:cc:dd::2")
        assert refused.status_code == 429
        assert refused.json is not None and refused.json["ratelimit"]["policy"]["name"] == "streams"
        other = stream("2001:db8:cc:de::1")
        assert other.status_code == 200
        other.close()
    finally:
        held.close()
