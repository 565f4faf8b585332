"""The store's direct command path and lean pool on a real redis-server: the same replies as
redis-py's client, scripts reloaded after a flush, and never a stale reply after a failure."""

from __future__ import annotations

import threading

import pytest
import redis

from service.launch.redis_server import RedisServer
from service.store.connection import LeanPool, Limits, connect
from service.store.direct import Direct, Script


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
    direct, errors = Direct(connect(redis_server.url, limits=Limits(pool_size=2))), []

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
