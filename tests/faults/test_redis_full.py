"""Redis out of memory (``maxmemory`` small, ``noeviction``): new games are refused with a 503
``storage_full`` problem while games already created go on as long as Redis allows; a write
Redis refuses changes nothing; the memory gauges show it."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import requests
from mexican_train_client import ApiError, Client, RetryPolicy

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from service.bots.registry import make_bot
from service.tournament.runner import drive_http
from tests.metrics import metric_total

pytestmark = pytest.mark.slow

HEADROOM = 3_000_000  # bytes of maxmemory above Redis with the service connected, no game
# New games stop at half of it: the sample is up to a second old, and the rest is for play.
FULL_PERCENT = 50
PLAYED = 40  # games played on after the refusals (enough to fill the rest)


class OnceClient(Client):
    """No retries: the first refusal ends the game's run; counts the actions applied."""

    def __init__(self, base_url: str) -> None:
        super().__init__(base_url, pool_size=2, retry=RetryPolicy(attempts=1))
        self.applied = 0

    def request(self, method: str, path: str, **kwargs: object) -> dict[str, object]:
        body = super().request(method, path, **kwargs)  # type: ignore[arg-type]
        if method.upper() == "POST" and path.startswith("/api/v1/games/"):
            self.applied += 1
        return body


def create(url: str, players: list[str], seed: int) -> requests.Response:
    body = {"players": players, "seed": seed, "options": {"rounds": 1}}
    return requests.post(url + "/api/v1/games", json=body, timeout=10)


def assert_storage_full(r: requests.Response) -> None:
    assert r.status_code == 503, r.text
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.json()["code"] == "storage_full"
    assert r.headers["Retry-After"] == "5"


def fill_with_games(url: str) -> list[dict[str, object]]:
    """Create games until the service refuses ten in a row (each worker process samples the
    memory on its own): every answer is 201 or storage_full."""
    created: list[dict[str, object]] = []
    refused = 0
    for seed in range(100_000):
        r = create(url, ["ann", "bo", "cy"], seed)
        if r.status_code == 201:
            created.append(r.json())
            refused = 0
            continue
        assert_storage_full(r)
        refused += 1
        if refused == 10:
            return created
    raise AssertionError("Redis never filled up")


def settled_memory(client: redis.Redis) -> int:
    """Redis' used memory once the service's connections are idle: their query buffers, freed
    a few seconds after use, take hundreds of KB on a busy machine."""
    last = -1
    for _ in range(40):
        used = int(client.info("memory")["used_memory"])
        if abs(used - last) < 8_192:
            return used
        last = used
        time.sleep(0.5)
    return last


def test_full_redis_refuses_new_games_and_lets_games_go_on() -> None:
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        client.config_set("maxmemory-policy", "noeviction")
        env = {"REDIS_MEMORY_SAMPLE_SECONDS": "1", "STORAGE_FULL_PERCENT": str(FULL_PERCENT)}
        with start_gunicorn(server.url, workers=2, env=env) as url:
            empty = settled_memory(client)
            client.config_set("maxmemory", empty + HEADROOM)
            time.sleep(1.2)  # every worker's sample knows the limit
            created = fill_with_games(url)
            assert len(created) > 10
            # Memory sits at the threshold, where Redis freeing a few KB (a client's buffers)
            # lets one more game in, rightly: go clearly past it, for every worker's sample.
            client.set("filler", b"x" * (HEADROOM // 5))
            time.sleep(1.2)
            # Refused again and again while full: nothing of a refused game was stored.
            keys = client.dbsize()
            for seed in range(5):
                assert_storage_full(create(url, ["ann", "bo"], seed))
            assert client.dbsize() == keys
            # The games already made are played on (bots, one thread each) until they end or
            # Redis refuses a write; each refusal is the storage_full problem, nothing else.
            ends: list[str] = []
            lock = threading.Lock()

            def play(game: dict[str, object]) -> tuple[dict[str, object], int]:
                bots = [make_bot("greedy", seat) for seat in range(3)]
                with OnceClient(url) as c:
                    try:
                        drive_http(c, game, bots)
                        end = "game_over"
                    except ApiError as err:
                        assert (err.status, err.code) == (503, "storage_full"), err
                        end = "storage_full"
                    with lock:
                        ends.append(end)
                    return game, c.applied

            with ThreadPoolExecutor(4) as pool:
                results = list(pool.map(play, created[:PLAYED]))
            applied = sum(n for _, n in results)
            assert applied > 10 * PLAYED, "moves went on after new games were refused"
            for game, n in results:
                view = requests.get(f"{url}/api/v1/games/{game['game_id']}", timeout=10).json()
                assert view["version"] == 1 + n, "a refused write changed nothing"
            text = requests.get(url + "/metrics", timeout=10).text
            used = metric_total(text, "redis_memory_used_bytes")
            limit = metric_total(text, "redis_memory_max_bytes")
        print(
            f"\nmaxmemory {empty + HEADROOM} B: {len(created)} games made before storage_full, "
            f"then {applied} actions applied; games ended {Counter(ends)}; "
            f"gauges used {used:.0f} / max {limit:.0f}"
        )
        assert limit == empty + HEADROOM
        assert 0.5 * limit < used <= 1.1 * limit
        client.close()


def test_a_write_redis_refuses_is_storage_full_and_changes_nothing() -> None:
    """Redis' own OOM refusal (no headroom check: STORAGE_FULL_PERCENT=0) on create and move."""
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        env = {"STORAGE_FULL_PERCENT": "0"}
        with start_gunicorn(server.url, workers=1, env=env) as url:
            r = create(url, ["ann", "bo"], 7)
            assert r.status_code == 201
            game = r.json()
            auth = {"Authorization": f"Bearer {game['host_token']}"}
            client.config_set("maxmemory-policy", "noeviction")
            client.config_set("maxmemory", 1)
            keys = client.dbsize()
            assert_storage_full(create(url, ["ann", "bo"], 8))
            deal = f"{url}/api/v1/games/{game['game_id']}/deal"
            assert_storage_full(requests.post(deal, headers=auth, timeout=10))
            assert client.dbsize() == keys
            client.config_set("maxmemory", 0)
            assert requests.post(deal, headers=auth, timeout=10).status_code == 200
            view = requests.get(f"{url}/api/v1/games/{game['game_id']}", timeout=10).json()
            assert view["version"] == 2
        client.close()


def test_a_player_is_refused_when_storage_is_full() -> None:
    """A player never expires: past STORAGE_FULL_PERCENT none is made, as no game is."""
    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        used = int(client.info("memory")["used_memory"])
        client.config_set("maxmemory", used * 3)  # a third used: past the 1% set below
        env = {"STORAGE_FULL_PERCENT": "1", "REDIS_MEMORY_SAMPLE_SECONDS": "1"}
        with start_gunicorn(server.url, workers=1, env=env) as url:
            r = requests.post(url + "/api/v1/players", json={"name": "cy"}, timeout=10)
            assert_storage_full(r)
            assert not list(client.scan_iter(match="mt:{player:*"))
            client.config_set("maxmemory", 0)  # room again: the next sample says so
            deadline = time.monotonic() + 10
            while (
                r := requests.post(url + "/api/v1/players", json={"name": "cy"}, timeout=10)
            ).status_code == 503:
                assert time.monotonic() < deadline, r.text
                time.sleep(0.2)
            assert r.status_code == 201, r.text
        client.close()
