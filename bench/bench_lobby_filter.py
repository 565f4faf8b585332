"""``make bench-lobby-filter``: what one filtered lobby listing costs in a crowded lobby.

Makes one public 2-player table, then OTHERS public 3-player tables after it (all through the
API, on a private Redis, in-process), and lists ``?players=2``: prints the Redis commands one
listing issues (the server's ``INFO commandstats``, reset before it), the tables it lists, and
the median and p99 wall time of LISTINGS such listings. Numbers are printed, never asserted.

Environment: BENCH_LOBBY_OTHERS (default 4000), BENCH_LOBBY_LISTINGS (default 50).
"""

from __future__ import annotations

import os
import statistics
import time

import redis
from flask.testing import FlaskClient

from devstack.redis_server import RedisServer
from service.api.app import create_app

OTHERS = int(os.environ.get("BENCH_LOBBY_OTHERS", "4000"))
LISTINGS = int(os.environ.get("BENCH_LOBBY_LISTINGS", "50"))
#: Commands of the counting itself, not of the listing.
NOT_COUNTED = {"info", "config|resetstat", "config"}


def make_tables(client: FlaskClient) -> str:
    """The 2-player table, made first, behind OTHERS newer 3-player ones; its id."""
    body = {"players": ["ann", {"open": True}], "public": True}
    fitting = client.post("/api/v1/games", json=body).json
    assert fitting is not None
    body = {"players": ["bo", {"open": True}, {"open": True}], "public": True}
    for _ in range(OTHERS):
        assert client.post("/api/v1/games", json=body).status_code == 201
    return str(fitting["game_id"])


def commands(admin: redis.Redis, client: FlaskClient) -> tuple[int, int]:
    """The Redis commands one filtered listing issues, and the tables it lists."""
    admin.config_resetstat()
    listed = client.get("/api/v1/lobby?players=2").json
    stats = admin.info("commandstats")
    calls = sum(
        int(value["calls"])
        for name, value in stats.items()
        if name.removeprefix("cmdstat_") not in NOT_COUNTED
    )
    assert listed is not None
    return calls, len(listed["tables"])


def main() -> None:
    with RedisServer() as server:
        app = create_app({"REDIS_URL": server.url, "LOG_LEVEL": "warning", "REQUEST_LOG": False})
        client, admin = app.test_client(), redis.Redis.from_url(server.url)
        fitting = make_tables(client)
        client.get("/api/v1/lobby?players=2")  # the listing's first look (scripts loaded)
        calls, listed = commands(admin, client)
        times = []
        for _ in range(LISTINGS):
            start = time.perf_counter()
            found = client.get("/api/v1/lobby?players=2").json
            times.append(time.perf_counter() - start)
        assert found is not None
        shown = fitting in [t["game_id"] for t in found["tables"]]
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"?players=2 with 1 fitting table behind {OTHERS} newer 3-player tables:")
    print(f"  {calls} Redis commands per listing; {listed} listed (the fitting table: {shown})")
    print(
        f"  wall time per listing over {LISTINGS}: median {statistics.median(times) * 1000:.2f} ms,"
        f" p99 {p99 * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
