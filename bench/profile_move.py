"""Where a move request's time goes: ``python -m bench.profile_move``.

Runs the real app in this process (the WSGI callable gunicorn calls, with every hook, metrics
in multiprocess mode as under gunicorn, the request log as configured) against a private
redis-server, and drives it with the bench's loop: ``GET legal-moves`` then ``POST /moves``
with ``If-Match``, over 4-player games of one round. No HTTP server and no client in the way,
so what is measured is what the app spends.

1. Times PAIRS request pairs: µs per request (wall, and this thread's CPU).
2. With ``--steps``: the CPU time of each step of the request (STEPS, inclusive, timed with
   the thread's CPU clock around each call), the table kept in ``docs/design.md`` ("Hot
   path"). Otherwise, unless PROFILE_CPROFILE=0, profiles as many pairs again with cProfile
   (CPU time: waits for Redis are not counted) and prints the functions with the most time
   per request; cProfile's own cost inflates functions that make many small calls, so read
   it for where, not for how much.

Environment: PROFILE_PAIRS (default 3000), PROFILE_TOP (default 30), LOG_LEVEL (default
warning, as the bench's gunicorn), PROFILE_SORT (tottime or cumulative), PROFILE_CPROFILE
(0: timing alone, e.g. under py-spy).
"""

from __future__ import annotations

import cProfile
import importlib
import io
import os
import pstats
import random
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="mt-profile-"))

import orjson

from devstack.redis_server import RedisServer
from service.api.app import create_app

PAIRS = int(os.environ.get("PROFILE_PAIRS", "3000"))
TOP = int(os.environ.get("PROFILE_TOP", "30"))
SORT = os.environ.get("PROFILE_SORT", "tottime")
# 0: time only (e.g. under a sampling profiler: py-spy record -- python -m bench.profile_move).
PROFILE = os.environ.get("PROFILE_CPROFILE", "1") != "0"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Any]


def call(
    app: WsgiApp,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request through the WSGI interface, as gunicorn makes it."""
    data = orjson.dumps(body) if body is not None else b""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(data),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
        "HTTP_HOST": "127.0.0.1:8000",
    }
    if data:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(data))
    for name, value in (headers or {}).items():
        environ["HTTP_" + name.upper().replace("-", "_")] = value
    status: list[str] = []
    chunks = app(environ, lambda s, h, exc_info=None: status.append(s))
    raw = b"".join(chunks)
    if hasattr(chunks, "close"):
        chunks.close()
    return int(status[0].split()[0]), orjson.loads(raw) if raw else None


class Games:
    """The bench's client loop, one request pair (legal-moves, move) per :meth:`step`."""

    def __init__(self, app: WsgiApp, seed: int) -> None:
        self.app = app
        self.rng = random.Random(seed)
        self.view: dict[str, Any] = {"status": "game_over"}

    def new_game(self) -> None:
        _, created = call(
            self.app, "POST", "/api/v1/games", {"players": list("abcd"), "options": {"rounds": 1}}
        )
        self.url = f"/api/v1/games/{created['game_id']}"
        self.host = {"Authorization": f"Bearer {created['host_token']}"}
        self.seats = [{"Authorization": f"Bearer {t['token']}"} for t in created["seats"]]
        _, self.view = call(self.app, "POST", self.url + "/deal", headers=self.host)

    def step(self) -> None:
        while self.view["status"] != "in_round":
            if self.view["status"] == "game_over":
                self.new_game()
            else:
                _, self.view = call(self.app, "POST", self.url + "/deal", headers=self.host)
        auth = self.seats[self.view["turn"]]
        _, listed = call(self.app, "GET", self.url + "/legal-moves", headers=auth)
        status, self.view = call(
            self.app,
            "POST",
            self.url + "/moves",
            self.rng.choice(listed["moves"]),
            {**auth, "If-Match": f'"{self.view["version"]}"'},
        )
        if status != 200:
            raise RuntimeError(f"move refused: {status} {self.view}")


# Steps timed by --steps: (module, owner attribute path, label). Inclusive CPU time per request.
STEPS: list[tuple[str, str, str]] = [
    ("flask", "Flask.wsgi_app", "whole request in Flask (hooks, view, response)"),
    ("flask", "Flask.request_context", "Flask: request context made"),
    ("flask.ctx", "RequestContext.push", "Flask: context pushed, URL matched"),
    ("flask", "Flask.preprocess_request", "before-request hooks"),
    ("webargs.core", "Parser.parse", "body parsed and validated (webargs)"),
    ("service.api.transaction", "load_game", "load_game (token, load, role, If-Match)"),
    ("service.store.games", "GameStore.load", "GameStore.load (one round trip)"),
    ("service.store.games", "GameStore.save", "GameStore.save (compare-and-set script)"),
    ("service.frameworks.redis_py", "Direct.execute", "Redis command (send, wait, parse)"),
    ("service.api.records", "Decoded.get", "decoded state or table (kept, copied)"),
    ("service.rules", "loads", "rules.loads (decode state)"),
    ("service.api.records", "table_of", "table_of (decode table)"),
    ("service.rules", "apply", "rules.apply (the move)"),
    ("service.api.transaction", "Loaded.view", "game view + table fields"),
    ("service.api.transaction", "change_of", "change_of (encode state, record, table)"),
    ("flask", "Flask.finalize_request", "after-request hooks"),
    ("flask", "Response.__call__", "response handed to the server"),
]


def instrument() -> dict[str, list[float]]:
    """Wrap each of STEPS to add its thread CPU time (inclusive) to the returned totals."""
    totals: dict[str, list[float]] = {}
    clock = time.thread_time
    for module_name, path, label in STEPS:
        owner: Any = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        func = getattr(owner, name)
        totals[label] = [0, 0.0]

        def timed(*args: Any, _f: Any = func, _t: list[float] = totals[label], **kw: Any) -> Any:
            start = clock()
            try:
                return _f(*args, **kw)
            finally:
                _t[0] += 1
                _t[1] += clock() - start

        setattr(owner, name, timed)
    # Modules bound these names at import, before they were wrapped: rebind them.
    transaction = importlib.import_module("service.api.transaction")
    importlib.import_module("service.api.games.resources").load_game = transaction.load_game
    transaction.table_of = importlib.import_module("service.api.records").table_of
    return totals


def run(steps: bool) -> None:
    totals = instrument() if steps else {}
    with RedisServer() as rs:
        # A long socket timeout: on a busy machine a slow reply is not what is measured here.
        app = create_app({"REDIS_URL": rs.url, "REDIS_SOCKET_TIMEOUT_MS": 10_000})
        games = Games(app, 1)
        for _ in range(200):  # warm up: imports, caches, script loading
            games.step()
        for t in totals.values():
            t[:] = [0, 0.0]
        wall, cpu = time.perf_counter(), time.thread_time()
        for _ in range(PAIRS):
            games.step()
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        per = 1e6 / (2 * PAIRS)
        print(f"{PAIRS} pairs (legal-moves + move), in process, real Redis over TCP")
        print(f"per request: {wall * per:.0f} us wall, {cpu * per:.0f} us CPU")
        if steps:
            print(f"\n{'CPU us/request':>14} {'calls/request':>13}  step (inclusive)")
            for label, (calls, spent) in totals.items():
                print(f"{spent * per:14.1f} {calls / (2 * PAIRS):13.2f}  {label}")
        if not PROFILE or steps:
            return
        # CPU time, not wall time: waiting for Redis (and for the cores, on a shared machine) is
        # not spent by the app.
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for _ in range(PAIRS):
            games.step()
        profiler.disable()
    print_profile(profiler, per)


def print_profile(profiler: cProfile.Profile, per: float) -> None:
    stats = pstats.Stats(profiler)
    rows = []
    for (file, line, name), (_, calls, own, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{os.path.relpath(file) if file.startswith('/') else file}:{line}({name})"
        rows.append((own, cum, calls, where))
    key = 1 if SORT == "cumulative" else 0
    rows.sort(key=lambda r: r[key], reverse=True)
    print(f"\nunder cProfile, per request (of {int(1e6 / per)}), sorted by {SORT}:")
    print(f"{'own us':>8} {'cum us':>8} {'calls':>6}  function")
    for own, cum, calls, where in rows[:TOP]:
        print(f"{own * per:8.1f} {cum * per:8.1f} {calls * per / 1e6:6.1f}  {where[-90:]}")


def main() -> None:
    os.environ.setdefault("LOG_LEVEL", "warning")
    run(steps="--steps" in sys.argv)


if __name__ == "__main__":
    main()
