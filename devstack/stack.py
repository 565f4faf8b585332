"""Whole stacks on loopback, as deployed, for the tests and the benchmarks.

- :func:`build_stack`: the production topology of ``deploy/``: Redis with its append-only file,
  two API instances and two streams instances, the background worker, nginx in front.
- :func:`run_stack`: ``make run``'s topology on a given Redis: one API pool, one streams pool,
  the worker, nginx.

nginx is installed from Debian when missing and possible; a caller that may run where it cannot
be (a test) checks first (``tests/e2e/nginx.py``'s ``ensure_nginx``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from devstack.gunicorn import Gunicorn
from devstack.nginx import Nginx, install_nginx
from devstack.redis_server import RedisServer, free_port
from devstack.worker import worker

#: make run's API pool: 3 workers of 2 threads (the fault tests' 4 clients and a prober).
RUN_API_WORKERS = 3


@dataclass
class Stack:
    redis: RedisServer
    instances: list[Gunicorn]
    nginx: Nginx
    streams: list[Gunicorn]

    @property
    def url(self) -> str:
        return self.nginx.url


def nginx_binary() -> str:
    found = install_nginx()
    if found is None:
        raise RuntimeError("nginx is missing and cannot be installed here (needs root, apt-get)")
    return found


@contextmanager
def build_stack(workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[Stack]:
    """Redis (AOF on, as in docker-compose), two API instances and two streams instances
    (``GUNICORN_POOL=streams``) with ``env`` added, the background worker, nginx."""
    common = {"TRUSTED_PROXIES": "1", "GRACEFUL_TIMEOUT": "5", **(env or {})}
    with RedisServer(persist=True, data_dir=str(workdir / "redis")) as redis:
        instances = [
            Gunicorn.instance(redis.url, workdir / f"app{i}.log", workers=2, env=common)
            for i in (1, 2)
        ]
        streams_env = {**common, "STREAM_WORKERS": "1"}
        streams = [
            Gunicorn.instance(
                redis.url, workdir / f"streams{i}.log", workers=1, pool="streams", env=streams_env
            )
            for i in (1, 2)
        ]
        try:
            for instance in instances + streams:
                instance.start()
            with (
                worker({**common, "REDIS_URL": redis.url}, workdir / "worker.log"),
                Nginx(
                    nginx_binary(),
                    [i.port for i in instances],
                    free_port(),
                    workdir / "nginx",
                    streams_ports=[i.port for i in streams],
                ) as nginx,
            ):
                yield Stack(redis, instances, nginx, streams)
        finally:
            for instance in instances + streams:
                instance.stop()


@contextmanager
def run_stack(redis_url: str, workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``make run``'s topology on ``redis_url``: one API pool (gthread), one streams pool
    (gevent), the background worker, nginx in front; yields nginx's URL."""
    api = Gunicorn.instance(redis_url, workdir / "api.log", workers=RUN_API_WORKERS, env=env)
    streams = Gunicorn.instance(
        redis_url, workdir / "streams.log", workers=1, pool="streams", env=env
    )
    try:
        api.start()
        streams.start()
        with (
            worker({**(env or {}), "REDIS_URL": redis_url}, workdir / "worker.log"),
            Nginx(
                nginx_binary(),
                [api.port],
                free_port(),
                workdir / "nginx",
                streams_ports=[streams.port],
            ) as nginx,
        ):
            yield nginx.url
    finally:
        api.stop()
        streams.stop()
