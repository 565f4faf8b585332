"""``with Server(...) as s:`` for the wrappers around child processes (Redis, gunicorn, nginx)."""

from __future__ import annotations

from types import TracebackType
from typing import Self


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
