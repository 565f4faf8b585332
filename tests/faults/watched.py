"""The stack of ``make run`` for fault tests (nginx, an API pool, a streams pool) on any Redis,
and SSE readers that record every entry they receive, repeats included."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests
from mexican_train_client.stream import Media, ends_game, entries_of

from tests.faults.load import Journal, Played


@dataclass
class Reader:
    """Every entry one SSE reader received, repeats included: resumed with Last-Event-ID
    after any break, as a browser's EventSource does, until the game's last entry."""

    url: str
    game_id: str
    got: list[int] = field(default_factory=list)
    error: str | None = None

    def run(self) -> None:
        deadline = time.monotonic() + 300
        try:
            while time.monotonic() < deadline:
                if self._connect():
                    return
                time.sleep(0.2)
            self.error = "no last entry within 300 s"
        except Exception as exc:  # reported by the test
            self.error = repr(exc)

    def _connect(self) -> bool:
        """One connection's entries; True once the game's last entry came."""
        headers = {"Accept": Media.SSE.value}
        if self.got:
            headers["Last-Event-ID"] = str(self.got[-1])
        try:
            with requests.get(
                f"{self.url}/api/v1/games/{self.game_id}/events",
                headers=headers,
                stream=True,
                timeout=(5, 30),
            ) as r:
                if r.status_code != 200:
                    return False
                for entry in entries_of(r.iter_lines(), Media.SSE):
                    self.got.append(int(entry["version"]))
                    if ends_game(entry):
                        return True
        except requests.RequestException:
            pass
        return False


class WatchedJournal(Journal):
    """The load's journal, starting one SSE reader per game as soon as it is created."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.readers: list[Reader] = []
        self.threads: list[threading.Thread] = []

    def hook(self, resp: requests.Response, *args: Any, **kwargs: Any) -> None:
        super().hook(resp, *args, **kwargs)
        if resp.request.method == "POST" and resp.status_code == 201:
            path = str(resp.request.path_url)
            if path == "/api/v1/games":
                self.watch(resp.json()["game_id"])

    def watch(self, game_id: str) -> None:
        reader = Reader(self.url, game_id)
        thread = threading.Thread(target=reader.run, daemon=True)
        with self.lock:
            self.readers.append(reader)
            self.threads.append(thread)
        thread.start()


def check_readers(journal: WatchedJournal, played: list[Played]) -> None:
    """Every reader got every entry of its game exactly once, in order."""
    for thread in journal.threads:
        thread.join(timeout=60)
    finals = {str(g.created["game_id"]): 1 + g.applied for g in played}
    assert len(journal.readers) == len(finals)
    for reader in journal.readers:
        assert reader.error is None, (reader.game_id, reader.error, reader.got[-5:])
        want = list(range(1, finals[reader.game_id] + 1))
        repeated = sorted({v for v in reader.got if reader.got.count(v) > 1})
        missing = sorted(set(want) - set(reader.got))
        assert reader.got == want, (reader.game_id, f"repeated {repeated}, missing {missing}")
