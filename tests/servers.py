"""Real servers for tests and benchmarks: gunicorn running the API (redis comes from
``service.launch.redis_server``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from service.launch.managed import answers, wait_until
from service.launch.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"


@contextmanager
def start_gunicorn(
    redis_url: str,
    *,
    port: int | None = None,
    workers: int = 2,
    env: Mapping[str, str] | None = None,
    app: str = "service.api.wsgi:app",
    timeout: float = 30.0,
    output: Path | None = None,
) -> Iterator[str]:
    """Run gunicorn with ``deploy/gunicorn.conf.py`` on 127.0.0.1; yields its base URL.

    Waits until ``/healthz`` answers, stops gunicorn (SIGTERM, then SIGKILL) on exit.
    ``env`` adds variables (e.g. GAME_TTL_SECONDS); ``app`` serves another WSGI app;
    ``output``: a file that gets gunicorn's stdout and stderr (every log line).
    """
    port = port or free_port()
    full_env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": str(workers),
        "LOG_LEVEL": "warning",
        **(env or {}),
    }
    sink = output.open("ab") if output is not None else None
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), app],
        cwd=ROOT,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=sink,
        stderr=sink,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: answers(base + "/healthz", status=200),
            alive=lambda: proc.poll() is None,
            timeout=timeout,
            interval=0.1,
            what="gunicorn",
            exited=lambda: f"code {proc.returncode}",
        )
        yield base
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if sink is not None:
            sink.close()
