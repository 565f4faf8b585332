"""``with Server(...) as s:`` for the wrappers around child processes (Redis, gunicorn, nginx),
and the wait for such a child to answer."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

import requests


class Managed:
    """Start on entering a ``with`` block, stop on leaving it, whatever happened inside."""

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def wait_until(
    ready: Callable[[], bool],
    *,
    alive: Callable[[], bool],
    timeout: float,
    interval: float,
    what: str,
    exited: Callable[[], str],
) -> None:
    """Poll ``ready`` every ``interval`` s until it holds, so a launcher never hangs on a child
    that died or never answers: RuntimeError naming ``what`` once ``alive`` fails (with
    ``exited()``, e.g. the child's stderr, as the reason) or ``timeout`` s pass."""
    deadline = time.monotonic() + timeout
    while alive():
        if ready():
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not answer in time ({timeout:g} s)")
        time.sleep(interval)
    raise RuntimeError(f"{what} exited: {exited()}")


def answers(url: str, *, status: int | None = None) -> bool:
    """Whether ``url`` answers at all (with ``status``, when given) within a second."""
    try:
        code = requests.get(url, timeout=1).status_code
    except requests.RequestException:
        return False
    return status is None or code == status
