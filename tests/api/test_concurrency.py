"""Racing requests through two gunicorn instances on one Redis: exactly one applies."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer


@pytest.fixture(scope="module")
def two_instances(redis_server: RedisServer) -> Iterator[list[str]]:
    with (
        start_gunicorn(redis_server.url, workers=2) as a,
        start_gunicorn(redis_server.url, workers=2) as b,
    ):
        yield [a, b]


def test_twenty_identical_plays(two_instances: list[str]) -> None:
    a, _ = two_instances
    created = requests.post(
        a + "/api/v1/games", json={"players": ["ann", "bo", "cy"], "seed": 99}, timeout=10
    ).json()
    gid, host = created["game_id"], created["host_token"]
    dealt = requests.post(
        f"{a}/api/v1/games/{gid}/deal", headers={"Authorization": f"Bearer {host}"}, timeout=10
    ).json()
    seat, version = dealt["turn"], dealt["version"]
    auth = {"Authorization": f"Bearer {created['seats'][seat]['token']}"}
    move = requests.get(f"{a}/api/v1/games/{gid}/legal-moves", headers=auth, timeout=10).json()[
        "moves"
    ][0]

    n = 20
    barrier = threading.Barrier(n)
    results: list[tuple[int, str | None]] = [(0, None)] * n

    def fire(i: int) -> None:
        base = two_instances[i % 2]
        headers = dict(auth)
        if i % 4 < 2:  # half of them send If-Match
            headers["If-Match"] = f'"{version}"'
        with requests.Session() as s:
            barrier.wait()
            r = s.post(f"{base}/api/v1/games/{gid}/moves", json=move, headers=headers, timeout=20)
        code = r.json().get("code") if r.status_code != 200 else None
        results[i] = (r.status_code, code)

    threads = [threading.Thread(target=fire, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    statuses = [s for s, _ in results]
    assert statuses.count(200) == 1, results
    assert all(s in (409, 412) for s in statuses if s != 200), results
    final = requests.get(f"{a}/api/v1/games/{gid}", timeout=10).json()
    assert final["version"] == version + 1
