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

import contextlib
import hashlib
from typing import Any

import redis
from redis.cluster import RedisCluster
from redis.exceptions import AskError, MovedError, NoScriptError, RedisError, ResponseError

EncodableArg = bytes | str | int | float

# On a cluster a write is acknowledged once a replica holds it too (or after WAIT_MS when none
# answers, rather than failing a write that was made): replication is asynchronous, and a master
# killed right after answering would otherwise take an acknowledged move with it.
REPLICAS_TO_WAIT = 1
WAIT_MS = 200


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

    def write(self, key: str, *args: EncodableArg) -> Any:
        """A command that writes ``key``: :meth:`execute`, and on a cluster followed by WAIT on
        the same connection of the key's master."""
        if not isinstance(self.client, RedisCluster):
            return self.execute(*args)
        if self.client.get_node_from_key(key, replica=True) is None:  # type: ignore[no-untyped-call]
            return self.execute(*args)  # no replica to wait for (WAIT would sit out WAIT_MS)
        node = self.client.get_node_from_key(key)  # type: ignore[no-untyped-call]
        pool = self.client.get_redis_connection(node).connection_pool
        try:
            conn: Any = pool.get_connection()
        except (redis.ConnectionError, redis.TimeoutError):
            self._refresh()  # the master may be gone: learn who serves its slots now
            raise
        try:
            conn.send_packed_command(
                conn.pack_commands([args, ("WAIT", REPLICAS_TO_WAIT, WAIT_MS)])
            )
            reply, _ = _reply(conn), _reply(conn)
        except (redis.ConnectionError, redis.TimeoutError):
            conn.disconnect()
            self._refresh()
            raise
        except BaseException:
            conn.disconnect()
            raise
        finally:
            pool.release(conn)
        if isinstance(reply, MovedError | AskError):
            # Not run there (the slot moves): the cluster client's own path follows it.
            self._refresh()
            return self.client.execute_command(*args)  # type: ignore[no-untyped-call]
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    def _refresh(self) -> None:
        assert isinstance(self.client, RedisCluster)
        with contextlib.suppress(RedisError):
            self.client.nodes_manager.initialize()

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
            return self.direct.write(keys[0], "EVALSHA", self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return self.direct.write(keys[0], "EVAL", self.source, len(keys), *keys, *args)


def _reply(conn: Any) -> Any:
    """The next reply, an error reply returned rather than raised (the one after it must still
    be read off the connection)."""
    try:
        return conn.read_response()
    except ResponseError as err:
        return err
