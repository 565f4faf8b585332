"""Liveness of the worker's queue under interleavings the loop's timing rarely shows, forced
here step by step on real gunicorn, real Redis and the worker's own loop (two of them in this
process, each with its own name, as two worker processes would be): a game with a server move
due is played soon, whatever order the workers' writes to the queue land in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
import requests

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import RedisServer
from devstack.worker import worker
from service.api.app import create_app
from service.store import keys
from service.store.work import WorkQueue
from service.worker.loop import Outcome, Worker
from service.worker.play import play_game
from tests.eventually import eventually
from tests.live.helpers import auth, create, view

pytestmark = pytest.mark.slow

ENV = {"MIN_TURN_SECONDS": "1", "LOG_LEVEL": "warning"}
HOUR = 3600


@pytest.fixture()
def redis_server() -> Iterator[RedisServer]:
    """A Redis of this test's own: no other test's worker may take its jobs."""
    with RedisServer() as server:
        yield server


def test_a_busy_games_retry_is_not_pushed_back_by_the_lease_holders_older_deadline(
    redis_server: RedisServer,
) -> None:
    """Worker A holds a game's lease and is about to schedule the deadline it saw (a person's
    turn clock, an hour away). Meanwhile the host hands that person's seat to a bot: the request
    queues the rest of the game, and worker B, finding the lease held, schedules the game again
    in a moment. A's stale deadline must not replace B's moment: the game would wait an hour
    for a move due now (before: it did; a deadline may be a day away)."""
    client = redis.Redis.from_url(redis_server.url)
    app = create_app({"REDIS_URL": redis_server.url, "REDIS_CLUSTER": False})
    with start_gunicorn(redis_server.url, env=ENV, with_worker=False) as base:
        players: list[Any] = ["ann", *({"name": f"b{n}", "bot": "hard"} for n in range(3))]
        game = create(base, players=players, auto_deal=True, turn_seconds=HOUR, seed=7)
        gid, table = game["game_id"], auth(game["host_token"])
        with app.app_context():
            queue = WorkQueue(client)
            queue.ensure_group()
            seen: dict[str, Any] = {}

            def b_plays(game_id: str, spent: Callable[[], bool]) -> Outcome:
                raise AssertionError("B must find the game's lease held")

            b = Worker(queue, b_plays, "b")

            def a_plays(game_id: str, spent: Callable[[], bool]) -> Outcome:
                outcome = play_game(game_id, spent)
                if view(base, gid)["turn"] == 0 and "moved" not in seen:
                    # ann's turn, clocked: A is about to schedule its deadline. The host hands
                    # her seat to a bot now; what is left of the game is queued (XADD).
                    url = f"{base}/api/v1/games/{gid}/seats/0"
                    r = requests.put(url, json={"bot": "hard"}, headers=table, timeout=30)
                    assert r.status_code == 200, r.text
                    seen["moved"] = r.json()["version"]
                    assert client.xlen(keys.WORK_JOBS) >= 1, "the bots' game was not queued"
                    assert b.step() >= 1  # the lease is A's: B schedules it in a moment
                return outcome

            a = Worker(queue, a_plays, "a")
            queue.enqueue(gid)
            # A plays the bots' first moves (what creation left) until ann's turn.
            eventually(lambda: a.step() >= 0 and "moved" in seen, 60, "ann's turn never came")
        moved = seen["moved"]
        with worker({**ENV, "REDIS_URL": redis_server.url}):
            eventually(
                lambda: view(base, gid)["version"] > moved,
                30,
                f"nobody plays the bots' game; it is due at {client.zscore(keys.WORK_DUE, gid)}",
            )


def test_a_seek_table_lives_until_its_bots_fill_it(redis_server: RedisServer) -> None:
    """A seek table waits for people at most ``fill_with_bots_after`` seconds (up to an hour),
    then its open seats go to bots. Never dealt, it expired ``UNDEALT_TTL_SECONDS`` (an hour)
    after its last change: when its fill came as late as that, the table was gone the moment
    the worker came to fill it (here both are 2 s: the table was not found)."""
    env = {**ENV, "UNDEALT_TTL_SECONDS": "2"}
    with start_gunicorn(redis_server.url, env=env) as base:
        body = {"name": "ann", "players": 2, "fill_with_bots_after": 2}
        seated = requests.post(f"{base}/api/v1/lobby/seek", json=body, timeout=10)
        assert seated.status_code == 201, seated.text
        gid = seated.json()["game_id"]

        def filled() -> bool:
            r = requests.get(f"{base}/api/v1/games/{gid}", timeout=10)
            assert r.status_code == 200, f"the seek table is gone: {r.text}"
            return r.json()["players"][1]["bot"] is not None

        eventually(filled, 30, "the open seat never went to a bot")
        assert view(base, gid)["round"] >= 1  # and the game is dealt: it lives on
