"""Presence: when each seat of a game was last seen, by a request or an open stream.

``mt:{<id>}:presence`` hash (the game's slot): ``r<seat>`` the time of the seat's last request,
``t<seat>:<stream>`` the last heartbeat of each open stream of the seat (its field is dropped
when the stream closes; one a dead process left behind ages out after ``STREAM_STALE_MS``). A
seat is present while its last request is within the window, or while it has an open stream.
The hash lives a day after its last write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import redis
from redis.cluster import RedisCluster

from . import keys

#: How long the hash outlives its last write (a game nobody visits needs none).
KEEP_SECONDS = 24 * 3600
#: An open stream beats at least every 20 s (after a message, at most every 10 s, and a quiet
#: stream sends a keep-alive every 10 s): a beat older than this is a dead process's.
STREAM_STALE_MS = 45_000


def request_field(seat: int) -> str:
    """The field that holds the time of ``seat``'s last request (``scripts.MARK_SEAT_SEEN``
    names it the same way in Lua, where the seat is found)."""
    return f"r{seat}"


class Presence:
    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client

    def seen(self, game_id: str, seat: int, now_ms: int) -> None:
        """The seat made a request (a stored change marks it with the change instead)."""
        self._write(game_id, request_field(seat), now_ms)

    def streaming(self, game_id: str, seat: int, stream_id: str, now_ms: int) -> None:
        """A stream of the seat is open (at its opening, and at each keep-alive)."""
        self._write(game_id, f"t{seat}:{stream_id}", now_ms)

    def closed(self, game_id: str, seat: int, stream_id: str) -> None:
        self.client.hdel(keys.presence_key(game_id), f"t{seat}:{stream_id}")

    def _write(self, game_id: str, field: str, now_ms: int) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(keys.presence_key(game_id), field, now_ms)
        pipe.expire(keys.presence_key(game_id), KEEP_SECONDS)
        pipe.execute()

    def of_games(self, game_ids: Sequence[str]) -> list[dict[bytes, bytes]]:
        """Each game's presence hash, in one round trip per node."""
        pipe = self.client.pipeline(transaction=False)
        for game_id in game_ids:
            pipe.hgetall(keys.presence_key(game_id))
        return cast("list[dict[bytes, bytes]]", pipe.execute())


def present_seats(
    fields: dict[bytes, bytes], seats: int, now_ms: int, window_ms: int
) -> list[bool]:
    """Which of ``seats`` seats made a request within ``window_ms`` or hold an open stream
    (``fields`` of a presence hash)."""
    present = [False] * seats
    for name, value in fields.items():
        seat = int(name[1:].split(b":", 1)[0]) if name[:1] in (b"r", b"t") else -1
        within = STREAM_STALE_MS if name[:1] == b"t" else window_ms
        if 0 <= seat < seats and now_ms - int(value) < within:
            present[seat] = True
    return present
