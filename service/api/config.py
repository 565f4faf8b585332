"""Settings: defaults, overridden by the environment, overridden by ``create_app(config)``.

They are read once, into one typed :class:`Settings` value kept in ``app.config["SETTINGS"]``;
nothing else in the service reads the environment for them. A bad value is refused with a
:class:`SettingError` naming the setting. ``deploy/gunicorn.conf.py`` reads them in the
gunicorn master, before any worker starts, so this module imports neither Flask nor Redis
(they would be loaded before gevent patches the streams pool's workers).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from service.store import GameStore

SETTINGS_KEY = "SETTINGS"

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "REDIS_CLUSTER": False,
    "GAME_TTL_SECONDS": 7 * 24 * 3600,
    # A game never dealt expires this long after its creation (capped by GAME_TTL_SECONDS):
    # anonymous creations that never play must not hold memory for days. A seek table whose
    # open seats are to go to bots (within an hour, then dealt) lives GAME_TTL_SECONDS.
    "UNDEALT_TTL_SECONDS": 3600,
    "IDEMPOTENCY_TTL_SECONDS": 24 * 3600,
    "MAX_BODY_BYTES": 64 * 1024,
    # Requests per token per game per minute; beyond it 429. 0 turns the limit off.
    "RATE_LIMIT_PER_MINUTE": 0,
    # How many proxies in front of us set X-Forwarded-For/Proto/Host; 0 trusts none, so a
    # directly exposed app cannot be fooled about the client's address.
    "TRUSTED_PROXIES": 0,
    # The per-request JSON log line is an info record: "warning" (gunicorn's level, shared)
    # silences it, as does REQUEST_LOG=0.
    "LOG_LEVEL": "info",
    "REQUEST_LOG": True,
    # Creations (games and players) per client address per minute (service/api/limits.py). 0
    # turns it off.
    "RATE_LIMIT_CREATE_PER_MINUTE": 0,
    # Redis client limits per process (service/store/connection.py says why these values).
    "REDIS_SOCKET_TIMEOUT_MS": 500,
    "REDIS_CONNECT_TIMEOUT_MS": 250,
    "REDIS_POOL_SIZE": 16,
    "REDIS_POOL_TIMEOUT_MS": 250,
    # Open the whole pool when the process starts: the Redis client count is then a constant
    # of the deployment (processes x pool size), so a count that grows means a leak.
    "REDIS_POOL_PREFILL": False,
    # CLIENT SETNAME of every connection (CLIENT LIST tells the pools apart).
    "REDIS_CLIENT_NAME": "mexican-train",
    # New games are refused (503 storage_full) once a Redis master uses this % of its
    # maxmemory, keeping the rest for games in play; 0: only when Redis itself refuses.
    "STORAGE_FULL_PERCENT": 90,
    "REDIS_MEMORY_SAMPLE_SECONDS": 5,
    # The shortest turn clock a game may ask for (turn_seconds); tests lower it.
    "MIN_TURN_SECONDS": 5,
    # Joins through invites per client address per minute. 0 turns it off.
    "RATE_LIMIT_JOIN_PER_MINUTE": 0,
    # Samples (GET .../samples, n each) dealt per client address per minute: a sample of a big
    # table costs up to ~20 ms of CPU, and seat tokens are free to make, so the per-token limit
    # alone let one address have hundreds of CPU-seconds worked a minute. 0 turns it off.
    "RATE_LIMIT_SAMPLES_PER_MINUTE": 0,
    # Open streams (SSE, NDJSON) one client address may hold across every instance; 0: no cap.
    "STREAMS_PER_ADDRESS": 100,
    # A stream ends after this long; clients resume from their last entry (Last-Event-ID).
    "STREAM_MAX_SECONDS": 1800,
    # A finished game's streams stay open this long after its last entry, for a rematch entry;
    # 0 ends them with the game's last entry.
    "REMATCH_SECONDS": 60,
    # A rematch's person seat that its player has not claimed this long after the rematch was
    # made becomes an open seat.
    "REMATCH_CLAIM_SECONDS": 60,
    # A seat is present while it has an open stream or made a request within this long.
    "PRESENCE_SECONDS": 30,
    # Webhook URLs may be http, or resolve to private or loopback addresses, only for these
    # hosts (comma-separated names or addresses; e.g. a receiver in the same cluster).
    "WEBHOOK_ALLOW_HOSTS": "",
    # Webhook registrations one client address may have waiting for their URL's check (a name
    # lookup, up to 5 s) at once across every instance; each holds a server thread meanwhile.
    # 0: no cap.
    "WEBHOOK_LOOKUPS_PER_ADDRESS": 4,
    # A failed delivery is retried after this long, then 6, 24, 60, 180 and 360 times as long
    # (5 s, 30 s, 2 min, 5 min, 15 min, 30 min by default), until an hour after its first try.
    "WEBHOOK_RETRY_MS": 5000,
    "WEBHOOK_GIVE_UP_SECONDS": 3600,
    # A write a stored change owes to keys outside its game (the worker's queue, webhooks, the
    # lobby), which Redis did not take, is given up this long after it is first owed.
    "OWED_GIVE_UP_SECONDS": 3600,
}
MAY_BE_ZERO = {
    "RATE_LIMIT_PER_MINUTE",
    "RATE_LIMIT_CREATE_PER_MINUTE",
    "RATE_LIMIT_JOIN_PER_MINUTE",
    "RATE_LIMIT_SAMPLES_PER_MINUTE",
    "TRUSTED_PROXIES",
    "STORAGE_FULL_PERCENT",
    "STREAMS_PER_ADDRESS",
    "REMATCH_SECONDS",
    "WEBHOOK_LOOKUPS_PER_ADDRESS",
}
#: Settings with an upper bound.
AT_MOST = {"STORAGE_FULL_PERCENT": 100}
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


@dataclass(frozen=True)
class Settings:
    redis_url: str
    redis_cluster: bool
    game_ttl_seconds: int
    undealt_ttl_seconds: int
    idempotency_ttl_seconds: int
    max_body_bytes: int
    rate_limit_per_minute: int
    rate_limit_create_per_minute: int
    trusted_proxies: int
    log_level: str
    request_log: bool
    redis_socket_timeout_ms: int
    redis_connect_timeout_ms: int
    redis_pool_size: int
    redis_pool_timeout_ms: int
    redis_pool_prefill: bool
    redis_client_name: str
    storage_full_percent: int
    redis_memory_sample_seconds: int
    min_turn_seconds: int
    rate_limit_join_per_minute: int
    rate_limit_samples_per_minute: int
    streams_per_address: int
    stream_max_seconds: int
    rematch_seconds: int
    rematch_claim_seconds: int
    presence_seconds: int
    webhook_allow_hosts: str
    webhook_lookups_per_address: int
    webhook_retry_ms: int
    webhook_give_up_seconds: int
    owed_give_up_seconds: int
    store: GameStore | None = None  # a ready store (tests); else one is built from redis_url

    @property
    def access_log(self) -> bool:
        """Whether each request writes its JSON log line."""
        return self.request_log and self.log_level in ("debug", "info")


class SettingError(ValueError):
    """A setting's value is refused; the message names the setting and says what it takes."""


def parse_bool(name: str, raw: Any) -> bool:
    """A boolean setting: ``1/true/yes/on`` or ``0/false/no/off`` (any case), or a bool."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int):
        return raw != 0
    word = str(raw).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise SettingError(f"{name} must be true or false (1/0, yes/no, on/off), not {raw!r}")


def parse_int(name: str, raw: Any, minimum: int = 0, maximum: int | None = None) -> int:
    """A whole-number setting within bounds, else a :class:`SettingError` naming it."""
    try:
        value = raw if isinstance(raw, int) else int(str(raw).strip())
    except ValueError:
        raise SettingError(f"{name} must be a whole number, not {raw!r}") from None
    if value < minimum:
        if minimum in (0, 1):
            raise SettingError(f"{name} must be positive, not {raw!r}")
        raise SettingError(f"{name} must be at least {minimum}, not {raw!r}")
    if maximum is not None and value > maximum:
        raise SettingError(f"{name} must be at most {maximum}, not {raw!r}")
    return value


def _coerce(name: str, raw: Any) -> Any:
    default = DEFAULTS[name]
    if isinstance(default, bool):
        return parse_bool(name, raw)
    if isinstance(default, int):
        return parse_int(name, raw, 0 if name in MAY_BE_ZERO else 1, AT_MOST.get(name))
    if name == "LOG_LEVEL":
        level = str(raw).strip().lower()
        if level not in LOG_LEVELS:
            raise SettingError(f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, not {raw!r}")
        return level
    if name == "REDIS_URL":
        check_redis_url(str(raw))
    return str(raw)


#: A password in the query: redis-py takes ``?password=`` as it takes ``user:password@``.
_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&#]*")


def hide_password(url: str) -> str:
    """``url`` as it may be shown (a log line, an error): its password, if any, as ``***``.
    The user part runs to the last ``@``: a password with an unencoded ``/``, ``?`` or ``#`` (a
    generated base64 one) ends the URL's host part early, and a shorter match showed the rest."""
    head, sep, rest = url.partition("://")
    if not sep:
        head, rest = "", url
    user, at, host = rest.rpartition("@")
    if at and ":" in user:
        rest = f"{user.split(':', 1)[0]}:***@{host}"
    return head + sep + _QUERY_PASSWORD.sub(r"\1***", rest)


def check_redis_url(url: str) -> None:
    """Refuse what redis-py would refuse only in each worker as it boots (a port that is no
    number), or take silently as database 0 (``/sessions``). The message shows the URL with its
    password hidden, never a parsed part: with an unencoded ``/`` in the password, the parsed
    port or database is a piece of the password."""
    shown = hide_password(url)
    if not url.startswith(REDIS_SCHEMES):
        raise SettingError(f"REDIS_URL must start with {', '.join(REDIS_SCHEMES)}, not {shown!r}")
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 (parsed on access)
    except ValueError:  # no number, or out of range
        raise SettingError(
            f"REDIS_URL has a bad port (a number from 0 to 65535 expected): {shown!r}"
        ) from None
    database = parts.path.strip("/")
    if parts.scheme != "unix" and database and not database.isdigit():
        raise SettingError(f"REDIS_URL's database must be a whole number: {shown!r}")


def load_settings(config: Mapping[str, Any] | None = None) -> Settings:
    """Defaults, then the environment (non-empty values), then ``config`` (``STORE`` may pass a
    ready GameStore)."""
    values = dict(DEFAULTS)
    for name in DEFAULTS:
        if os.environ.get(name):
            values[name] = _coerce(name, os.environ[name])
    config = dict(config or {})
    for name in DEFAULTS:
        if name in config:
            values[name] = _coerce(name, config[name])
    return Settings(
        **{name.lower(): value for name, value in values.items()}, store=config.get("STORE")
    )


def settings() -> Settings:
    """The running app's settings."""
    from flask import current_app

    value: Settings = current_app.config[SETTINGS_KEY]
    return value
