"""Open streams and long-polls in ``/metrics``: a real streams pool, real readers; the gauge of
each kind is 1 while its reader is connected and 0 once the stream ended, or its reader left."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from devstack.gunicorn import Gunicorn
from devstack.redis_server import RedisServer
from service.frameworks.prometheus import LOCK_NAME
from tests.eventually import eventually
from tests.metrics import metric_total

#: Each stream ends after this long (the server closes it; its reader would resume).
LIFETIME = 4


@pytest.fixture(scope="module")
def streams_pool(
    redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gunicorn]:
    log = tmp_path_factory.mktemp("streams") / "streams.log"
    with Gunicorn.instance(
        redis_server.url,
        log,
        workers=2,
        pool="streams",
        env={"STREAM_WORKERS": "2", "STREAM_MAX_SECONDS": str(LIFETIME)},
    ) as pool:
        yield pool


def open_streams(pool: Gunicorn, kind: str) -> float:
    text = requests.get(pool.url + "/metrics", timeout=5).text
    return metric_total(text, "open_streams", kind=kind, pool="streams")


def new_game(pool: Gunicorn) -> str:
    body = {"players": ["ann", "bo"]}
    created = requests.post(pool.url + "/api/v1/games", json=body, timeout=10)
    assert created.status_code == 201
    return str(created.json()["game_id"])


@pytest.mark.parametrize(
    ("media", "kind"), [("text/event-stream", "sse"), ("application/x-ndjson", "ndjson")]
)
def test_a_stream_counts_one_while_open(streams_pool: Gunicorn, media: str, kind: str) -> None:
    events = f"{streams_pool.url}/api/v1/games/{new_game(streams_pool)}/events"
    assert open_streams(streams_pool, kind) == 0
    with requests.get(events, headers={"Accept": media}, stream=True, timeout=(5, 30)) as r:
        assert r.status_code == 200
        chunks = r.iter_content(None)
        next(chunks)  # the stream started: its first bytes came
        # Whichever of the two workers answers the scrape reports the one holding the stream.
        for _ in range(4):
            assert open_streams(streams_pool, kind) == 1
        for _ in chunks:  # to its end: the server closes it after LIFETIME
            pass
    eventually(lambda: open_streams(streams_pool, kind) == 0, 3, "an ended stream is still counted")


def test_a_stream_whose_reader_left_counts_no_more(streams_pool: Gunicorn) -> None:
    """The reader hangs up first: the stream is seen gone at its next write (a keep-alive at
    the latest, or its end), and counted no more."""
    events = f"{streams_pool.url}/api/v1/games/{new_game(streams_pool)}/events"
    headers = {"Accept": "text/event-stream"}
    with requests.get(events, headers=headers, stream=True, timeout=(5, 30)) as r:
        next(r.iter_content(None))
        assert open_streams(streams_pool, "sse") == 1
    eventually(
        lambda: open_streams(streams_pool, "sse") == 0, LIFETIME + 3, "a left stream counted"
    )


def test_a_long_poll_counts_one_while_it_waits(streams_pool: Gunicorn) -> None:
    events = f"{streams_pool.url}/api/v1/games/{new_game(streams_pool)}/events"
    answered: list[int] = []
    poll = threading.Thread(
        target=lambda: answered.append(
            requests.get(events, params={"after": 1, "wait": 3}, timeout=30).status_code
        )
    )
    poll.start()
    try:
        eventually(
            lambda: open_streams(streams_pool, "long-poll") == 1, 3, "the long-poll not counted"
        )
    finally:
        poll.join(30)
    assert answered == [200]
    assert open_streams(streams_pool, "long-poll") == 0


def test_a_scrape_waiting_for_an_archiving_holds_no_stream_of_its_worker(
    redis_server: RedisServer, live_server: str, tmp_path: Path
) -> None:
    """The master archives a dead worker's metrics under the folder's lock (1.2 s measured for
    960 label sets on a loaded machine). A scrape answered by a streams worker waits for it: a
    flock in a gevent worker would hold the whole event loop, and every stream of the worker
    would hear nothing until the archiving ended. Here the test holds the lock as the master
    does: an entry made meanwhile reaches the worker's stream before the lock is let go, and
    the scrape is answered after."""
    folder = tmp_path / "metrics"
    env = {"STREAM_WORKERS": "1", "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    pool = Gunicorn(
        redis_server.url, workers=1, pool="streams", env=env, log_path=tmp_path / "pool.log"
    )
    with pool:
        created = requests.post(
            live_server + "/api/v1/games", json={"players": ["ann", "bo"]}, timeout=10
        ).json()
        game = f"/api/v1/games/{created['game_id']}"
        order: list[str] = []
        stream = requests.get(
            pool.url + game + "/events",
            headers={"Accept": "text/event-stream"},
            stream=True,
            timeout=60,
        )
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith(b"id: ")) == b"id: 1"

        def read_on() -> None:
            if any(line == b"id: 2" for line in lines):
                order.append("entry")

        def scrape() -> None:
            answer = requests.get(pool.url + "/metrics", timeout=60)
            order.append(f"scrape {answer.status_code}")

        with (folder / LOCK_NAME).open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            threads = [threading.Thread(target=read_on), threading.Thread(target=scrape)]
            threads[1].start()
            eventually(lambda: pool_waits_on_the_lock(folder), 10, "no scrape waits for the lock")
            threads[0].start()
            host = {"Authorization": f"Bearer {created['host_token']}"}
            dealt = requests.post(live_server + game + "/deal", headers=host, timeout=10)
            assert dealt.status_code == 200, dealt.text
            threads[0].join(10)  # the entry, or nothing while the worker is held
            order.append("lock let go")
            fcntl.flock(lock, fcntl.LOCK_UN)
        for thread in threads:
            thread.join(30)
        stream.close()
    assert order == ["entry", "lock let go", "scrape 200"], order


def pool_waits_on_the_lock(folder: Path) -> bool:
    """Whether a process other than this one has the folder's lock file open (the scrape)."""
    lock = os.path.realpath(folder / LOCK_NAME)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == lock:
                    return True
            except OSError:
                continue
    return False
