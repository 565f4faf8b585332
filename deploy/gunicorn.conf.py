"""gunicorn settings for the API (``gunicorn -c deploy/gunicorn.conf.py service.api.wsgi:app``).

Environment: PORT (default 8000), BIND (overrides PORT), WEB_CONCURRENCY (workers, default two
per CPU this process may use, cgroup CPU quota included), GUNICORN_THREADS (threads per worker,
default 2; 1 = sync workers), GRACEFUL_TIMEOUT, GUNICORN_TIMEOUT, LOG_LEVEL, ACCESS_LOG (a path
or "-": gunicorn's own JSON access log, off by default: the app logs one JSON line per request).

Worker class and count, from measurement (``python -m bench.bench_workers``: the real app
on a private Redis, wrk with 32 keep-alive connections over 200 dealt games, a mix of seat view,
legal-moves and refused POST /moves; each configuration 4 runs of 6 s, interleaved, on this
2-CPU machine). Two runs:

    configuration               quiet machine (load ~2)          shared machine (load 10-17)
                                req/s median (min-max)  CPU ms   req/s median (min-max)  CPU ms
    sync -w 2                      2376 (2348-2405)     0.67       972  (790-2055)      0.79
    sync -w 4                      2448 (2351-2546)     0.72      1275  (832-1587)      0.91
    sync -w 8                      1719 (1713-1726)     1.08       769  (314-1168)      1.40
    gthread -w 2 --threads 4       1820 (1017-2622)     0.90      1296  (702-1983)      0.77
    gthread -w 4 --threads 2       2390 (2315-2466)     0.74      1134  (859-1190)      0.80
    sync -w 4, request log on      2189 (2013-2364)     0.81      1264  (418-1613)      1.09

- A request costs under 1 ms of CPU (decode the state, run the engine, encode JSON) plus one or
  two Redis round trips. Processes beyond two per CPU only add switching: sync -w 8 spends 1.5x
  the CPU per request of -w 2 and serves less.
- On the quiet machine, two processes per CPU win: sync -w 4 and gthread -w 4 --threads 2 are
  within each other's range (2448 vs 2390 req/s, 0.72 vs 0.74 ms CPU). Four threads in one
  process per CPU were 25% slower and erratic (1017-2622): the threads fight for one GIL.
- Of the two, gthread keeps nginx's upstream keep-alive connections open (a sync worker closes
  each one) and a slow client holds one thread, not a whole process.
- Hence two gthread workers per CPU, 2 threads each. Scale out with instances, not workers.
"""

import gc
import os
import shutil
import tempfile
import threading
import time

from service.api.config import SettingError, load_settings, parse_int


def _setting(name: str, default: int, minimum: int = 1) -> int:
    """A whole-number setting of this file: a bad one stops gunicorn, saying which."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        return parse_int(name, raw, minimum)
    except SettingError as err:
        raise SystemExit(f"Error: {err}") from None


bind = os.environ.get("BIND") or f"0.0.0.0:{os.environ.get('PORT', '8000')}"


def _usable_cpus() -> int:
    """CPUs this process may use: its affinity (taskset, cpusets), capped by a cgroup CPU quota
    (docker --cpus, Kubernetes limits), which os.cpu_count() does not see."""
    cpus = len(os.sched_getaffinity(0))
    quota_files = (
        ("/sys/fs/cgroup/cpu.max", None),  # cgroup v2: "<quota> <period>" or "max <period>"
        ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"),  # v1
    )
    for quota_file, period_file in quota_files:
        try:
            with open(quota_file) as f:
                fields = f.read().split()
            if period_file is not None:
                with open(period_file) as f:
                    fields.append(f.read().strip())
        except OSError:
            continue
        if len(fields) == 2 and fields[0] not in ("max", "-1"):
            return max(1, min(cpus, -(-int(fields[0]) // int(fields[1]))))
    return cpus


workers = _setting("WEB_CONCURRENCY", 2 * _usable_cpus())
threads = _setting("GUNICORN_THREADS", 2)
worker_class = "sync" if threads == 1 else "gthread"
wsgi_app = "service.api.wsgi:app"
# Finish requests in flight on SIGTERM before exiting (rolling deploys, make run's Ctrl-C).
graceful_timeout = _setting("GRACEFUL_TIMEOUT", 20, minimum=0)
timeout = _setting("GUNICORN_TIMEOUT", 30, minimum=0)
keepalive = 5
# Recycle workers now and then so a slow leak cannot grow without bound.
max_requests = 20000
max_requests_jitter = 2000

# GUNICORN_POOL=streams: the pool nginx sends GET .../events to (SSE, NDJSON, long-polls). Its
# gevent workers hold a waiting reader as a greenlet (gevent patches threading, so the events hub
# runs on greenlets too), and each process has one Redis pub/sub connection for all its readers.
# Chosen by measurement on this 2-CPU machine (docs/design.md, "Serving streams"): 2 gevent
# workers held 2,000 SSE clients at a p99 of 16-18 ms; a thread per client (gthread) cost 40-80%
# of the short requests' throughput. STREAM_WORKERS (default 2) and STREAM_CONNECTIONS (per
# worker, default 20,000: gevent's default of 1,000 is met at 2,000 clients) size it.
POOL = os.environ.get("GUNICORN_POOL", "api")
if POOL == "streams":
    worker_class = "gevent"
    workers = _setting("STREAM_WORKERS", 2)
    worker_connections = _setting("STREAM_CONNECTIONS", 20000)
    bind = os.environ.get("BIND") or f"0.0.0.0:{os.environ.get('PORT', '8001')}"
    # A stream lives as long as its game: recycling a worker would cut every stream it holds.
    max_requests = 0
    # Every browser reconnects at once after a restart: a deeper accept queue than gunicorn's
    # 2,048 (the kernel caps it at net.core.somaxconn, 4,096 here) keeps a storm of thousands
    # waiting to be accepted instead of refused.
    backlog = 4096
    # Short requests share a process with thousands of waiting readers: a larger pool, still
    # blocking (redis-py waits for a free connection instead of failing at once).
    os.environ.setdefault("REDIS_POOL_SIZE", "64")
    os.environ.setdefault("REDIS_POOL_TIMEOUT_MS", "1000")
elif POOL == "api":
    # A thread sends one command at a time; two more for the wake-up subscription and the
    # ticker of a process that serves streams itself (no nginx in front).
    os.environ.setdefault("REDIS_POOL_SIZE", str(threads + 2))
else:
    raise SystemExit(f"GUNICORN_POOL must be api or streams, not {POOL!r}")
# Each worker opens its whole pool at start, named after its pool (CLIENT LIST): the number of
# Redis clients is then workers x pool size, and one that grows is a leak, not a busy minute.
os.environ.setdefault("REDIS_POOL_PREFILL", "1")
os.environ.setdefault("REDIS_CLIENT_NAME", f"mexican-train-{POOL}")
# The app's settings are read here, in the master, so that a bad one stops the instance at once
# with one line naming it, instead of every worker failing to boot on a traceback.
try:
    load_settings()
except SettingError as err:
    raise SystemExit(f"Error: {err}") from None

accesslog = os.environ.get("ACCESS_LOG") or None
# When turned on, one JSON object per line (the app's own request line has more: route template,
# game id, duration; this one has the bytes sent and what reached gunicorn).
access_log_format = (
    '{"ts": "%(t)s", "remote": "%(h)s", "method": "%(m)s", "path": "%(U)s", "status": %(s)s, '
    '"bytes": "%(b)s", "duration_us": %(D)s, "request_id": "%({x-request-id}o)s"}'
)
# Above what nginx lets through (request line and each header line 4 KiB, all headers ~17 KiB,
# measured: at most ~1,000 of the shortest header lines): nginx refuses oversized requests first,
# with a problem body, instead of gunicorn answering with its HTML page.
limit_request_line = 8190
limit_request_fields = 2000
limit_request_field_size = 8190
errorlog = "-"
# gunicorn's own lines name a request's target (an error escaping the app, a refused request
# line), whose query may hold a token: they are written without it.
logger_class = "service.frameworks.gunicorn_logs.QuerylessLogger"
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


# CPU priority of each pool's workers when both share a machine's cores (nice values; only a
# rise needs no privilege). A streams worker wakes thousands of times a second, each time for a
# few microseconds, and its work is bounded by what the API pool commits; in the run queue
# behind the API pool's threads it waited seconds while using a quarter of a core (docs/design.md,
# "10,000 watchers"). The API pool therefore yields: its requests wait microseconds, the
# watchers no longer wait seconds. GUNICORN_NICE overrides the pool's value. Read here, in the
# master: a bad value read as each worker starts makes every worker exit as it boots, and the
# master start another in its place, for as long as it runs.
NICENESS = {"api": 5, "streams": 0}
NICE = _setting("GUNICORN_NICE", NICENESS[POOL], minimum=-20)


def post_worker_init(worker):  # type: ignore[no-untyped-def]
    """Move everything loaded so far out of the collector's sight, and collect the oldest
    generation less often: with thousands of readers, full collections paused a streams worker
    for 100-200 ms. Then take the pool's CPU priority. gunicorn's own refusals speak RFC 9457."""
    # Requests gunicorn refuses itself get a problem body, not its HTML page.
    from service.frameworks.gunicorn_errors import install

    install()
    gc.freeze()
    if POOL == "streams":
        gc.set_threshold(7000, 20, 100)
        # A game's feed writes each new entry to its readers' sockets itself, in one pass,
        # instead of waking a greenlet per reader (service/frameworks/gunicorn_body.py).
        from service.frameworks.gunicorn_body import capture

        worker.wsgi = capture(worker.wsgi)
    os.nice(NICE)
    threading.Thread(target=_drain_on_exit, args=(worker,), name="drain", daemon=True).start()


def _drain_on_exit(worker):  # type: ignore[no-untyped-def]
    """Once the worker is told to stop (SIGTERM: a rollout, make run's Ctrl-C), end its streams
    and answer its long-polls: gunicorn waits for every request in flight, and a stream would
    hold the worker until graceful_timeout, then be cut. Ended, its reader reconnects to another
    instance at once. A thread (a greenlet under gevent): gunicorn's own signal handler only
    clears ``alive``, and nothing else of the worker's runs while it waits."""
    from service.api.gamelog.hub import drain

    while worker.alive:
        time.sleep(0.1)
    drain()


def on_starting(server):  # type: ignore[no-untyped-def]
    """Start from empty metrics: files of a previous run (same container /tmp) would add up."""
    shutil.rmtree(_metrics_dir, ignore_errors=True)
    os.makedirs(_metrics_dir, exist_ok=True)


def child_exit(server, worker):  # type: ignore[no-untyped-def]
    """A dead worker's live gauges must not be reported; its counters stay summed, folded into
    one archive so that the folder does not grow by a worker's files at every recycle."""
    from prometheus_client import multiprocess

    from service.frameworks.prometheus import archive_dead

    try:
        archive_dead(worker.pid, _metrics_dir)
    except Exception:  # raised here, it would stop the master: its files stay summed instead
        server.log.exception("metrics of worker %s not archived", worker.pid)
        multiprocess.mark_process_dead(worker.pid, _metrics_dir)


def on_exit(server):  # type: ignore[no-untyped-def]
    if _owned_metrics_dir:
        shutil.rmtree(_metrics_dir, ignore_errors=True)
