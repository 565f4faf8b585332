"""Abuse limits, counted in Redis so they hold across every instance and worker.

Two kinds, both fixed 60-second windows, both answered with ``429 rate_limited`` and
``Retry-After`` (seconds until the window ends):

- per token per game (``RATE_LIMIT_PER_MINUTE``): counted in the same round trip that loads the
  game (:meth:`GameStore.load`);
- per client address (:class:`PerAddress`): the address is ``request.remote_addr``, which is the
  real client behind ``TRUSTED_PROXIES`` proxies (ProxyFix). A view opts in with one line,
  ``limit_address(PerAddress.CREATE)``; a new kind is one enum member plus its setting.

Every limit is 0 (off) unless set; the deploy files set them.
"""

from __future__ import annotations

from enum import StrEnum

from flask import request

from service.store import keys

from .config import Settings, settings
from .problems import ApiError
from .store_access import store

WINDOW_SECONDS = 60


class PerAddress(StrEnum):
    """Requests limited per client address; the setting is ``RATE_LIMIT_<NAME>_PER_MINUTE``."""

    CREATE = "create"
    JOIN = "join"

    @property
    def setting(self) -> str:
        return f"RATE_LIMIT_{self.name}_PER_MINUTE"

    def limit(self, values: Settings) -> int:
        """Its limit in ``values`` (the Settings field named after :attr:`setting`)."""
        return int(getattr(values, self.setting.lower()))


def rate_limited(detail: str, retry_after: int) -> ApiError:
    return ApiError(429, "rate_limited", detail, headers={"Retry-After": str(retry_after)})


def limit_address(kind: PerAddress) -> None:
    """Count this request against the caller's address; raise 429 past the limit."""
    limit = kind.limit(settings())
    if not limit:
        return
    address = request.remote_addr or "unknown"
    count, reset = store().count_request(keys.address_rate_key(kind, address), WINDOW_SECONDS)
    if count > limit:
        raise rate_limited(f"More than {limit} {kind} requests a minute from this address.", reset)


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
