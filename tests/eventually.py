"""Waiting on a condition in a test: polled with a deadline, never a fixed sleep that a loaded
machine could outrun."""

from __future__ import annotations

import time
from collections.abc import Callable


def eventually(holds: Callable[[], bool], seconds: float, why: str) -> None:
    """Return once ``holds()`` is true; fail with ``why`` after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not holds():
        assert time.monotonic() < deadline, why
        time.sleep(0.1)
