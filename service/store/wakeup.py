"""The wake-up message of an applied change (published by the compare-and-set script).

``"<game id> <version> "`` then each of the change's log records as ``<length>:<bytes>``: the
records of versions ``version - len(records) + 1 .. version``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wakeup:
    game_id: str
    version: int
    records: list[bytes]

    @property
    def first(self) -> int:
        """The version of the first record carried."""
        return self.version - len(self.records) + 1


def parse_wakeup(data: bytes) -> Wakeup | None:
    """The message's parts, or None for one this process cannot read (it is only a wake-up:
    the readers' next look at the log or the ticker catches what it said)."""
    parts = data.split(b" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        return None
    # "<id> <version>" alone (no records) is what an older compare-and-set script published:
    # readers then learn only that the game moved on, as from a lost message.
    records = _records(parts[2]) if len(parts) == 3 else []
    if records is None:
        return None
    return Wakeup(parts[0].decode(errors="replace"), int(parts[1]), records)


def _records(data: bytes) -> list[bytes] | None:
    records, pos = [], 0
    while pos < len(data):
        colon = data.find(b":", pos)
        if colon < 0 or not data[pos:colon].isdigit():
            return None
        end = colon + 1 + int(data[pos:colon])
        if end > len(data):
            return None
        records.append(data[colon + 1 : end])
        pos = end
    return records
