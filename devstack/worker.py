"""Start the background worker (``python -m service.worker``) beside the gunicorn pools: for
``make run`` and for the tests' stacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from devstack.managed import wait_until

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 30.0


@contextmanager
def worker(env: Mapping[str, str], output: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """The worker with ``env`` (REDIS_URL and the service's settings), waited for until its
    loop turns (its heartbeat file), stopped with SIGTERM on leaving."""
    with tempfile.TemporaryDirectory(prefix="mt-worker-") as tmp:
        heartbeat = Path(tmp) / "alive"
        full = {**os.environ, **env, "WORKER_HEARTBEAT": str(heartbeat)}
        sink = output.open("ab") if output is not None else None
        proc = subprocess.Popen(
            [sys.executable, "-m", "service.worker"],
            cwd=ROOT,
            env=full,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            # Stopped by whoever started it, in its turn (before Redis): not by a terminal's
            # Ctrl-C, which goes to the whole foreground process group.
            process_group=0,
        )
        try:
            wait_until(
                heartbeat.exists,
                alive=lambda: proc.poll() is None,
                timeout=START_SECONDS,
                interval=0.05,
                what="the worker",
                exited=lambda: f"code {proc.returncode}",
            )
            yield proc
        finally:
            _stop(proc)
            if sink is not None:
                sink.close()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
