"""A bounded, thread-safe memory of recent values, one per key: the per-process caches of the
hot path (decoded states and tables, known records, valid bodies) each keep one."""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class Remembered(Generic[K, V]):
    """At most ``size`` values; putting one past that forgets the one put longest ago."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: dict[K, V] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        return self._values.get(key)

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values.pop(key, None)  # a value put again counts as the newest
            if len(self._values) >= self.size:
                del self._values[next(iter(self._values))]
            self._values[key] = value
