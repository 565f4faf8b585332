"""Live-play fixtures: real gunicorn instances on the session's real redis-server.

Streams and long-polls hold a connection each, so the instances get more threads than the
defaults; turn clocks may be as short as one second (``MIN_TURN_SECONDS``) so clock tests wait
seconds, not minutes.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer

LIVE_ENV = {
    "MIN_TURN_SECONDS": "1",
    "GUNICORN_THREADS": "24",
    "GAME_TTL_SECONDS": "3600",
}


@pytest.fixture(scope="session")
def live(redis_server: RedisServer) -> Iterator[str]:
    """Base URL of one gunicorn instance (2 workers)."""
    with start_gunicorn(redis_server.url, workers=2, env=LIVE_ENV) as base:
        yield base


@pytest.fixture(scope="session")
def live_pair(redis_server: RedisServer, live: str) -> Iterator[tuple[str, str]]:
    """Two gunicorn instances on the same Redis: ``live`` and a second one."""
    with start_gunicorn(redis_server.url, workers=1, env=LIVE_ENV) as other:
        yield live, other
