"""Finished games' histories, rendered once per process.

A history is the whole log replayed and rendered: 13 ms of CPU and 210 KB for each thousand
entries, where the game's view costs 2 ms. Once a game is over anyone may read it, with no
token and so no limit but the proxy's per-address rate, and it changes only if a rematch
entry is appended (which moves the version). So the bytes are kept by game and version, within
a budget of bytes per process; the first read of each still renders it.
"""

from __future__ import annotations

import threading

#: The most bytes of rendered histories a process keeps: a game at the log's cap renders about
#: 11 MB; a standard four-player game a few hundred KB.
KEEP_BYTES = 32 * 1024 * 1024


class Histories:
    """Rendered histories by (game, version), the oldest forgotten past ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._kept: dict[tuple[str, int], bytes] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, game_id: str, version: int) -> bytes | None:
        return self._kept.get((game_id, version))

    def put(self, game_id: str, version: int, body: bytes) -> None:
        if len(body) > self.limit:
            return
        with self._lock:
            if (game_id, version) in self._kept:
                return
            self._kept[(game_id, version)] = body
            self._bytes += len(body)
            while self._bytes > self.limit:
                oldest = next(iter(self._kept))
                self._bytes -= len(self._kept.pop(oldest))


FINISHED = Histories(KEEP_BYTES)
