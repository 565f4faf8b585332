"""gunicorn settings for the API (``gunicorn -c deploy/gunicorn.conf.py service.api.wsgi:app``).

Environment: PORT (default 8000), BIND (overrides PORT), WEB_CONCURRENCY (workers, default one
per CPU this process may use), GUNICORN_THREADS (threads per worker, default 4; 1 = sync
workers), GRACEFUL_TIMEOUT, GUNICORN_TIMEOUT, LOG_LEVEL, ACCESS_LOG (a path or "-": gunicorn's
own JSON access log, off by default since the app already logs one JSON line per request).

Worker class and count, from measurement (``python -m tests.deploy.bench_workers``: the real app
on a private Redis, wrk with 32 keep-alive connections over 200 dealt games, a mix of seat view,
legal-moves and refused POST /moves; 2-CPU machine shared with other jobs, so requests/s swing
by 2x between runs while gunicorn's CPU per request is stable):

    configuration               req/s  CPU ms/req
    sync -w 2                     489        1.07
    sync -w 4                     989        1.08
    sync -w 8                    1088        1.28
    gthread -w 2 --threads 4     2412        0.73
    gthread -w 4 --threads 2     1015        0.97

- A request is ~1 ms of CPU (decode state, run the engine, encode JSON) plus one or two Redis
  round trips. Python runs one thread at a time per process, so CPU work scales with processes,
  and more processes than CPUs only add context switches (sync -w 8 costs 20% more CPU per
  request than -w 4).
- sync workers cannot keep a connection open: every request pays a TCP accept and close, and
  nginx's upstream keep-alive is wasted. gthread keeps connections and overlaps one thread's
  Redis wait with another's CPU work: ~30% less CPU per request and the best throughput.
- Hence: one gthread worker per CPU, 4 threads each. Scale out with more instances (pods),
  not more workers per instance.
"""

import os
import shutil
import tempfile

bind = os.environ.get("BIND") or f"0.0.0.0:{os.environ.get('PORT', '8000')}"
# CPUs this process may run on (respects taskset/cpusets; set WEB_CONCURRENCY under a CPU quota).
workers = int(os.environ.get("WEB_CONCURRENCY") or len(os.sched_getaffinity(0)))
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
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
# When turned on, one JSON object per line (the app's own request line has more: route template,
# game id, duration; this one has the bytes sent and what reached gunicorn).
access_log_format = (
    '{"ts": "%(t)s", "remote": "%(h)s", "method": "%(m)s", "path": "%(U)s", "status": %(s)s, '
    '"bytes": "%(b)s", "duration_us": %(D)s, "request_id": "%({x-request-id}o)s"}'
)
errorlog = "-"
# gunicorn >= 25 opens a control socket under $HOME by default: every instance on a host would
# share one path, and a read-only container cannot create it. Nothing here uses gunicornc.
control_socket_disable = True
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
