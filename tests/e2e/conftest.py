"""The production topology on loopback: Redis, two gunicorn instances, nginx (deploy/nginx.conf)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from service.launch.redis_server import RedisServer, free_port
from tests.e2e.instances import Instance
from tests.e2e.nginx import Nginx, ensure_nginx


@dataclass
class Stack:
    redis: RedisServer
    instances: list[Instance]
    nginx: Nginx
    streams: list[Instance]

    @property
    def url(self) -> str:
        return self.nginx.url


@contextmanager
def build_stack(workdir: Path, env: Mapping[str, str] | None = None) -> Iterator[Stack]:
    """Redis (AOF on, as in docker-compose), two API instances and two streams instances
    (``GUNICORN_POOL=streams``) with ``env`` added, nginx."""
    common = {"TRUSTED_PROXIES": "1", "GRACEFUL_TIMEOUT": "5", **(env or {})}
    with RedisServer(persist=True, data_dir=str(workdir / "redis")) as redis:
        instances = [
            Instance(redis.url, workdir / f"app{i}.log", workers=2, env=common) for i in (1, 2)
        ]
        streams = [
            Instance(
                redis.url,
                workdir / f"streams{i}.log",
                workers=1,
                env={**common, "GUNICORN_POOL": "streams", "STREAM_WORKERS": "1"},
            )
            for i in (1, 2)
        ]
        try:
            for instance in instances + streams:
                instance.start()
            with Nginx(
                [i.port for i in instances],
                free_port(),
                workdir / "nginx",
                streams_ports=[i.port for i in streams],
            ) as nginx:
                yield Stack(redis, instances, nginx, streams)
        finally:
            for instance in instances + streams:
                instance.stop()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    ensure_nginx()
    with build_stack(tmp_path_factory.mktemp("e2e")) as built:
        yield built
