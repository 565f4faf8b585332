"""The service as ``make run`` serves it, for the web table's tests: nginx in front of an API
pool (gthread) and a streams pool (gevent) that holds the events streams; either pool can be
stopped and started again on its port (the streams pool to cut every open stream, the API pool
to take the server away)."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from types import TracebackType

from devstack.gunicorn import start_gunicorn
from devstack.redis_server import free_port
from tests.e2e.nginx import Nginx

# A stopping streams pool would otherwise wait its whole graceful timeout for open streams.
STREAMS_ENV = {"GUNICORN_POOL": "streams", "STREAM_WORKERS": "1", "GRACEFUL_TIMEOUT": "1"}


class TableStack:
    """``env``: settings of both pools beside the defaults (e.g. ``RATE_LIMIT_PER_MINUTE``)."""

    def __init__(self, redis_url: str, workdir: Path, env: Mapping[str, str] | None = None) -> None:
        self.redis_url = redis_url
        self.workdir = workdir
        self.env = dict(env or {})
        self.api_port = free_port()
        self.streams_port = free_port()
        self.stack = ExitStack()
        self.api: AbstractContextManager[str] | None = None
        self.streams: AbstractContextManager[str] | None = None
        self.url = ""

    def __enter__(self) -> TableStack:
        self.start_api()
        self.stack.callback(self.stop_api)
        self.start_streams()
        self.stack.callback(self.stop_streams)
        nginx = Nginx([self.api_port], free_port(), self.workdir, [self.streams_port])
        self.url = self.stack.enter_context(nginx).url
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stack.close()

    def start_api(self) -> None:
        """The API pool (with the worker beside it) on its port, as at the start."""
        self.api = start_gunicorn(self.redis_url, port=self.api_port, workers=2, env=self.env)
        self.api.__enter__()

    def stop_api(self) -> None:
        """Stop the API pool: nginx answers every API request 503 until it is started again."""
        if self.api is not None:
            self.api.__exit__(None, None, None)
            self.api = None

    def start_streams(self) -> None:
        self.streams = start_gunicorn(
            self.redis_url, port=self.streams_port, workers=1, env={**self.env, **STREAMS_ENV}
        )
        self.streams.__enter__()

    def stop_streams(self) -> None:
        if self.streams is not None:
            self.streams.__exit__(None, None, None)
            self.streams = None
