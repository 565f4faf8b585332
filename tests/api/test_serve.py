"""``make run`` (devstack.serve): embedded Redis in DATA_DIR, gunicorn on PORT, clean stop."""

from __future__ import annotations

import http.client
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
import redis
import requests

from devstack.gunicorn import ROOT
from devstack.managed import answers, wait_until
from devstack.redis_server import RedisServer, free_port
from devstack.serve import bind_address, redis_answers, single_pool_notice


def listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses with a socket listening on ``port`` (from /proc/net/tcp)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
            found.add(str(ipaddress.IPv4Address(int(address, 16).to_bytes(4, "little"))))
    return found


def serve_expecting_a_stop(
    env: dict[str, str], timeout: float, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess[str] | None:
    """``make run``'s stack started with ``env`` (under the command ``prefix``, if any) where it
    must refuse to start: how it ended, or None when it was still running after ``timeout``
    seconds (then stopped)."""
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-m", "devstack.serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
        return None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_bind_address_is_loopback_unless_host_says_otherwise() -> None:
    assert bind_address({}) == "127.0.0.1:8000"
    assert bind_address({"PORT": "9000"}) == "127.0.0.1:9000"
    assert bind_address({"HOST": "0.0.0.0", "PORT": "9000"}) == "0.0.0.0:9000"
    assert bind_address({"HOST": "0.0.0.0", "BIND": "unix:/tmp/s"}) == "unix:/tmp/s"


def test_serve_with_embedded_redis(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path), "WEB_CONCURRENCY": "1"}
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "devstack.serve"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: answers(base + "/readyz", status=200),
            alive=lambda: proc.poll() is None,
            timeout=30,
            interval=0.2,
            what="make run",
            exited=lambda: f"code {proc.returncode}",
        )
        # Without HOST, only this machine can connect.
        assert listening_addresses(port) == {"127.0.0.1"}
        r = requests.post(base + "/api/v1/games", json={"players": ["a", "b"]}, timeout=5)
        assert r.status_code == 201
        # Streams are served out of the box: a table of bots plays to the end at its creation,
        # and its SSE stream sends the whole log through nginx, then closes.
        bots = [{"name": "a", "bot": "random"}, {"name": "b", "bot": "greedy"}]
        body = {"players": bots, "auto_deal": True, "options": {"rounds": 1}}
        created = requests.post(base + "/api/v1/games", json=body, timeout=10).json()
        stream = requests.get(
            f"{base}/api/v1/games/{created['game_id']}/events",
            headers={"Accept": "text/event-stream"},
            timeout=10,
        )
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        ids = [int(line[4:]) for line in stream.text.splitlines() if line.startswith("id: ")]
        assert ids == list(range(1, created["version"] + 1))
        assert (tmp_path / "redis.sock").exists()
        assert (tmp_path / "redis" / "appendonlydir").is_dir()  # AOF on: games survive restarts
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    # Redis went away with gunicorn.
    assert not (tmp_path / "redis.sock").exists()


def test_a_second_stack_on_the_same_data_dir_leaves_the_first_redis_alone(tmp_path: Path) -> None:
    """A second ``make run`` with the first's DATA_DIR (another PORT, or the same by mistake)
    would start a redis-server on the same socket, which takes the socket path over and writes
    the same append-only files: the first stack's new connections would reach the second's
    Redis, and lose Redis altogether when the second stops. It stops before starting anything."""
    with RedisServer(unix_socket=str(tmp_path / "redis.sock"), data_dir=str(tmp_path / "redis")):
        first = redis.Redis(unix_socket_path=str(tmp_path / "redis.sock"))
        before = first.info("server")["run_id"]
        env = {**os.environ, "PORT": str(free_port()), "DATA_DIR": str(tmp_path)}
        env.pop("REDIS_URL", None)
        stopped = serve_expecting_a_stop(env, timeout=30)
        assert stopped, "a second stack started on the first one's DATA_DIR"
        assert stopped.returncode != 0
        assert "DATA_DIR" in stopped.stderr, stopped.stdout + stopped.stderr
        assert first.info("server")["run_id"] == before  # the first Redis still holds its socket
        first.close()


def test_a_taken_port_stops_make_run_before_it_starts_anything(tmp_path: Path) -> None:
    """Another server on PORT (a first ``make run``) answers the start-up check, so the second
    said it was serving there, then died when nginx gave up binding. It stops at once instead,
    saying which address is taken, with nothing started."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Ok(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Ok) as other:
        threading.Thread(target=other.serve_forever, daemon=True).start()
        port = other.server_address[1]
        env = {**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path)}
        env.pop("REDIS_URL", None)
        try:
            stopped = serve_expecting_a_stop(env, timeout=60)
        finally:
            other.shutdown()
    assert stopped, "make run kept running on a taken port"
    out, err = stopped.stdout, stopped.stderr
    assert stopped.returncode != 0
    assert "serving on" not in out, out
    assert f"127.0.0.1:{port} is in use" in err, out + err
    assert not (tmp_path / "redis.sock").exists(), "Redis was started"


def test_a_bind_without_a_host_stops_make_run_on_a_taken_port(tmp_path: Path) -> None:
    """``BIND=:PORT`` (no host: gunicorn binds every IPv4 interface) with something listening
    there: the check before anything starts must probe that port too, not take the empty host
    for a name that does not resolve and start the stack on a taken port."""
    with socket.socket(socket.AF_INET) as other:
        other.bind(("0.0.0.0", 0))
        other.listen(1)
        port = other.getsockname()[1]
        env = {**os.environ, "BIND": f":{port}", "DATA_DIR": str(tmp_path)}
        env.pop("REDIS_URL", None)
        stopped = serve_expecting_a_stop(env, timeout=60)
    assert stopped, "make run kept running on a taken port"
    assert stopped.returncode != 0
    assert f":{port} is in use" in stopped.stderr, stopped.stdout + stopped.stderr
    assert not (tmp_path / "redis.sock").exists(), "Redis was started"


def with_hosts_file(hosts: Path) -> list[str]:
    """A command prefix that runs the command with ``hosts`` as its /etc/hosts (a user and
    mount namespace of its own; the network is this machine's)."""
    return ["unshare", "-rm", "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts)]


def localhost_on_both_families(tmp_path: Path) -> Path:
    """A hosts file naming localhost 127.0.0.1 and ::1 (the test is skipped where
    :func:`with_hosts_file` cannot run)."""
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n::1 localhost\n")
    if subprocess.run([*with_hosts_file(hosts), "true"], check=False).returncode != 0:
        pytest.skip("no user and mount namespaces here")
    return hosts


def test_a_host_whose_every_address_is_checked_stops_make_run_on_a_taken_one(
    tmp_path: Path,
) -> None:
    """``HOST=localhost`` where localhost is 127.0.0.1 and ::1, and something listens on ::1
    alone: nginx binds both and fails on ::1, so the check before anything starts must look at
    every address the host resolves to, not the first IPv4 one."""
    localhost_on_both = with_hosts_file(localhost_on_both_families(tmp_path))
    with socket.socket(socket.AF_INET6) as other:
        other.bind(("::1", 0))
        other.listen(1)
        port = other.getsockname()[1]
        env = {**os.environ, "HOST": "localhost", "PORT": str(port), "DATA_DIR": str(tmp_path)}
        env.pop("REDIS_URL", None)
        stopped = serve_expecting_a_stop(env, timeout=60, prefix=localhost_on_both)
    assert stopped, "make run kept running on a taken port"
    assert stopped.returncode != 0
    assert f"localhost:{port} is in use" in stopped.stderr, stopped.stdout + stopped.stderr
    assert not (tmp_path / "redis.sock").exists(), "Redis was started"


def test_a_bind_to_a_name_is_checked_where_gunicorn_binds_it(tmp_path: Path) -> None:
    """``BIND=localhost:PORT`` where localhost is 127.0.0.1 and ::1, and something listens on
    ::1 alone: gunicorn binds a name to its first IPv4 address, which is free, so the stack
    must start and serve there; nginx's every address is not gunicorn's bind."""
    localhost_on_both = with_hosts_file(localhost_on_both_families(tmp_path))
    with socket.socket(socket.AF_INET6) as other:
        other.bind(("::1", 0))
        other.listen(1)
        port = other.getsockname()[1]
        env = {**os.environ, "BIND": f"localhost:{port}", "DATA_DIR": str(tmp_path)}
        env["WEB_CONCURRENCY"] = "1"
        env.pop("REDIS_URL", None)
        proc = subprocess.Popen(
            [*localhost_on_both, sys.executable, "-m", "devstack.serve"],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until(
                lambda: answers(f"http://127.0.0.1:{port}/readyz", status=200),
                alive=lambda: proc.poll() is None,
                timeout=30,
                interval=0.2,
                what="make run",
                exited=lambda: proc.communicate()[1],
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
    assert proc.returncode == 0


def test_make_run_never_prints_the_redis_password(tmp_path: Path) -> None:
    password = "s3cret-" + os.urandom(4).hex()
    with RedisServer() as server:
        redis.Redis.from_url(server.url).config_set("requirepass", password)
        url = f"redis://:{password}@127.0.0.1:{server.port}/0"
        port = free_port()
        env = {**os.environ, "REDIS_URL": url, "BIND": f"127.0.0.1:{port}", "WEB_CONCURRENCY": "1"}
        env["DATA_DIR"] = str(tmp_path)
        out = tmp_path / "out.log"
        with out.open("w") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-m", "devstack.serve"],
                cwd=ROOT,
                env=env,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_until(
                    lambda: answers(f"http://127.0.0.1:{port}/readyz", status=200),
                    alive=lambda: proc.poll() is None,
                    timeout=30,
                    interval=0.2,
                    what="make run",
                    exited=lambda: f"code {proc.returncode}",
                )
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
    text = out.read_text()
    assert "Redis at redis://:***@127.0.0.1" in text, text[-2000:]
    assert password not in text, text[-2000:]


def test_redis_answers_only_for_a_live_redis(tmp_path: Path) -> None:
    """A socket file that a killed stack left behind does not stop ``make run``: its new Redis
    replaces it. Only a Redis that answers there does."""
    sock = tmp_path / "redis.sock"
    assert not redis_answers(sock)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(sock))
    stale.close()  # the file stays, nothing listens
    assert sock.exists() and not redis_answers(sock)
    sock.unlink()
    with RedisServer(unix_socket=str(sock), data_dir=str(tmp_path / "redis")):
        assert redis_answers(sock)


def test_the_single_pool_notice_says_why() -> None:
    """BIND skips nginx on purpose: the notice does not blame a missing nginx for it."""
    assert single_pool_notice({"BIND": "127.0.0.1:9000"}).startswith(
        "BIND is set: one gunicorn pool serves everything on 127.0.0.1:9000"
    )
    assert single_pool_notice({"PORT": "9000"}).startswith(
        "nginx is not available: one gunicorn pool serves everything on 127.0.0.1:9000"
    )


@contextmanager
def listening(sock: Path, handle: Callable[[socket.socket], None]) -> Iterator[None]:
    """Something that is no Redis listens on ``sock``: each connection is given to ``handle``
    (on a thread of its own), then closed, until the block ends."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock))
    listener.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the test is over
            with conn:
                handle(conn)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield
    finally:
        listener.close()


def test_redis_answers_asks_a_socket_that_is_no_redis_once(tmp_path: Path) -> None:
    """``make run`` asks once and moves on: redis-py's own retries (three, with a growing
    backoff) would hold every start after a killed stack for seconds. Here something listens on
    the socket and hangs up at once, counting each connection it is asked for."""
    sock = tmp_path / "redis.sock"
    accepted: list[int] = []
    with listening(sock, lambda _conn: accepted.append(1)):
        assert not redis_answers(sock)
    assert len(accepted) == 1, accepted


@pytest.mark.parametrize(
    "reply",
    [
        b"-LOADING Redis is loading the dataset in memory\r\n",
        b"-NOAUTH Authentication required.\r\n",
    ],
)
def test_a_redis_that_answers_with_an_error_is_a_running_one(tmp_path: Path, reply: bytes) -> None:
    """A Redis still loading its append-only file, or one that wants a password, is a server
    on the socket all the same: a second one must not take the socket from it."""
    sock = tmp_path / "redis.sock"

    def answer(conn: socket.socket) -> None:
        if conn.recv(4096):
            conn.sendall(reply)

    with listening(sock, answer):
        assert redis_answers(sock)


def stream_from(source: str, port: int, game_id: str) -> http.client.HTTPResponse:
    """An SSE stream of the game opened from the loopback address ``source``, answered."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    conn.request("GET", f"/api/v1/games/{game_id}/events", headers={"Accept": "text/event-stream"})
    return conn.getresponse()


def test_behind_its_nginx_each_client_is_its_own_address(tmp_path: Path) -> None:
    """`make run` puts nginx in front of gunicorn: the app must trust its X-Forwarded-For (one
    proxy), or every client is nginx's 127.0.0.1 to it and all share one address's open
    streams (and per-address limits). Two clients from two addresses, one stream each."""
    port = free_port()
    env = {**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path), "WEB_CONCURRENCY": "1"}
    env.update(STREAMS_PER_ADDRESS="1")
    for name in ("REDIS_URL", "TRUSTED_PROXIES", "BIND"):
        env.pop(name, None)
    proc = subprocess.Popen([sys.executable, "-m", "devstack.serve"], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: answers(base + "/readyz", status=200),
            alive=lambda: proc.poll() is None,
            timeout=30,
            interval=0.2,
            what="make run",
            exited=lambda: f"code {proc.returncode}",
        )
        game = requests.post(base + "/api/v1/games", json={"players": ["a", "b"]}, timeout=5)
        gid = game.json()["game_id"]
        first = stream_from("127.0.0.2", port, gid)
        second = stream_from("127.0.0.3", port, gid)
        assert (first.status, second.status) == (200, 200), second.read()
        again = stream_from("127.0.0.2", port, gid)  # the cap still holds per address
        assert again.status == 429
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie not yet waited for has)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def run_in_foreground(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    """``make run`` in a process group of its own, as a shell runs its foreground job: its
    process, port and log."""
    port = free_port()
    env = {**os.environ, "PORT": str(port), "DATA_DIR": str(tmp_path), "WEB_CONCURRENCY": "1"}
    env.pop("REDIS_URL", None)
    log_path = tmp_path / "run.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "devstack.serve"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
    return proc, port, log_path


def wait_ready(proc: subprocess.Popen[bytes], base: str, log_path: Path) -> None:
    wait_until(
        lambda: answers(base + "/readyz", status=200),
        alive=lambda: proc.poll() is None,
        timeout=30,
        interval=0.2,
        what="make run",
        exited=lambda: log_path.read_text()[-2000:],
    )


def test_ctrl_c_stops_redis_after_the_pools(tmp_path: Path) -> None:
    """A terminal's Ctrl-C sends SIGINT to the whole foreground process group. The embedded
    Redis must not take it itself: it has to outlive the pools, which still finish what they
    hold (an open stream here) and would otherwise fill the log with connection errors."""
    proc, port, log_path = run_in_foreground(tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, base, log_path)
        children = psutil.Process(proc.pid).children()
        redis_pid = next(c.pid for c in children if "redis-server" in " ".join(c.cmdline()))
        others = [c.pid for c in children if c.pid != redis_pid]
        game = requests.post(base + "/api/v1/games", json={"players": ["a", "b"]}, timeout=5)
        stream = requests.get(
            f"{base}/api/v1/games/{game.json()['game_id']}/events",
            headers={"Accept": "text/event-stream"},
            stream=True,
            timeout=30,
        )
        assert stream.status_code == 200
        os.killpg(proc.pid, signal.SIGINT)
        order: list[int] = []
        deadline = time.monotonic() + 60
        while len(order) < len(children) and time.monotonic() < deadline:
            # Redis looked at last: a part and Redis gone within one look count Redis last.
            order += [pid for pid in [*others, redis_pid] if pid not in order and _exited(pid)]
            time.sleep(0.02)
        assert proc.wait(60) == 0
        stream.close()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert order[-1] == redis_pid, "Redis stopped before the parts that use it"
    text = log_path.read_text()
    assert "ConnectionError" not in text and "Connection refused" not in text, text[-3000:]


def test_a_closed_terminal_stops_every_part(tmp_path: Path) -> None:
    """Closing the terminal (or an ssh session dropping) sends SIGHUP to the foreground process
    group only. The parts run in groups of their own, so they never get it: the launcher has
    to stop them, or redis-server, nginx, the worker and both pools outlive it, holding the
    port and the data directory."""
    proc, port, log_path = run_in_foreground(tmp_path)
    children: list[psutil.Process] = []
    try:
        wait_ready(proc, f"http://127.0.0.1:{port}", log_path)
        children = psutil.Process(proc.pid).children()
        assert any("redis-server" in " ".join(c.cmdline()) for c in children)
        os.killpg(proc.pid, signal.SIGHUP)
        proc.wait(60)
        deadline = time.monotonic() + 30
        while not all(_exited(c.pid) for c in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [" ".join(c.cmdline()) for c in children if not _exited(c.pid)]
        assert left == [], "outlived make run"
    finally:
        for child in children:
            if not _exited(child.pid):
                child.kill()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_ctrl_c_ends_a_stream_through_nginx_with_a_complete_body(tmp_path: Path) -> None:
    """On Ctrl-C the streams pool ends its streams cleanly (they resume elsewhere); nginx must
    still be there to pass that end on, and then quit gracefully, or the reader sees its stream
    cut (a chunked body without its last chunk) instead of ended."""
    proc, port, log_path = run_in_foreground(tmp_path)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(proc, base, log_path)
        game = requests.post(base + "/api/v1/games", json={"players": ["a", "b"]}, timeout=5)
        stream = requests.get(
            f"{base}/api/v1/games/{game.json()['game_id']}/events",
            headers={"Accept": "text/event-stream"},
            stream=True,
            timeout=30,
        )
        assert stream.status_code == 200
        chunks = stream.iter_content(None)
        body = next(chunks)  # the stream is open through nginx
        os.killpg(proc.pid, signal.SIGINT)
        body += b"".join(chunks)  # raises ChunkedEncodingError when cut
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert b"id: 1\n" in body and body.endswith(b"\n\n"), body
