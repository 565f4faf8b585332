"""The commands of every request (read a game, compare-and-set it) sent on a pooled
connection, past redis-py's per-command layers.

``Redis.execute_command`` wraps each command in layers this service does not use: a retry
object set to zero retries, observability recorders, argument-deprecation checks. Counted with
callgrind on this machine, an HGETALL of a game took 165k instructions that way and 117k sent on
a connection of the same pool (docs/design.md, "Hot path"). Everything that matters stays
redis-py's: the pool with its size and wait (:mod:`.connection`), connecting, the health check,
socket timeouts, RESP parsing and its errors. A cluster client keeps its own path, which routes
each command by its key.
"""

from __future__ import annotations

import hashlib
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError, ResponseError

EncodableArg = bytes | str | int | float


class Direct:
    """Sends single commands of one client; thread- and greenlet-safe as its pool is."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self.pool: redis.ConnectionPool | None = (
            None if isinstance(client, RedisCluster) else client.connection_pool
        )

    def execute(self, *args: EncodableArg) -> Any:
        """The raw reply of one command (a Redis error reply raises ResponseError)."""
        if self.pool is None:
            return self.client.execute_command(*args)  # type: ignore[no-untyped-call]
        conn: Any = self.pool.get_connection()
        try:
            conn.send_command(*args)
            return conn.read_response()
        except ResponseError:
            raise  # the reply was read whole: the connection stays usable
        except BaseException:
            # A timeout or a broken socket leaves an unknown reply on the wire: never reuse it.
            conn.disconnect()
            raise
        finally:
            self.pool.release(conn)

    def hgetall(self, key: str) -> dict[bytes, bytes]:
        reply = self.execute("HGETALL", key)
        if isinstance(reply, dict):  # RESP3
            return reply
        return dict(zip(reply[::2], reply[1::2], strict=True))


class Script:
    """A Lua script run with EVALSHA; loaded again when Redis does not know it (a restart, a
    failover, SCRIPT FLUSH): NOSCRIPT means nothing ran, so sending it again is safe."""

    def __init__(self, direct: Direct, source: str) -> None:
        self.direct = direct
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()

    def __call__(self, keys: list[str], args: list[Any]) -> Any:
        try:
            return self.direct.execute("EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return self.direct.execute("EVAL", self.source, len(keys), *keys, *args)
