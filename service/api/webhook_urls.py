"""Which URLs a webhook may call: ``https`` to public addresses; ``http``, or a private,
loopback or link-local address, only for a host the operator allows (``WEBHOOK_ALLOW_HOSTS``):
a bare host allows its every port, ``host:port`` that port only (a receiver's, not the Redis
or the database beside it on the same host).

Checked at registration and again before each delivery, since a name may resolve elsewhere
later (DNS rebinding). A delivery then connects by name, so a resolver that changes its answer
between the check and the connection is not covered: an operator who fears that puts an
egress proxy in front of the worker.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

#: The longest URL a webhook may have.
MAX_URL = 2000
DEFAULT_PORTS = {"http": 80, "https": 443}


def allowed_hosts(setting: str) -> frozenset[str]:
    return frozenset(h.strip().lower() for h in setting.split(",") if h.strip())


def refusal(url: str, allow: frozenset[str]) -> str | None:
    """Why ``url`` may not be a webhook's, or None when it may."""
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
    port = port or DEFAULT_PORTS[parts.scheme]
    if host in allow or _with_port(host, port) in allow:
        return None
    if parts.scheme == "http":
        return f"Only https URLs, or http to a host the operator allows ({host!r} is not)."
    return _private(host, port)


def _with_port(host: str, port: int) -> str:
    """``host:port`` as an operator writes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _private(host: str, port: int) -> str | None:
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return f"{host!r} does not resolve."
    for *_, address in found:
        ip = ipaddress.ip_address(address[0])
        if not ip.is_global:
            return f"{host!r} resolves to {ip}, an address that is not public."
    return None
