"""The lobby: public tables with open seats, and the seek buckets that quick play fills.

- ``mt:{lobby}:tables`` sorted set: public tables with open seats, by creation time (a table
  leaves once full; one that expired is dropped when a listing meets it).
- ``mt:{seek:<digest of the bucket>}:order`` and ``:claims``: the tables made by seeks of one
  bucket (preset, player count, turn clock, rated), oldest first, and the seats claimed on each.
  A seat is claimed by one script (``CLAIM_SEEK_SEAT``), so seeks on any number of instances
  are served one after another, and a table never has more seekers than seats.
"""

from __future__ import annotations

from typing import cast

import redis
from redis.cluster import RedisCluster

from . import keys, scripts

#: The most tables a lobby listing returns.
MAX_LISTED = 100


class Lobby:
    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self._claim = client.register_script(scripts.CLAIM_SEEK_SEAT)
        self._close = client.register_script(scripts.CLOSE_SEEK_TABLE)
        self._forget = client.register_script(scripts.FORGET_SEEKER)
        self._give_back = client.register_script(scripts.GIVE_BACK_SEAT)
        self._reopen = client.register_script(scripts.REOPEN_SEEK_TABLE)

    def page(self, below: float | None, skip: int, count: int) -> list[tuple[str, float]]:
        """Listed tables and their listing times, newest first: ``count`` at most of those
        listed at ``below`` or before (every one: None), after the ``skip`` newest of them."""
        top: float | str = "+inf" if below is None else below
        found = cast(
            "list[tuple[bytes, float]]",
            self.client.zrevrangebyscore(
                keys.LOBBY, top, "-inf", start=skip, num=count, withscores=True
            ),
        )
        return [(raw.decode(), score) for raw, score in found]

    def add(self, game_id: str, created_ms: int) -> None:
        self.client.zadd(keys.LOBBY, {game_id: created_ms})

    def remove(self, *game_ids: str) -> None:
        if game_ids:
            self.client.zrem(keys.LOBBY, *game_ids)

    def claim(
        self, bucket: str, fresh_id: str, seats: int, now_ms: int, player: str | None = None
    ) -> tuple[str, int, bool]:
        """The next seeker's table and seat in ``bucket``; ``True`` when the table is new (the
        seeker makes it, as ``fresh_id``). Seat -1: that table seats ``player`` already."""
        game, seat, created = self._claim(
            keys=list(keys.seek_keys(bucket)), args=[fresh_id, seats, now_ms, player or ""]
        )
        return (game.decode() if isinstance(game, bytes) else str(game)), int(seat), bool(created)

    def forget(self, bucket: str, game_id: str, player: str | None) -> None:
        """The seek of ``player`` did not take the seat it was given at ``game_id``: it may be
        given one there again."""
        if player is not None:
            self._forget(keys=list(keys.seek_keys(bucket)), args=[game_id, player])

    def give_back(self, bucket: str, game_id: str) -> bool:
        """A seat claimed at ``game_id`` was not taken (the seek failed): the next seek of
        the bucket may have it, unless the table was closed meanwhile."""
        return bool(self._give_back(keys=list(keys.seek_keys(bucket)), args=[game_id]))

    def reopen(self, bucket: str, game_id: str, taken: int) -> bool:
        """A seat of a table that left its bucket full is open again: the table is back, first
        in line, with ``taken`` seats counted as claimed. A table still in its bucket keeps its
        count (seekers may hold claims there not yet taken). Whether it came back."""
        names = list(keys.seek_keys(bucket))
        return bool(self._reopen(keys=names, args=[game_id, taken]))

    def close(self, bucket: str, game_id: str) -> int:
        """Take the table out of its bucket; the seats seekers claimed on it."""
        return int(self._close(keys=list(keys.seek_keys(bucket)), args=[game_id]))
