"""``python -m service.worker``: run the background worker until SIGTERM or SIGINT.

``python -m service.worker --alive`` exits 0 while a worker on this machine has turned its loop
within :data:`ALIVE_SECONDS` (the heartbeat file's age): the liveness probe of compose and k8s.
Settings come from the environment, as for the API (``REDIS_URL``, ``REDIS_CLUSTER``, ...), and
``WORKER_LEASE_MS`` and ``WORKER_CLAIM_IDLE_MS`` (see :mod:`.loop`), ``WORKER_SWEEP_MS`` and
``WORKER_SWEEP_GRACE_MS`` (see :mod:`.sweep`), ``WORKER_METRICS_PORT`` (see :mod:`.metrics`).

``python -m service.worker --backfill`` gives every live game without a due entry the one its
record says, whether or not a worker did it before, and exits (see :mod:`.backfill`).
"""

from __future__ import annotations

import os

# The image sets PROMETHEUS_MULTIPROC_DIR for gunicorn, whose master creates that folder; the
# worker's container shares the environment but not the folder (an empty /tmp), and every
# metric created at import would fail to open its file there. The worker serves its own
# metrics from memory (see :mod:`.metrics`): the setting is dropped before prometheus_client
# is imported, which reads it then.
os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)

import logging
import signal
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

from flask import Flask

from service.api.app import create_app
from service.api.config import SettingError, parse_int, settings
from service.api.store_access import store
from service.api.transaction import stored_due
from service.api.webhook_urls import allowed_hosts
from service.store.due import DueSets
from service.store.work import WorkQueue

from . import backfill
from .deliveries import Sender
from .loop import CLAIM_IDLE_MS, LEASE_MS, Worker
from .metrics import serve_metrics
from .play import play_game
from .sweep import GRACE_MS, SWEEP_MS, sweeper

HEARTBEAT = Path(os.environ.get("WORKER_HEARTBEAT", "/tmp/mexican-train-worker.alive"))
ALIVE_SECONDS = 30.0


def alive() -> bool:
    try:
        return time.time() - HEARTBEAT.stat().st_mtime < ALIVE_SECONDS
    except OSError:
        return False


def beat() -> None:
    HEARTBEAT.touch()


def start_sender(stop: threading.Event) -> None:
    """Webhook deliveries, in threads of their own beside the game loop."""
    config = settings()
    sender = Sender(
        store().hooks,
        allowed_hosts(config.webhook_allow_hosts),
        config.webhook_retry_ms,
        config.webhook_give_up_seconds * 1000,
    )
    threading.Thread(target=sender.run, args=(stop,), name="webhooks", daemon=True).start()


def backfill_once(name: str, stop: threading.Event, *, force: bool = False) -> bool:
    """The due sets' backfill, to its end or ``stop``; False when ``stop`` came first."""
    games = store()
    queue, dues = WorkQueue(games.client), DueSets(games.client)
    return backfill.run_once(queue, dues, games, stored_due, name, stop, force=force)


def start_backfill(app: Flask, name: str, stop: threading.Event) -> None:
    """The due sets' backfill, in a thread of its own beside the game loop."""

    def run() -> None:
        with app.app_context():
            backfill_once(name, stop)

    threading.Thread(target=run, name="due-backfill", daemon=True).start()


def _ms_setting(name: str, default: int) -> int:
    """A positive number of milliseconds from the environment, else ``default``."""
    return parse_int(name, os.environ.get(name) or default, 1)


def main() -> int:
    if sys.argv[1:] == ["--alive"]:
        return 0 if alive() else 1
    only_backfill = sys.argv[1:] == ["--backfill"]
    try:
        app = create_app()  # its log records are JSON lines, as the API's (LOG_LEVEL)
        lease_ms = _ms_setting("WORKER_LEASE_MS", LEASE_MS)
        claim_idle_ms = _ms_setting("WORKER_CLAIM_IDLE_MS", CLAIM_IDLE_MS)
        sweep_ms = _ms_setting("WORKER_SWEEP_MS", SWEEP_MS)
        sweep_grace_ms = _ms_setting("WORKER_SWEEP_GRACE_MS", GRACE_MS)
        metrics_port = parse_int(
            "WORKER_METRICS_PORT", os.environ.get("WORKER_METRICS_PORT") or 0, 0, 65535
        )
    except SettingError as err:  # one line naming the setting, not a traceback
        print(f"Error: {err}", file=sys.stderr)
        return 2
    try:
        serve_metrics(0 if only_backfill else metrics_port)
    except OSError as err:  # the port taken: one line, as for a bad setting
        print(f"Error: WORKER_METRICS_PORT {metrics_port}: {err}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    name = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    with app.app_context():
        if only_backfill:  # the exit status says whether the pass ended
            return 0 if backfill_once(name, stop, force=True) else 1
        start_backfill(app, name, stop)
        start_sender(stop)
        worker = Worker(
            WorkQueue(store().client),
            play_game,
            name,
            lease_ms=lease_ms,
            claim_idle_ms=claim_idle_ms,
            sweep=sweeper(DueSets(store().client), WorkQueue(store().client), sweep_grace_ms),
            sweep_ms=sweep_ms,
        )
        logging.getLogger(__name__).info("worker %s started", name)
        worker.run(stop, beat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
