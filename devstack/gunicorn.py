"""The one launcher of the service's gunicorn, for ``make run``, the tests and the benchmarks.

A :class:`Gunicorn` runs one pool (``api`` or ``streams``) with ``deploy/gunicorn.conf.py``, in
its own process group so a test can kill the whole instance at once (master and workers, as
when a container dies), waits until ``/healthz`` answers, and stops with SIGTERM (SIGKILL to the
group after ``GRACE_SECONDS``). :func:`start_gunicorn` adds the background worker beside it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Self

import orjson

from devstack.managed import Managed, answers, wait_until
from devstack.redis_server import free_port
from devstack.worker import worker

ROOT = Path(__file__).resolve().parent.parent
SERVICE_APP = "service.api.wsgi:app"
START_SECONDS = 30.0
GRACE_SECONDS = 15.0


class Gunicorn(Managed):
    """One gunicorn pool serving ``app`` from the checkout at ``root`` on 127.0.0.1 (or
    ``bind``). ``log_path``: where its output goes (else this process's); ``env`` adds to (and
    overrides) the environment. ``own_metrics``: its own metrics folder, as a container has.
    ``workers`` and ``log_level`` None leave gunicorn.conf.py's defaults (``make run``)."""

    def __init__(
        self,
        redis_url: str,
        *,
        port: int | None = None,
        bind: str | None = None,
        workers: int | None = 2,
        pool: str = "api",
        env: Mapping[str, str] | None = None,
        app: str = SERVICE_APP,
        root: Path = ROOT,
        log_path: Path | None = None,
        own_metrics: bool = False,
        log_level: str | None = "warning",
    ) -> None:
        self.port = port or (int(bind.rsplit(":", 1)[1]) if bind else free_port())
        self.bind = bind or f"127.0.0.1:{self.port}"
        self.app, self.root, self.log_path = app, root, log_path
        self.env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "BIND": self.bind,
            "GUNICORN_POOL": pool,
            **({"WEB_CONCURRENCY": str(workers)} if workers is not None else {}),
            **({"LOG_LEVEL": log_level} if log_level is not None else {}),
            **({"PYTHONPATH": str(root)} if root != ROOT else {}),
            **(env or {}),
        }
        if own_metrics:
            self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def instance(
        cls,
        redis_url: str,
        log_path: Path,
        *,
        workers: int = 2,
        pool: str = "api",
        env: Mapping[str, str] | None = None,
    ) -> Gunicorn:
        """One app instance as deployed: its own metrics folder, request log lines (info) in
        ``log_path``."""
        return cls(
            redis_url,
            workers=workers,
            pool=pool,
            env={"LOG_LEVEL": "info", **(env or {})},
            log_path=log_path,
            own_metrics=True,
        )

    @property
    def url(self) -> str:
        host = self.bind.rsplit(":", 1)[0]
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{self.port}"

    def start(self, timeout: float = START_SECONDS) -> Self:
        conf = self.root / "deploy" / "gunicorn.conf.py"
        command = [sys.executable, "-m", "gunicorn", "-c", str(conf), self.app]
        with self._sink() as sink:
            self.proc = subprocess.Popen(
                command,
                cwd=self.root,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=sink,
                # Its own process group, so kill9() takes the workers too; not its own session,
                # which Linux's autogroup scheduling would give an equal share of the CPU as a
                # whole, whatever the nice values (gunicorn.conf.py) of the pools ask for.
                process_group=0,
            )
        try:
            wait_until(
                lambda: answers(self.url + "/healthz", status=200),
                alive=lambda: self.alive,
                timeout=timeout,
                interval=0.05,
                what=f"gunicorn at {self.url}",
                exited=self._exit_reason,
            )
        except BaseException:
            self.stop()
            raise
        return self

    @contextmanager
    def _sink(self) -> Iterator[IO[bytes] | None]:
        if self.log_path is None:
            yield None
            return
        with self.log_path.open("ab") as log:
            yield log

    def _exit_reason(self) -> str:
        if self.log_path is not None:
            return self.log_path.read_text()[-2000:]
        return f"code {self.proc.returncode if self.proc else None}"

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
                self.proc.wait(GRACE_SECONDS)
        with contextlib.suppress(ProcessLookupError):  # workers left behind by a failed stop
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def request_log(self) -> list[dict[str, Any]]:
        """The app's JSON request lines (other log lines, e.g. gunicorn's, are skipped)."""
        assert self.log_path is not None, "a gunicorn logging to this process keeps no log"
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


@contextmanager
def start_gunicorn(
    redis_url: str,
    *,
    port: int | None = None,
    workers: int = 2,
    env: Mapping[str, str] | None = None,
    app: str = SERVICE_APP,
    timeout: float = START_SECONDS,
    output: Path | None = None,
    with_worker: bool = True,
    root: Path = ROOT,
) -> Iterator[str]:
    """The API pool, and the background worker beside it (``with_worker``: bot turns past a
    request's budget, clocked turns); yields its base URL. ``output``: a file that gets every
    log line of both; ``root``: the checkout to serve (a benchmark compares another tree's code
    with this one's)."""
    server = Gunicorn(
        redis_url, port=port, workers=workers, env=env, app=app, root=root, log_path=output
    )
    server.start(timeout)
    try:
        if with_worker and app == SERVICE_APP:
            with worker({**server.env}, output):
                yield server.url
        else:
            yield server.url
    finally:
        server.stop()
