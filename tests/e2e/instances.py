"""One app instance = one gunicorn (master + workers) in its own process group, logs to a file.

Unlike ``tests.servers.start_gunicorn`` this keeps the process so a test can ``kill -9`` the whole
instance (master and workers at once, as when a container or pod is killed) and read its logs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

import orjson

from service.launch.managed import Managed, answers, wait_until
from service.launch.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"


class Instance(Managed):
    def __init__(
        self,
        redis_url: str,
        log_path: Path,
        *,
        port: int | None = None,
        workers: int = 2,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.log_path = log_path
        self.env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": str(workers),
            "LOG_LEVEL": "info",
            **(env or {}),
        }
        # Each instance makes its own metrics folder (gunicorn.conf.py), as in separate containers.
        self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> Self:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF)],
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # own process group: kill9() takes the workers too
            )
        try:
            wait_until(
                lambda: answers(self.url + "/healthz", status=200),
                alive=lambda: self.alive,
                timeout=timeout,
                interval=0.05,
                what="gunicorn",
                exited=lambda: self.log_path.read_text()[-2000:],
            )
        except BaseException:
            self.stop()
            raise
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill9(self) -> None:
        """SIGKILL master and workers together: no graceful shutdown, requests in flight cut."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(15)
        with contextlib.suppress(ProcessLookupError):  # workers left behind by a failed stop
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def request_log(self) -> list[dict[str, Any]]:
        """The app's JSON request lines (other log lines, e.g. gunicorn's, are skipped)."""
        lines = []
        for raw in self.log_path.read_bytes().splitlines():
            if raw.startswith(b"{"):
                try:
                    doc = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(doc, dict) and doc.get("event") == "request":
                    lines.append(doc)
        return lines


def metric_total(text: str, name: str, **labels: str) -> float:
    """Sum of a Prometheus sample family over the series matching ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        series, value = line.rsplit(" ", 1)
        if all(f'{k}="{v}"' in series for k, v in labels.items()):
            total += float(value)
    return total
