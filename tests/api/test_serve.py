"""``make run`` (service.launch.serve): embedded Redis in DATA_DIR, gunicorn on PORT, clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import requests

from service.launch.redis_server import free_port
from tests.servers import ROOT


def test_serve_with_embedded_redis(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path), "WEB_CONCURRENCY": "1"}
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "service.launch.serve"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert proc.poll() is None, "serve exited early"
            assert time.monotonic() < deadline, "serve did not become ready"
            time.sleep(0.2)
        r = requests.post(base + "/api/v1/games", json={"players": ["a", "b"]}, timeout=5)
        assert r.status_code == 201
        assert (tmp_path / "redis.sock").exists()
        assert (tmp_path / "redis" / "appendonlydir").is_dir()  # AOF on: games survive restarts
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    # Redis went away with gunicorn.
    assert not (tmp_path / "redis.sock").exists()
