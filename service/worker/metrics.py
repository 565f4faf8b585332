"""The worker's Prometheus metrics, served on ``WORKER_METRICS_PORT`` (off by default).

The worker is a process of its own (a container of its own in deploy/), so it serves its own
``/metrics`` rather than writing into an app instance's multiprocess folder, which it may not
share and which gunicorn wipes when it starts (docs/design.md, "The worker's metrics").
"""

from __future__ import annotations

from prometheus_client import REGISTRY, Counter, Gauge, start_http_server

TURNS_PLAYED = Counter(
    "worker_turns_played_total",
    "Server moves (bots' turns, clocks' forced turns, deals, seats reopened) the worker stored.",
)
SWEEPS = Counter(
    "worker_sweeps_total",
    "Sweeps for games owed a change that the work queue lost, run by this worker.",
)
REQUEUED = Counter(
    "worker_games_requeued_total",
    "Games owed a change that a sweep found in no queue and queued again.",
)
# Set by each sweep this worker runs: with several workers, the freshest is that of the worker
# whose worker_sweeps_total moved last (one worker sweeps per WORKER_SWEEP_MS).
DUE_LAG = Gauge(
    "worker_oldest_due_seconds",
    "At this worker's last sweep, how long the game owed a change the longest had been owed it "
    "(0: none owed). Above WORKER_SWEEP_GRACE_MS, games wait for the worker.",
    multiprocess_mode="max",
)


def serve_metrics(port: int) -> None:
    """``/metrics`` (any path, in fact) on ``port`` of every interface, in a thread of its own;
    nothing when ``port`` is 0."""
    if port:
        start_http_server(port, registry=REGISTRY)
