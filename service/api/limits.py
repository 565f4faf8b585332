"""Abuse limits, counted in Redis so they hold across every instance and worker.

Two kinds, both fixed 60-second windows, both answered with ``429 rate_limited`` and
``Retry-After`` (seconds until the window ends):

- per token per game (``RATE_LIMIT_PER_MINUTE``): counted in the same round trip that loads the
  game (:meth:`GameStore.load`);
- per client address (:class:`PerAddress`): the address is ``request.remote_addr``, which is the
  real client behind ``TRUSTED_PROXIES`` proxies (ProxyFix), as :func:`client_address` keys it
  (an IPv6 client by its /64). A view opts in with one line,
  ``limit_address(PerAddress.CREATE)``; a new kind is one enum member plus its setting.

Every limit is 0 (off) unless set; the deploy files set them.

Every answer to a request counted against a limit says where it stands (the IETF httpapi
ratelimit-headers draft): ``RateLimit-Policy: "token";q=1200;w=60`` (the quota per window) and
``RateLimit: "token";r=1150;t=42`` (what is left and the seconds until the window ends); a 429
adds ``Retry-After`` and a ``ratelimit`` member to its problem body.
"""

from __future__ import annotations

import ipaddress
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import redis
from flask import Response, g, request

from service.store import keys
from service.store.slots import AddressSlots

from .codes import Problem
from .config import Settings, settings
from .problems import ApiError
from .problems import RateLimitPolicy as Policy
from .store_access import store

log = logging.getLogger(__name__)

WINDOW_SECONDS = 60
POLICY_HEADER, STATE_HEADER = "RateLimit-Policy", "RateLimit"
#: An IPv6 client is one /64: a single host is routinely given a whole /64 and may take any
#: address in it, so a limit keyed by the full address would be a limit on nothing.
IPV6_CLIENT_PREFIX = 64


def client_address() -> str:
    """What every per-address limit counts the request against: an IPv4 address as it is, an
    IPv6 one as its /64, one that carries its client's IPv4 address as that address."""
    address = request.remote_addr or "unknown"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address  # not an IP (a Unix socket's peer, a test's name): as it is
    if isinstance(ip, ipaddress.IPv6Address):
        carried = carried_ipv4(ip)
        if carried is not None:
            return str(carried)
        return str(ipaddress.IPv6Network((ip, IPV6_CLIENT_PREFIX), strict=False))
    return str(ip)


def carried_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 client an IPv6 address stands for: IPv4-mapped (the same client through a
    dual-stack socket), 6to4 (its router's address, which holds all of 2002:<it>::/48: by /64
    one IPv4 address would count 65,536 times), Teredo (the client's NAT, whose /64 is the
    relay server's, shared by every client of that server)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    return None if ip.teredo is None else ip.teredo[1]


@dataclass(frozen=True)
class Quota:
    """Where the request stands under one limit: ``limit`` per ``window`` seconds (None: a cap
    on what is open at once), ``remaining`` of it, ``reset`` seconds until the window ends."""

    policy: Policy
    limit: int
    window: int | None
    remaining: int
    reset: int

    def body(self) -> dict[str, Any]:
        """The ``ratelimit`` member of a 429 problem."""
        policy = {"name": self.policy.value, "quota": self.limit, "window": self.window}
        return {"policy": policy, "retry_after": self.reset}


def counted(policy: Policy, limit: int, count: int, reset: int) -> Quota:
    """The quota after ``count`` requests in a window ending in ``reset`` seconds; 429 past it."""
    quota = Quota(policy, limit, WINDOW_SECONDS, max(limit - count, 0), max(reset, 0))
    g.ratelimits = [*g.get("ratelimits", ()), quota]
    return quota


def write_headers(response: Response) -> None:
    """``RateLimit-Policy`` and ``RateLimit`` for each windowed limit the request was counted
    against (the after-request hook calls it for every answer)."""
    quotas = [quota for quota in g.get("ratelimits", ()) if quota.window is not None]
    if not quotas:
        return
    response.headers[POLICY_HEADER] = ", ".join(
        f'"{q.policy}";q={q.limit};w={q.window}' for q in quotas
    )
    response.headers[STATE_HEADER] = ", ".join(
        f'"{q.policy}";r={q.remaining};t={q.reset}' for q in quotas
    )


class PerAddress(StrEnum):
    """Requests limited per client address; the setting is ``RATE_LIMIT_<NAME>_PER_MINUTE``."""

    CREATE = "create"
    JOIN = "join"
    SAMPLES = "samples"  # counted by the samples asked for (n a request), not by requests

    @property
    def unit(self) -> str:
        """What its limit counts, as the 429's detail names it."""
        return "samples asked for" if self is PerAddress.SAMPLES else f"{self.value} requests"

    @property
    def policy(self) -> Policy:
        return Policy(self.value)

    @property
    def setting(self) -> str:
        return f"RATE_LIMIT_{self.name}_PER_MINUTE"

    def limit(self, values: Settings) -> int:
        """Its limit in ``values`` (the Settings field named after :attr:`setting`)."""
        return int(getattr(values, self.setting.lower()))


def rate_limited(detail: str, quota: Quota) -> ApiError:
    return ApiError(
        Problem.RATE_LIMITED,
        detail,
        headers={"Retry-After": str(quota.reset)},
        extra={"ratelimit": quota.body()},
    )


def limit_address(kind: PerAddress, cost: int = 1) -> None:
    """Count this request (as ``cost`` units) against the caller's address; raise 429 past the
    limit."""
    limit = kind.limit(settings())
    if not limit:
        return
    key = keys.address_rate_key(kind, client_address())
    count, reset = store().count_request(key, WINDOW_SECONDS, cost)
    quota = counted(kind.policy, limit, count, reset)
    if count > limit:
        detail = f"More than {limit} {kind.unit} a minute from this address."
        raise rate_limited(detail, quota)


@dataclass(frozen=True)
class AddressCap:
    """A cap on what one client address holds at once: ``cap`` (0: none) of ``what``, kept as
    ``policy`` in the 429; a slot never given back (its process died) is let go
    ``hold_seconds`` after it was taken; a client refused tries again after ``retry_after``."""

    policy: Policy
    what: str
    cap: int
    hold_seconds: int
    retry_after: int


def take_address_slot(slots: AddressSlots, limit: AddressCap) -> Callable[[], None]:
    """Take one of the caller's address's ``limit.cap`` ``slots``, over every instance; 429
    when the address holds them all. Returns what gives the slot back; one never given
    back expires (see :class:`AddressCap`)."""
    address, cap = client_address(), limit.cap
    if not cap:
        return lambda: None
    slot = uuid.uuid4().hex
    if not slots.take(address, slot, cap, limit.hold_seconds * 1000):
        full = Quota(limit.policy, cap, None, 0, limit.retry_after)
        raise rate_limited(f"This address holds {cap} {limit.what} already.", full)

    def release() -> None:
        # Called when what held it ends, which may be while Redis is away (an outage, then the
        # instance stopping): the slot then expires by itself (its score is when it was taken),
        # and the end must not raise out of, say, the server's close of a stream.
        try:
            slots.release(address, slot)
        except redis.RedisError as err:
            log.info("%s slot %s not given back: %s", limit.policy, slot, err)

    return release


def describe(values: Settings) -> str:
    """One line for the log at start: which limits are on."""
    on = [
        f"{kind.limit(values)}/min {kind} per address" for kind in PerAddress if kind.limit(values)
    ]
    if values.rate_limit_per_minute:
        on.insert(0, f"{values.rate_limit_per_minute}/min per token per game")
    names = ", ".join(["RATE_LIMIT_PER_MINUTE", *(kind.setting for kind in PerAddress)])
    if not on:
        return f"rate limits: off (set {names} to turn them on; deploy/ sets them)"
    return "rate limits: " + ", ".join(on)
