"""The lean pool and the direct command path on a real redis-server: the same replies as
redis-py's client, scripts reloaded after a flush, never a stale reply after a failure, and
the same healing as redis-py's own pool and client after connections die or Redis restarts."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis

from devstack.redis_server import RedisServer
from service.frameworks.redis_py import RETRY, Direct, LeanPool, PoolExhausted, Script
from service.store.connection import Limits, connect
from tests.faults.late_link import LateLink


@pytest.fixture()
def client(redis_server: RedisServer) -> redis.Redis:
    c = connect(redis_server.url, limits=Limits(pool_size=1, pool_timeout=0.2, socket_timeout=0.3))
    assert isinstance(c, redis.Redis)
    c.flushdb()
    return c


def test_replies_match_redis_py(client: redis.Redis) -> None:
    client.hset("h", mapping={"s": b"\x00\xff" * 300, "v": 7})
    direct = Direct(client)
    assert direct.hgetall("h") == client.hgetall("h") == {b"s": b"\x00\xff" * 300, b"v": b"7"}
    assert direct.hgetall("missing") == {}
    assert isinstance(client.connection_pool, LeanPool)


def test_script_runs_again_after_the_cache_is_flushed(client: redis.Redis) -> None:
    script = Script(Direct(client), "return redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])")
    assert script(keys=["n"], args=[10]) == 11
    client.script_flush()
    assert script(keys=["n"], args=[10]) == 12  # NOSCRIPT: sent whole, ran once
    assert client.get("n") == b"2"


def test_an_error_reply_leaves_the_connection_usable(client: redis.Redis) -> None:
    direct = Direct(client)
    client.set("s", b"x")
    with pytest.raises(redis.ResponseError):
        direct.execute("HGETALL", "s")  # WRONGTYPE
    assert direct.execute("GET", "s") == b"x"


def test_a_timed_out_reply_is_never_read_as_the_next_one(client: redis.Redis) -> None:
    direct = Direct(client)
    client.set("k", b"mine")
    with pytest.raises(redis.TimeoutError):
        direct.execute("BLPOP", "nothing", 1)  # answers after 1 s; the socket gives up at 0.3 s
    # The pool has one connection: had it been kept, this would read BLPOP's late nil.
    assert direct.execute("GET", "k") == b"mine"


def test_a_connection_left_with_a_reply_is_replaced(client: redis.Redis) -> None:
    pool = client.connection_pool
    conn = pool.get_connection()
    conn.send_command("PING")  # its reply is never read
    # Released once the reply is there: a check made before it arrives cannot see it (the
    # same in redis-py's own pool), and under load the reply can take a while.
    assert conn.can_read(timeout=5)
    pool.release(conn)
    client.set("k", b"v")  # same single connection: it must not read the PONG
    assert client.get("k") == b"v"


def test_a_busy_pool_fails_after_its_wait(client: redis.Redis) -> None:
    pool = client.connection_pool
    held = pool.get_connection()
    try:
        with pytest.raises(redis.ConnectionError, match="No connection available"):
            Direct(client).execute("PING")
    finally:
        pool.release(held)
    assert Direct(client).execute("PING") == b"PONG"


def test_threads_share_the_pool(redis_server: RedisServer) -> None:
    """Four threads on two connections, each thread's replies its own. The wait for a free
    connection is long here: on a busy machine a thread can wait past the service's quarter
    second for the GIL alone, and the pool's timeout is not what this test is about."""
    limits = Limits(pool_size=2, pool_timeout=10.0)
    direct, errors = Direct(connect(redis_server.url, limits=limits)), []

    def work(i: int) -> None:
        try:
            for n in range(200):
                direct.execute("SET", f"t{i}", n)
                assert direct.execute("GET", f"t{i}") == str(n).encode()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_prefilled_pool_opens_every_connection_named(redis_server: RedisServer) -> None:
    watch = redis.Redis.from_url(redis_server.url)

    def named() -> int:
        return sum(1 for c in watch.client_list() if c["name"] == "prefill-probe")

    before = named()
    limits = Limits(pool_size=3, prefill=True, client_name="prefill-probe")
    c = connect(redis_server.url, limits=limits)
    assert named() - before == 3
    for _ in range(20):
        assert c.ping()
    assert named() - before == 3
    c.connection_pool.disconnect()
    assert named() == before


def test_prefill_does_not_fail_a_start_without_redis() -> None:
    limits = Limits(pool_size=2, prefill=True, connect_timeout=0.1)
    c = connect("redis://127.0.0.1:1/0", limits=limits)  # nothing listens there
    with pytest.raises(redis.ConnectionError):
        c.ping()


# Healing: what redis-py's own pool and client do after the connections die, ours must do too.


def _lean_and_stock(url: str) -> list[redis.Redis]:
    """The service's client (lean pool, direct path available) and redis-py's stock one with
    the same retry policy: every healing test runs on both and expects the same answers."""
    tag = uuid.uuid4().hex[:8]  # names unique to this test's pools
    lean = connect(url, limits=Limits(pool_size=2, socket_timeout=0.5, client_name=f"lean-{tag}"))
    stock_pool = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=2,
        timeout=0.25,
        socket_timeout=0.5,
        retry=RETRY,
        client_name=f"stock-{tag}",
    )
    return [lean, redis.Redis(connection_pool=stock_pool)]


def _warm(client: redis.Redis) -> None:
    """Both pooled connections open (so that the next commands meet killed ones)."""
    pool = client.connection_pool
    held = [pool.get_connection(), pool.get_connection()]
    for conn in held:
        pool.release(conn)


@pytest.mark.parametrize("path", ["client", "direct"])
def test_connections_killed_by_the_server_are_replaced(
    redis_server: RedisServer, path: str
) -> None:
    answers = []
    for client in _lean_and_stock(redis_server.url):
        _warm(client)
        client.set("k", b"v")
        _kill_clients(redis_server.url, client)
        send = Direct(client).execute if path == "direct" else client.execute_command
        answers.append([send("GET", "k"), send("GET", "k"), send("EXISTS", "k")])
    assert answers[0] == answers[1] == [b"v", b"v", 1]


@pytest.mark.parametrize("transport", ["tcp", "unix"])
def test_every_path_heals_after_a_restart(tmp_path: Path, transport: str) -> None:
    """kill -9, then a new redis-server on the same port (or unix socket, as ``make run``'s
    embedded Redis) from its append-only file: the pooled connections are dead, and the first
    command after the restart must succeed."""
    sock = str(tmp_path / "redis.sock") if transport == "unix" else None
    server = RedisServer(persist=True, data_dir=str(tmp_path), unix_socket=sock).start()
    try:
        lean, stock = _lean_and_stock(server.url)
        script = Script(Direct(lean), "return redis.call('INCR', KEYS[1])")
        for client in (lean, stock):
            _warm(client)
        assert script(keys=["n"], args=[]) == 1
        _kill(server)
        with pytest.raises(redis.ConnectionError):
            Direct(lean).execute("PING")  # down: a prompt error, not a hang
        server.start()
        assert [stock.get("n"), lean.get("n"), Direct(lean).execute("GET", "n")] == [b"1"] * 3
        assert script(keys=["n"], args=[]) == 2  # NOSCRIPT after the restart: loaded again
        pipe = lean.pipeline(transaction=False)
        assert pipe.get("n").incr("n").execute() == [b"2", 3]
    finally:
        server.stop()


def test_a_hung_server_costs_one_timeout_never_a_retry(redis_server: RedisServer) -> None:
    """A timeout is not retried: a request stuck on a stopped Redis fails after one
    socket_timeout (1 s here), where a retry would take two."""
    client = connect(redis_server.url, limits=Limits(pool_size=1, socket_timeout=1.0))
    assert Direct(client).execute("PING") == b"PONG"
    assert redis_server.proc is not None
    os.kill(redis_server.proc.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        with pytest.raises(redis.TimeoutError):
            Direct(client).execute("PING")
        with pytest.raises(redis.TimeoutError):
            client.get("k")
        assert time.monotonic() - started < 2 * 1.9  # two commands, one timeout each
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    assert Direct(client).execute("PING") == b"PONG"


def test_a_busy_pool_is_not_waited_for_twice(client: redis.Redis) -> None:
    pool = client.connection_pool
    held = pool.get_connection()
    try:
        with pytest.raises(PoolExhausted):
            Direct(client).execute("PING")
    finally:
        pool.release(held)


def _kill_clients(url: str, client: redis.Redis) -> None:
    """CLIENT KILL every connection of ``client``'s pool (found by its name), as an operator or
    a proxy's idle timeout would."""
    name = client.connection_pool.connection_kwargs["client_name"]
    admin = redis.Redis.from_url(url)
    killed = [
        admin.client_kill_filter(_id=c["id"]) for c in admin.client_list() if c["name"] == name
    ]
    assert len(killed) == 2


def _kill(server: RedisServer) -> None:
    assert server.proc is not None
    server.proc.kill()
    server.proc.wait()


def test_a_write_whose_reply_was_lost_is_not_sent_again(redis_server: RedisServer) -> None:
    """The connection breaks after Redis ran the script, before its reply arrived: the script
    may have run, so it is not sent a second time (a compare-and-set sent again finds its own
    change and answers that another one came first). The error says the outcome is unknown;
    the caller looks at what is stored. A read is sent again as before."""
    with LateLink(redis_server.port) as link:
        client = connect(link.url, limits=Limits(pool_size=2))
        assert isinstance(client, redis.Redis)
        client.delete("n")
        source = "return redis.call('INCR', KEYS[1])"
        script = Script(Direct(client), source)
        assert script(keys=["n"], args=[]) == 1
        link.lose_reply_of_next(script.sha.encode())
        with pytest.raises(redis.ConnectionError):
            script(keys=["n"], args=[])
        assert link.lost.is_set()
        assert client.get("n") == b"2"  # run once
        link.lose_reply_of_next(b"GET")
        assert Direct(client).execute("GET", "n") == b"2"  # a read: sent again at once
        assert link.lost.is_set()
