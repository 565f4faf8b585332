"""The service's shortcuts past redis-py's client layers, and the healing they keep.

Both exist for speed on the hot path (docs/design.md, "Hot path", has the counts):

- :class:`LeanPool` is redis-py's :class:`~redis.BlockingConnectionPool` without its
  per-checkout bookkeeping for OpenTelemetry and server maintenance notifications, neither of
  which this service uses.
- :class:`Direct` sends a single command on a pooled connection, past
  ``Redis.execute_command``'s layers (retry object, recorders, argument checks).

A third, :class:`ShardedPubSub`, is for correctness, not speed: redis-py's pub/sub renews its
sharded subscriptions after a reconnection with one SSUBSCRIBE naming them all, which a cluster
node refuses (CROSSSLOT) when they hash to several slots; it renews them one slot at a time.

None may be less resilient than redis-py: a checked-out connection that Redis closed (a
restart, ``CLIENT KILL``, a proxy's idle timeout) is reconnected before use exactly as
redis-py's pool does, and a command that meets a broken connection is sent once more on a fresh
one, as redis-py's client does with :data:`RETRY`. A write (:meth:`Direct.write`, the
compare-and-set) is sent once more only if it never left: once sent, a broken connection may
have taken its reply after Redis ran it, and sent again it would find its own change and answer
that another came first. It raises :class:`ReplyLost` instead, and its caller looks at what is
stored, as after a timeout. A timeout is never retried: a Redis that hangs must cost a request
one ``socket_timeout``, not two. ``tests/frameworks/test_redis_py.py`` holds both to redis-py's
own answers, under connection loss too.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import defaultdict
from queue import Empty, Full
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.client import PubSub
from redis.cluster import RedisCluster
from redis.crc import key_slot
from redis.exceptions import AskError, MovedError, NoScriptError, RedisError, ResponseError
from redis.retry import Retry

EncodableArg = bytes | str | int | float

#: One more try, at once, after a connection error; never after a timeout (see the module doc).
RETRIED_ERRORS: tuple[type[Exception], ...] = (redis.ConnectionError,)
RETRY = Retry(NoBackoff(), 1, supported_errors=RETRIED_ERRORS)

# On a cluster a write is acknowledged once a replica holds it too (or after WAIT_MS when none
# answers, rather than failing a write that was made): replication is asynchronous, and a master
# killed right after answering would otherwise take an acknowledged move with it.
REPLICAS_TO_WAIT = 1
WAIT_MS = 200
#: Redirections (MOVED, ASK) a write follows before their error is raised, as redis-py's
#: cluster client does (its ``RedisClusterRequestTTL``).
REDIRECTS = 16


class PoolExhausted(redis.ConnectionError):
    """Every pooled connection stayed busy for the pool's timeout: nothing was sent, and trying
    again at once would only wait as long once more."""


class ReplyLost(redis.ConnectionError):
    """The connection broke between sending the command and reading its reply: Redis may have
    run it. A write is never sent again after it."""


class LeanPool(redis.BlockingConnectionPool):
    """redis-py's blocking pool less its telemetry and maintenance bookkeeping. Waiting,
    connecting, the check that a pooled connection is ready (no stray reply, not closed by the
    server) with its reconnection, and fork safety are redis-py's, step for step."""

    def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        self._checkpid()
        try:
            connection = self.pool.get(block=True, timeout=self.timeout)
        except Empty:
            raise PoolExhausted("No connection available.") from None
        if connection is None:
            connection = self.make_connection()  # type: ignore[no-untyped-call]
        try:
            connection.connect()
            _ensure_ready(connection)
        except BaseException:
            self.release(connection)
            raise
        return connection

    def release(self, connection: Any) -> None:
        self._checkpid()
        if not self.owns_connection(connection):  # made before a fork
            connection.disconnect()
            self.pool.put_nowait(None)
            return
        with contextlib.suppress(Full):
            self.pool.put_nowait(connection)


def _ensure_ready(connection: Any) -> None:
    """A connected connection with nothing to read; one that has data or fails the check (the
    server closed it) is reconnected once, as ``BlockingConnectionPool.get_connection`` does."""
    try:
        if connection.can_read():
            raise redis.ConnectionError("Connection has data")
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        connection.disconnect()
        connection.connect()
        if connection.can_read():
            raise redis.ConnectionError("Connection not ready") from None


class Direct:
    """Sends single commands of one client; thread- and greenlet-safe as its pool is."""

    def __init__(self, client: redis.Redis | RedisCluster) -> None:
        self.client = client
        self.pool: redis.ConnectionPool | None = (
            None if isinstance(client, RedisCluster) else client.connection_pool
        )

    def execute(self, *args: EncodableArg) -> Any:
        """The raw reply of one command (a Redis error reply raises ResponseError)."""
        return self._execute(args, resend=True)

    def _execute(self, args: tuple[EncodableArg, ...], *, resend: bool) -> Any:
        """``resend``: a command whose reply got lost is sent again (a read's)."""
        if self.pool is None:
            return self.client.execute_command(*args)  # type: ignore[no-untyped-call]
        try:
            return self._send(self.pool, args)
        except PoolExhausted:
            raise
        except ReplyLost:
            if not resend:
                raise
            return self._send(self.pool, args)
        except RETRIED_ERRORS:
            return self._send(self.pool, args)  # never sent: the broken connection was dropped

    @staticmethod
    def _send(pool: redis.ConnectionPool, args: tuple[EncodableArg, ...]) -> Any:
        conn: Any = pool.get_connection()
        sent = False
        try:
            conn.send_command(*args)
            sent = True
            return conn.read_response()
        except ResponseError:
            raise  # the reply was read whole: the connection stays usable
        except RETRIED_ERRORS as err:
            conn.disconnect()
            if sent:
                raise ReplyLost(str(err)) from err
            raise
        except BaseException:
            # A timeout or a broken socket leaves an unknown reply on the wire: never reuse it.
            conn.disconnect()
            raise
        finally:
            pool.release(conn)

    def write(self, key: str, *args: EncodableArg) -> Any:
        """A command that writes ``key``: :meth:`execute` without sending it again once sent,
        and on a cluster, on the key's master, followed by WAIT on the same connection when the
        master has a replica (else WAIT would sit out WAIT_MS). The cluster client's own path
        is not used, redirections included: it sends a command again after any connection
        error or timeout."""
        if not isinstance(self.client, RedisCluster):
            return self._execute(args, resend=False)
        wait = self.client.get_node_from_key(key, replica=True) is not None  # type: ignore[no-untyped-call]
        reply = self._write_on_master(key, args, wait)
        for _ in range(REDIRECTS):
            if not isinstance(reply, AskError):  # MovedError is one too
                break
            # Not run there: sent where the redirection says, as redis-py's cluster client
            # does (MOVED: the slot map names its node from then on; ASK: the slot is being
            # moved, this key only is asked there, after ASKING).
            if isinstance(reply, MovedError):
                self.client.nodes_manager.move_slot(reply)
                reply = self._write_and_wait(key, args, wait)
            else:
                reply = self._write_and_wait(key, args, wait, ask=reply)
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    def _write_on_master(self, key: str, args: tuple[EncodableArg, ...], wait: bool) -> Any:
        """:meth:`_write_and_wait` on the master the slot map names, once more on the one it
        names after a connection error that left the command unsent."""
        try:
            return self._write_and_wait(key, args, wait)
        except ReplyLost:
            raise
        except RETRIED_ERRORS:
            return self._write_and_wait(key, args, wait)  # on the master the slot map names now

    def _write_and_wait(
        self,
        key: str,
        args: tuple[EncodableArg, ...],
        wait: bool,
        ask: AskError | None = None,
    ) -> Any:
        """The command's reply (an error reply returned), after WAIT if ``wait``, on the key's
        master, or after ASKING on the node an ASK redirection names; a connection that fails
        makes the slot map be read again before the error is raised."""
        assert isinstance(self.client, RedisCluster)
        node = self._node(key, ask)
        pool = self.client.get_redis_connection(node).connection_pool
        try:
            conn: Any = pool.get_connection()
        except (redis.ConnectionError, redis.TimeoutError):
            self._refresh()  # the master may be gone: learn who serves its slots now
            raise
        sent = False
        try:
            asking = [] if ask is None else [("ASKING",)]
            waits = [("WAIT", REPLICAS_TO_WAIT, WAIT_MS)] if wait else []
            # The write's bytes end this send: a send that fails left it incomplete (never
            # run); WAIT goes in a send of its own, once the write is known to have left.
            conn.send_packed_command(conn.pack_commands([*asking, args]))
            sent = True
            if waits:
                conn.send_packed_command(conn.pack_commands(waits))
            for _ in asking:
                _reply(conn)
            reply = _reply(conn)
            for _ in waits:
                _reply(conn)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            conn.disconnect()
            self._refresh()
            if sent and isinstance(err, redis.ConnectionError):
                raise ReplyLost(str(err)) from err
            raise
        except BaseException:
            conn.disconnect()
            raise
        finally:
            pool.release(conn)
        return reply

    def _node(self, key: str, ask: AskError | None) -> Any:
        """The key's master, or the node an ASK redirection names (its error is raised when
        the slot map does not know that node)."""
        assert isinstance(self.client, RedisCluster)
        if ask is None:
            return self.client.get_node_from_key(key)  # type: ignore[no-untyped-call]
        node = self.client.get_node(ask.host, ask.port)  # type: ignore[no-untyped-call]
        if node is None:
            raise ask
        return node

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


class ShardedPubSub(PubSub):
    """redis-py's pub/sub, renewing its sharded subscriptions after a reconnection one slot at
    a time (one SSUBSCRIBE naming channels of several slots is refused: CROSSSLOT)."""

    def _resubscribe_shard_channels(self) -> None:
        by_slot: defaultdict[int, dict[Any, Any]] = defaultdict(dict)
        for channel, handler in self.shard_channels.items():
            name = channel if isinstance(channel, bytes) else str(channel).encode()
            by_slot[key_slot(name)][channel] = handler
        for subscriptions in by_slot.values():
            self._resubscribe(subscriptions, self.ssubscribe)
