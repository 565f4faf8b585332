"""Which URLs a webhook may call: ``https`` to public addresses; ``http``, or a private,
loopback or link-local address, only for a host the operator allows (``WEBHOOK_ALLOW_HOSTS``):
a bare host allows its every port, ``host:port`` that port only (a receiver's, not the Redis
or the database beside it on the same host).

Checked at registration and again before each delivery, since a name may resolve elsewhere
later (DNS rebinding). A delivery connects to an address that check resolved and approved
(:func:`target`), never to a second resolution of the name, which a resolver could answer
with a private address the check never saw.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from requests.utils import requote_uri

#: The longest URL a webhook may have.
MAX_URL = 2000
DEFAULT_PORTS = {"http": 80, "https": 443}
#: Threads that look names up for deliveries (and, in the API, for registrations): twice the
#: worker's sending threads. A delivery waits for its lookup only until its attempt's deadline;
#: a lookup the resolver is slow to end goes on holding one of these (until the resolver's own
#: timeout) while the next attempts look their names up beside it, and when all are held,
#: lookups wait their turn rather than start ever more threads. One name is looked up once at a
#: time: an attempt whose name is being looked up already waits for that lookup, so a name
#: whose lookup never ends holds one thread, however often its deliveries are tried.
LOOKUP_THREADS = 16
#: Lookups one owner (the player whose webhook it is) may have started and not ended. Names
#: cost nothing to make, so a player could otherwise hold every lookup thread with names its
#: own name server never answers, and no other player's name would be looked up in time.
LOOKUPS_PER_OWNER = 2
#: A registration waits for its URL's name to be looked up until this long after that lookup
#: started, whichever registration (or delivery) started it: its request holds a server thread
#: meanwhile, and a name server may never answer. A registration joining a lookup past it is
#: answered at once, so a name that never resolves holds no thread however often it is sent.
REGISTRATION_LOOKUP_SECONDS = 5.0
_LOOKUPS = ThreadPoolExecutor(LOOKUP_THREADS, thread_name_prefix="webhook-lookup")


class LookupsBusy(Exception):
    """The owner has LOOKUPS_PER_OWNER lookups not ended yet: no other is started for it."""


@dataclass
class _Lookup:
    """A lookup in the pool, the owner it counts against, how many attempts wait for it, and
    until when (``time.monotonic()``) registrations wait for it."""

    future: Future[list[tuple[int, Any]] | str]
    owner: str
    registrations_until: float
    waiting: int = 0


#: The lookups not ended yet, by name and port, and how many each owner started. Reentrant: a
#: future's callbacks run at once in the thread that cancels it, or adds one to it once it is
#: done, with the lock held.
_RUNNING: dict[tuple[str, int], _Lookup] = {}
_OWNED: Counter[str] = Counter()
_RUNNING_LOCK = threading.RLock()


@dataclass(frozen=True)
class Target:
    """Where one delivery goes: the URL's parts, and the addresses its host resolved to when it
    was checked (each one allowed), in the resolver's order."""

    scheme: str
    host: str
    port: int
    path: str  # with the query, as the request line carries it
    addresses: tuple[tuple[int, Any], ...]  # (address family, socket address)


def allowed_hosts(setting: str) -> frozenset[str]:
    return frozenset(h.strip().lower() for h in setting.split(",") if h.strip())


def refusal(url: str, allow: frozenset[str], owner: str) -> str | None:
    """Why ``url`` may not be a webhook's, or None when it may. A host the operator allows is
    not resolved here (its name may not resolve yet where the API runs). The lookup counts
    against ``owner`` (the registering player) as a delivery's does, and is waited for until
    REGISTRATION_LOOKUP_SECONDS after it started at most: TimeoutError after them, LookupsBusy
    if ``owner``'s lookups not ended are as many as one may have."""
    parsed = _parse(url)
    if isinstance(parsed, str):
        return parsed
    parts, host, port = parsed
    if _allowed(host, port, allow):
        return None
    if parts.scheme == "http":
        return _plain_http(host)
    found = _resolve_by(host, port, None, owner)
    return found if isinstance(found, str) else _private(host, found)


def target(url: str, allow: frozenset[str], deadline: float, owner: str) -> Target | str:
    """Where a delivery to ``url`` connects now, checked as :func:`refusal` checks it; the
    refusal instead when the URL, or what its host resolves to now, is not allowed. The name is
    looked up once, and the addresses checked are the ones connected to. Raises TimeoutError
    when the lookup has not ended by ``deadline`` (``time.monotonic()``): a slow resolver fails
    the attempt, it does not refuse the URL; LookupsBusy when ``owner`` (the webhook's player)
    has too many lookups not ended to start one."""
    parsed = _parse(url)
    if isinstance(parsed, str):
        return parsed
    parts, host, port = parsed
    allowed = _allowed(host, port, allow)
    if parts.scheme == "http" and not allowed:
        return _plain_http(host)
    found = _resolve_by(host, port, deadline, owner)
    if isinstance(found, str):
        return found
    if not allowed and (why := _private(host, found)) is not None:
        return why
    # Quoted as requests quoted it: the policy takes any path, and http.client sends ASCII with
    # no space or control character only (a letter outside ASCII raised UnicodeEncodeError).
    path = requote_uri((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
    addresses = tuple((family, address) for family, address in found)
    return Target(parts.scheme, host, port, path, addresses)


def _parse(url: str) -> tuple[SplitResult, str, int] | str:
    if len(url) > MAX_URL:
        return f"A webhook URL has at most {MAX_URL} characters."
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "That is not a URL."
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("https", "http") or not host:
        return "A webhook URL is https://<host>/..."
    if parts.username is not None or parts.password is not None:
        return "A webhook URL carries no credentials: use the signature to trust a delivery."
    return parts, host, port or DEFAULT_PORTS[parts.scheme]


def _allowed(host: str, port: int, allow: frozenset[str]) -> bool:
    return host in allow or _with_port(host, port) in allow


def _with_port(host: str, port: int) -> str:
    """``host:port`` as an operator writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _plain_http(host: str) -> str:
    return f"Only https URLs, or http to a host the operator allows ({host!r} is not)."


def _resolve_by(
    host: str, port: int, deadline: float | None, owner: str
) -> list[tuple[int, Any]] | str:
    """:func:`_resolve`, waited for until ``deadline`` at most, or (None, a registration's)
    until the lookup's ``registrations_until`` (TimeoutError after it); the lookup of the same
    name and port not ended yet, if there is one, rather than another, else one counted against
    ``owner`` (LookupsBusy if it has too many)."""
    key = (host, port)
    with _RUNNING_LOCK:
        lookup = _RUNNING.get(key)
        if lookup is None:
            if _OWNED[owner] >= LOOKUPS_PER_OWNER:
                raise LookupsBusy(
                    f"{LOOKUPS_PER_OWNER} earlier lookups of this player have not ended"
                )
            future = _LOOKUPS.submit(_resolve, host, port)  # counted once the pool took it
            _OWNED[owner] += 1
            until = time.monotonic() + REGISTRATION_LOOKUP_SECONDS
            lookup = _RUNNING[key] = _Lookup(future, owner, until)
            lookup.future.add_done_callback(lambda _: _forget(key, lookup))
        lookup.waiting += 1
    until = lookup.registrations_until if deadline is None else deadline
    try:
        return lookup.future.result(timeout=max(0.0, until - time.monotonic()))
    except LookupTimeout:
        raise TimeoutError(f"looking {host!r} up took too long") from None
    finally:
        with _RUNNING_LOCK:
            lookup.waiting -= 1
            if not lookup.waiting:
                lookup.future.cancel()  # one still queued behind slow lookups never starts


def _forget(key: tuple[str, int], lookup: _Lookup) -> None:
    """The lookup ended (or was cancelled): the next attempt at its name starts its own, and
    its owner may start another."""
    with _RUNNING_LOCK:
        if _RUNNING.get(key) is lookup:
            del _RUNNING[key]
        _OWNED[lookup.owner] -= 1
        if not _OWNED[lookup.owner]:
            del _OWNED[lookup.owner]


def _resolve(host: str, port: int) -> list[tuple[int, Any]] | str:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return f"{host!r} does not resolve."
    return [(family, address) for family, _, _, _, address in found]


#: IPv6 prefixes whose last 32 bits are an IPv4 address the network may reach through them:
#: NAT64's well-known prefix (RFC 6052; an IPv6-only cluster's NAT64 gateway forwards to its
#: VPC's private addresses), SIIT's IPv4-translated ::ffff:0:0:0/96 (RFC 7915, a stateless
#: translator forwards it likewise) and the deprecated IPv4-compatible ::/96.
_EMBEDS_IPV4 = tuple(
    ipaddress.IPv6Network(prefix) for prefix in ("64:ff9b::/96", "::ffff:0:0:0/96", "::/96")
)
#: NAT64's local-use prefix (RFC 8215): a network takes from it a NAT64 prefix of any RFC 6052
#: length, /48 to /96, and the IPv4 address sits at a place that length sets, so no reading of
#: the address alone can tell it. None of it is taken for public.
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether a connection to ``ip`` reaches the public internet only. ``is_global`` alone
    takes an IPv6 address that carries a private IPv4 one (6to4, NAT64) for public, a
    multicast one and a site-local one too."""
    if not ip.is_global or ip.is_multicast:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        # Site-local (fec0::/10) is deprecated, not gone: a network may still route it inside.
        if ip in _LOCAL_NAT64 or ip.is_site_local:
            return False
        inner = ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is None and any(ip in prefix for prefix in _EMBEDS_IPV4):
            inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if inner is not None:
            return _public(inner)
    return True


def _private(host: str, found: list[tuple[int, Any]]) -> str | None:
    for _, address in found:
        ip = ipaddress.ip_address(address[0])
        if not _public(ip):
            return f"{host!r} resolves to {ip}, an address that is not public."
    return None
