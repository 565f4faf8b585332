"""Request ids, one structured JSON log line per request, Prometheus metrics and proxy trust.

``init_app(app)`` wires everything into a Flask app; the API calls ``record_move`` and
``record_cas_conflict`` where those events happen. Metrics work under several gunicorn workers:
when ``PROMETHEUS_MULTIPROC_DIR`` is set *before* ``prometheus_client`` is imported (the gunicorn
config does it), every worker writes its own mmap file and ``/metrics`` sums them all, so whichever
worker answers the scrape reports the whole instance.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from enum import StrEnum
from http import HTTPMethod
from typing import Any

import orjson
import redis
from flask import Flask, Request, Response, g, has_request_context, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from werkzeug.middleware.proxy_fix import ProxyFix

from service.frameworks import prometheus as prometheus_files

from .config import Settings
from .store_access import store

REQUEST_ID_HEADER = "X-Request-ID"
# A caller's id is logged verbatim, so only a safe, bounded alphabet is accepted (no log injection).
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")
# Every label takes values from a fixed, small set: a client choosing a label value could create
# series without end (each one kept by every worker until restart). Unmatched paths share one
# label, and so do methods the API does not serve.
_UNMATCHED = "<unmatched>"
_METHOD_LABELS = frozenset(
    {HTTPMethod.GET, HTTPMethod.POST, HTTPMethod.PUT, HTTPMethod.HEAD, HTTPMethod.OPTIONS}
)
_OTHER_METHOD = "other"
# "/games/<string:game_id>" is labelled "/games/<game_id>": converters are noise in dashboards.
_CONVERTER_RE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")

REQUESTS = Counter(
    "http_requests_total",
    "HTTP requests answered, per method, endpoint template and status.",
    ["method", "endpoint", "status"],
)
LATENCY = Histogram(
    "http_request_duration_seconds",
    "Time spent in the app per request (excludes queueing in gunicorn/nginx).",
    ["method", "endpoint", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
MOVES = Counter(
    "game_moves_applied_total", "Game actions applied and stored, per action.", ["action"]
)
CAS_CONFLICTS = Counter(
    "game_cas_conflicts_total",
    "Compare-and-set saves refused because another request changed the game first.",
)

# Set from the store's memory sample (at most one INFO per few seconds per process), on scrape.
REDIS_MEMORY_USED = Gauge(
    "redis_memory_used_bytes",
    "Redis used_memory per master, as last sampled.",
    ["node"],
    multiprocess_mode="mostrecent",
)
REDIS_MEMORY_MAX = Gauge(
    "redis_memory_max_bytes",
    "Redis maxmemory per master (0: no limit).",
    ["node"],
    multiprocess_mode="mostrecent",
)


class StreamKind(StrEnum):
    """How a reader of ``GET .../events`` waits: the ``kind`` label of :data:`OPEN_STREAMS`."""

    SSE = "sse"
    NDJSON = "ndjson"
    LONG_POLL = "long-poll"


#: The ``pool`` label: the gunicorn pool serving (gunicorn.conf.py accepts these two only), so a
#: dashboard tells the streams pool's readers from those an API pool holds (no nginx in front).
POOL_LABEL = "streams" if os.environ.get("GUNICORN_POOL") == "streams" else "api"

# livesum: the sum over the workers alive, so a worker that died (its streams cut) drops out at
# once (gunicorn.conf.py's child_exit marks it dead) instead of counting its streams for ever.
OPEN_STREAMS = Gauge(
    "open_streams",
    "Streams and long-polls of GET .../events open now, per kind and gunicorn pool.",
    ["kind", "pool"],
    multiprocess_mode="livesum",
)

access_log = logging.getLogger("service.access")
service_log = logging.getLogger("service")
log = logging.getLogger(__name__)


def record_move(action: str | None = None) -> None:
    """Count one applied (and stored) action. Without ``action``, the label is the route's last
    segment (``play``, ``draw``, ``mark``, ``end-turn``, ``moves``, ``deal``)."""
    if action is None:
        rule = request.url_rule if has_request_context() else None
        action = _last_segment(rule.rule if rule is not None else "")
    _moves(action).inc()


@functools.lru_cache(maxsize=64)
def _last_segment(rule: str) -> str:
    return rule.rstrip("/").rsplit("/", 1)[-1] or "unknown"


@functools.lru_cache(maxsize=64)
def _moves(action: str) -> Any:
    """The move counter of one action, looked up once (as :func:`_series`)."""
    return MOVES.labels(action=action)


def record_cas_conflict() -> None:
    """Count one compare-and-set refused because the stored version had moved on."""
    CAS_CONFLICTS.inc()


@contextmanager
def stream_open(kind: StreamKind) -> Iterator[None]:
    """Count one open stream (or long-poll) of ``kind`` while the block runs."""
    gauge = _open_streams(kind)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()


@functools.lru_cache(maxsize=8)
def _open_streams(kind: StreamKind) -> Any:
    return OPEN_STREAMS.labels(kind=kind.value, pool=POOL_LABEL)


def multiprocess_enabled() -> bool:
    return bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))


def metrics_payload() -> bytes:
    """The exposition text: every worker's values summed in multiprocess mode, else this process."""
    if multiprocess_enabled():
        return prometheus_files.collect(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    return bytes(generate_latest(REGISTRY))


def _sample_redis_memory() -> None:
    """Refresh the memory gauges; a scrape still answers while Redis does not."""
    try:
        usage = store().memory.usage()
    except redis.RedisError as exc:
        log.warning("redis memory not sampled: %s", exc)
        return
    for u in usage:
        REDIS_MEMORY_USED.labels(node=u.node).set(u.used)
        REDIS_MEMORY_MAX.labels(node=u.node).set(u.limit)


def _metrics_view() -> Response:
    _sample_redis_memory()
    return Response(metrics_payload(), mimetype=None, content_type=CONTENT_TYPE_LATEST)


def _request_id(given: str | None) -> str:
    if given and _REQUEST_ID_RE.fullmatch(given):
        return given
    # Unique, not secret: the random module's generator (reseeded in each forked worker) costs
    # no system call, as os.urandom does on every request.
    return f"{random.getrandbits(128):032x}"


_REQUEST_ID_ENVIRON = "HTTP_" + REQUEST_ID_HEADER.upper().replace("-", "_")


def _before() -> None:
    state = g._get_current_object()  # one context look-up instead of one per attribute
    state.request_started = time.perf_counter()
    state.request_id = _request_id(request.environ.get(_REQUEST_ID_ENVIRON))


def _game_id(req: Request, response: Response) -> str | None:
    args = req.view_args or {}
    for key in ("game_id", "id"):
        value = args.get(key)
        if value is not None:
            return str(value)
    # A create answers 201 with Location .../games/<id>: log the id it made (a new player's
    # Location names no game).
    location = response.headers.get("Location")
    if location and response.status_code == 201 and "/games/" in location:
        return location.rstrip("/").rsplit("/", 1)[-1]
    return None


@functools.lru_cache(maxsize=256)
def _template(rule: str) -> str:
    return _CONVERTER_RE.sub(r"<\1>", rule)


def method_label(method: str) -> str:
    """The request's method as a metrics label: one of a fixed few, ``other`` for the rest."""
    return method if method in _METHOD_LABELS else _OTHER_METHOD


@functools.lru_cache(maxsize=1024)
def _series(method: str, endpoint: str, status: int) -> tuple[Any, Any]:
    """The request counter and latency histogram of one label set. ``labels()`` checks and
    locks on every call; the label sets are few and fixed (see above), so each is looked up
    once per process."""
    labels = {"method": method, "endpoint": endpoint, "status": str(status)}
    return REQUESTS.labels(**labels), LATENCY.labels(**labels)


def _after(response: Response) -> Response:
    req: Request = request._get_current_object()  # type: ignore[attr-defined]
    state = g._get_current_object()
    started = getattr(state, "request_started", None)
    request_id = getattr(state, "request_id", None) or _request_id(None)
    response.headers[REQUEST_ID_HEADER] = request_id
    duration = time.perf_counter() - started if started is not None else 0.0
    rule = req.url_rule
    endpoint = _template(rule.rule) if rule is not None else _UNMATCHED
    status = response.status_code
    method = method_label(req.method)
    count, latency = _series(method, endpoint, status)
    count.inc()
    latency.observe(duration)
    if access_log.isEnabledFor(logging.INFO):
        line: dict[str, Any] = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "level": "info",
            "event": "request",
            "method": method,
            "path": endpoint,
            "status": status,
            "duration_ms": round(duration * 1000.0, 3),
            "request_id": request_id,
            "game_id": _game_id(req, response),
            "remote_addr": req.remote_addr,
            "pid": os.getpid(),
        }
        access_log.info(orjson.dumps(line).decode())
    return response


class _MessageOnly(logging.Formatter):
    """The message is already a JSON document: print it alone, one line per record."""

    def format(self, record: logging.LogRecord) -> str:
        return record.getMessage()


class _JsonRecord(logging.Formatter):
    """Any other record of the service as one JSON line, as the request lines are, so one
    collector parses every line: its time, level and logger, and the request id of the request
    it happened in (the one its request line and nginx's carry)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "event": "log",
            "logger": record.name,
            "message": record.getMessage(),
            "pid": os.getpid(),
        }
        if has_request_context():
            request_id = getattr(g, "request_id", None)
            if request_id is not None:
                line["request_id"] = request_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode()


def configure_service_log(level: str) -> None:
    """The service's own log records (``service.*``; the request lines have their own handler)
    as JSON lines on stderr. Warnings and errors only, unless ``level`` is ``debug``: the info
    records are per stream and per request (a stream waiting for Redis says so each time it
    tries), thousands a second through a Redis outage."""
    service_log.setLevel(logging.DEBUG if level == "debug" else logging.WARNING)
    if not any(isinstance(h.formatter, _JsonRecord) for h in service_log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_JsonRecord())
        service_log.addHandler(handler)


def configure_access_log(enabled: bool = True) -> None:
    """One JSON line per request on stderr (collected by gunicorn, docker and kubectl logs)."""
    access_log.propagate = False
    access_log.setLevel(logging.INFO if enabled else logging.WARNING)
    if not access_log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_MessageOnly())
        access_log.addHandler(handler)


def init_app(app: Flask, settings: Settings) -> None:
    """Request ids, access log, metrics at ``/metrics`` and ProxyFix, as ``settings`` say.

    ``trusted_proxies`` is how many proxies in front of us set ``X-Forwarded-For/Proto/Host``;
    0 trusts none. ``access_log`` turns the per-request JSON line on or off.
    """
    trusted = settings.trusted_proxies
    if trusted > 0:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=trusted, x_proto=trusted, x_host=trusted
        )
    configure_access_log(settings.access_log)
    # First of all before_request hooks: a request another hook refuses (415, 429...) is still
    # timed and carries its request id.
    app.before_request_funcs.setdefault(None, []).insert(0, _before)
    app.after_request(_after)
    app.add_url_rule("/metrics", "metrics", _metrics_view, methods=["GET"])
