"""gunicorn settings for the API (``gunicorn -c deploy/gunicorn.conf.py service.api.wsgi:app``).

Environment: PORT (default 8000), BIND (overrides PORT), WEB_CONCURRENCY (workers, default 4),
GUNICORN_THREADS (default 1: sync workers; each request is short and CPU-bound).
"""

import os
import shutil
import tempfile

bind = os.environ.get("BIND") or f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "sync" if threads == 1 else "gthread"
wsgi_app = "service.api.wsgi:app"
# Finish requests in flight on SIGTERM before exiting (rolling deploys, make run's Ctrl-C).
graceful_timeout = int(os.environ.get("GRACEFUL_TIMEOUT", "20"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
keepalive = 5
# Recycle workers now and then so a slow leak cannot grow without bound.
max_requests = 20000
max_requests_jitter = 2000
accesslog = os.environ.get("ACCESS_LOG") or None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")

# Prometheus multiprocess mode (service/api/observability.py): each worker writes its metrics to
# files in this folder and /metrics sums them, so a scrape reports the whole instance whichever
# worker answers. It must be set before a worker imports prometheus_client, hence here, in the
# master. One folder per gunicorn instance: never share it between instances.
_owned_metrics_dir = not os.environ.get("PROMETHEUS_MULTIPROC_DIR")
if _owned_metrics_dir:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="mt-metrics-")
_metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"]


def on_starting(server):  # type: ignore[no-untyped-def]
    """Start from empty metrics: files of a previous run (same container /tmp) would add up."""
    shutil.rmtree(_metrics_dir, ignore_errors=True)
    os.makedirs(_metrics_dir, exist_ok=True)


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    """A dead worker's live gauges must not be reported; its counters stay summed."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):  # type: ignore[no-untyped-def]
    if _owned_metrics_dir:
        shutil.rmtree(_metrics_dir, ignore_errors=True)
