"""nginx reloaded (SIGHUP: a changed config, an added instance, a renewed certificate) while
streams are open: its old workers must not live as long as their streams (up to
STREAM_MAX_SECONDS, 30 min), each reload leaving one more holding its connections and proxying
with the configuration that was replaced. After ``worker_shutdown_timeout`` the old worker
closes them and exits; the reader reconnects to the new workers and resumes."""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from devstack.gunicorn import Gunicorn
from devstack.nginx import Nginx
from devstack.redis_server import RedisServer, free_port
from devstack.stack import nginx_binary
from tests.e2e.nginx import ensure_nginx
from tests.eventually import eventually
from tests.live.helpers import sse_entries

pytestmark = pytest.mark.e2e

#: Well above nginx.conf's worker_shutdown_timeout, well below STREAM_MAX_SECONDS.
OLD_WORKERS_GONE_WITHIN = 90.0


@pytest.fixture()
def proxied(redis_server: RedisServer, tmp_path: Path) -> Iterator[Nginx]:
    ensure_nginx()
    api = Gunicorn(redis_server.url, workers=1, log_path=tmp_path / "api.log")
    streams = Gunicorn(
        redis_server.url,
        workers=1,
        pool="streams",
        env={"STREAM_WORKERS": "1"},
        log_path=tmp_path / "streams.log",
    )
    with api, streams:
        nginx = Nginx(
            nginx_binary(),
            [api.port],
            free_port(),
            tmp_path / "nginx",
            streams_ports=[streams.port],
        )
        with nginx:
            yield nginx


def _old_workers(nginx: Nginx) -> list[str]:
    assert nginx.proc is not None
    found = subprocess.run(
        ["ps", "-o", "args=", "--ppid", str(nginx.proc.pid)], capture_output=True, text=True
    )
    return [line for line in found.stdout.splitlines() if "shutting down" in line]


def test_a_reload_does_not_keep_old_workers_for_as_long_as_their_streams(
    proxied: Nginx,
) -> None:
    created = requests.post(proxied.url + "/api/v1/games", json={"players": ["a", "b"]}, timeout=10)
    gid = created.json()["game_id"]
    events = f"{proxied.url}/api/v1/games/{gid}/events"
    seen: list[int] = []
    ended: dict[str, Any] = {}

    def read() -> None:
        try:
            with requests.get(
                events, headers={"Accept": "text/event-stream"}, stream=True, timeout=(5, 300)
            ) as r:
                for entry in sse_entries(r):
                    seen.append(entry["version"])
            ended["how"] = "ended"
        except requests.RequestException as exc:  # cut by the old worker: reconnect
            ended["how"] = repr(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    eventually(lambda: seen == [1], 10, "the stream never showed the game's first entry")
    assert proxied.proc is not None
    proxied.proc.send_signal(signal.SIGHUP)
    eventually(lambda: bool(_old_workers(proxied)), 10, "nginx did not reload")
    eventually(
        lambda: not _old_workers(proxied),
        OLD_WORKERS_GONE_WITHIN,
        f"an old nginx worker still holds a stream: {_old_workers(proxied)}",
    )
    reader.join(10)
    assert "how" in ended, "the stream through the old worker is still open"
    # The reader resumes from its last entry on the new workers.
    again = requests.get(events, params={"after": seen[-1], "wait": 1}, timeout=10)
    assert again.status_code == 200 and again.json()["entries"] == []
