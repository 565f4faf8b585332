"""Settings: defaults, overridden by the environment, overridden by ``create_app(config)``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

DEFAULTS: dict[str, Any] = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "REDIS_CLUSTER": False,
    "GAME_TTL_SECONDS": 7 * 24 * 3600,
    "IDEMPOTENCY_TTL_SECONDS": 24 * 3600,
    "MAX_BODY_BYTES": 64 * 1024,
    # Requests per token per game per minute; beyond it 429. 0 turns the limit off.
    "RATE_LIMIT_PER_MINUTE": 0,
}
MAY_BE_ZERO = {"RATE_LIMIT_PER_MINUTE"}


def _coerce(name: str, raw: Any) -> Any:
    default = DEFAULTS[name]
    if isinstance(default, bool):
        if isinstance(raw, str):
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        return bool(raw)
    if isinstance(default, int):
        value = int(raw)
        if value < 0 or (value == 0 and name not in MAY_BE_ZERO):
            raise ValueError(f"{name} must be positive, not {raw!r}")
        return value
    return str(raw)


def load_settings(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    settings = dict(DEFAULTS)
    for name in DEFAULTS:
        if os.environ.get(name):
            settings[name] = _coerce(name, os.environ[name])
    for name, value in (config or {}).items():
        settings[name] = _coerce(name, value) if name in DEFAULTS else value
    return settings
