"""``make soak``: the stack ``make run`` starts, under mixed traffic for SOAK_MINUTES (default 20).

1. Starts ``python -m devstack.serve`` (nginx, the API pool, the streams pool, an embedded
   Redis) on a free port with its data in a temporary folder, games living GAME_TTL_SECONDS
   (default 120: games expire about as fast as they are made, so a steady state exists; the
   soak looks for leaks, not for retention).
2. Capacity: CAPACITY_SECONDS (default 20) of 8 client processes playing as fast as they can
   (no streams, no bad requests): requests per second.
3. The soak: SOAK_LOAD (default 0.5) of that rate, paced, from SOAK_CLIENTS (default 6) client
   processes that play 4-player one-round games over HTTP (every other game has two server bot
   seats, which move by themselves after each of the people's moves): legal-moves, then a move
   with If-Match, one in four with an Idempotency-Key; about 1 request in 20 is a bad one (a
   stranger's token, an illegal move, a malformed body, a stale If-Match, an unknown game) whose
   4xx is expected. SOAK_STREAMS (default 8) threads follow current games over SSE (``Accept:
   text/event-stream``), hang up after a random 0.5-4 s (a game lasts a few seconds) and
   reconnect with ``Last-Event-ID``; every entry id must follow the one before it (a gap or a
   repeat is an error).
4. Every minute (SOAK_MINUTE_SECONDS (default 60), shorter only to try the script): RSS and open
   file descriptors of every gunicorn worker (both pools), Redis ``used_memory`` and
   ``connected_clients`` (each the median of readings every SAMPLE_SECONDS), request count,
   p50/p99, errors (a 5xx, a status other than the one expected, a broken connection, a stream
   gap).
5. Writes ``docs/soak.md`` (the table, the set-up, the verdict) and ``docs/soak.png``.

Pass: after warm-up (the first SOAK_WARMUP minutes; default a fifth of the run, 1 to 3), RSS,
fds, Redis memory and clients grow under 5% (median of the last 3 minutes against the median of
the first 3 after warm-up), every minute's p99 is within 1.5x of the first minute's, and there
is no error.
"""

from __future__ import annotations

import contextlib
import http.client
import multiprocessing as mp
import os
import queue
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis
import requests

from devstack.managed import wait_until
from devstack.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MINUTES = float(os.environ.get("SOAK_MINUTES", "20"))
MINUTE = float(os.environ.get("SOAK_MINUTE_SECONDS", "60"))  # shorter only to try the script
LOAD = float(os.environ.get("SOAK_LOAD", "0.5"))
CAPACITY_SECONDS = float(os.environ.get("CAPACITY_SECONDS", "20"))
STREAMS = int(os.environ.get("SOAK_STREAMS", "8"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "6"))
GAME_TTL = os.environ.get("GAME_TTL_SECONDS", "120")
WARMUP = int(os.environ.get("SOAK_WARMUP", str(max(1, min(3, int(MINUTES) // 5)))))
BAD_SHARE = 0.05
GROWTH_LIMIT = 0.05
# Gauges are read this often and each minute reports their median: one reading a minute moved
# with whatever happened at that instant (an API worker just recycled holds no connection yet).
SAMPLE_SECONDS = 5.0
P99_LIMIT = 1.5


# --------------------------------------------------------------------------- the stack


@dataclass
class Stack:
    proc: subprocess.Popen[bytes]
    url: str
    redis_socket: Path
    log: Path

    def processes(self) -> dict[str, list[int]]:
        """The stack's processes now: gunicorn workers (both pools), masters, nginx, redis."""
        children: dict[int, list[int]] = {}
        names: dict[int, str] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2 :].split()[1]), []).append(int(entry))
            names[int(entry)] = cmd
        found: dict[str, list[int]] = {"workers": [], "masters": [], "nginx": [], "redis": []}
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            for kid in children.get(pid, []):
                todo.append(kid)
                cmd = names[kid]
                if "gunicorn" in cmd:
                    found["masters" if pid == self.proc.pid else "workers"].append(kid)
                elif "nginx" in cmd:
                    found["nginx"].append(kid)
                elif "redis-server" in cmd:
                    found["redis"].append(kid)
        return found


@contextlib.contextmanager
def start_stack(tmp: Path) -> Any:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "DATA_DIR": str(tmp),
        "GAME_TTL_SECONDS": GAME_TTL,
    }
    env.pop("REDIS_URL", None)
    log = tmp / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "devstack.serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    stack = Stack(proc, f"http://127.0.0.1:{port}", tmp / "redis.sock", log)
    try:
        wait_until(
            lambda: b"serving on" in log.read_bytes(),
            alive=lambda: proc.poll() is None,
            timeout=90,
            interval=0.2,
            what="make run's stack",
            exited=lambda: log.read_text()[-3000:],
        )
        yield stack
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


# --------------------------------------------------------------------------- players


class Http:
    """Keep-alive HTTP through nginx (http.client + orjson: light on a shared machine)."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.conn: http.client.HTTPConnection | None = None

    def call(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else orjson.dumps(body) if body is not None else None
        hdrs = dict(headers or {})
        if data is not None:
            hdrs["Content-Type"] = "application/json"
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.conn.request(method, path, body=data, headers=hdrs)
                resp = self.conn.getresponse()
                raw = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return resp.status, orjson.loads(raw) if raw else None
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A keep-alive connection the server had closed: one fresh try, then an error.
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


@dataclass
class Tally:
    """One process's results since its last report."""

    lat: list[tuple[float, float]] = field(default_factory=list)  # (end time, seconds)
    errors: list[tuple[float, str]] = field(default_factory=list)
    bad: int = 0
    games: int = 0


class Player:
    """Plays games over HTTP, paced to ``rate`` requests a second (0: as fast as it can)."""

    def __init__(self, base: str, seed: int, rate: float, bad: bool, games_out: Any) -> None:
        self.http = Http(base)
        self.rng = random.Random(seed)
        self.rate = rate
        self.bad = bad
        self.games_out = games_out
        self.tally = Tally()
        self.next_at = time.monotonic()

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        expect: tuple[int, ...] = (200,),
    ) -> tuple[int, Any]:
        if self.rate:
            self.next_at += 1.0 / self.rate
            delay = self.next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -2:
                self.next_at = time.monotonic()  # far behind: do not burst to catch up
        start = time.monotonic()
        try:
            status, answer = self.http.call(method, path, body, headers)
        except (OSError, http.client.HTTPException) as err:
            self.tally.errors.append((time.time(), f"{method} {path}: {type(err).__name__}"))
            return 0, None
        end = time.monotonic()
        self.tally.lat.append((time.time(), end - start))
        if status not in expect:
            code = answer.get("code") if isinstance(answer, dict) else None
            self.tally.errors.append(
                (time.time(), f"{method} {path.split('/')[-1]}: {status} {code}")
            )
        return status, answer

    def game(self) -> None:
        bots = self.rng.random() < 0.5
        players: list[Any] = ["a", "b", "c", "d"]
        if bots:
            players[2:] = [{"name": "g", "bot": "greedy"}, {"name": "r", "bot": "random"}]
        status, created = self.request(
            "POST",
            "/api/v1/games",
            {"players": players, "options": {"rounds": 1}},
            expect=(201,),
        )
        if status != 201:
            return
        url = f"/api/v1/games/{created['game_id']}"
        host = {"Authorization": f"Bearer {created['host_token']}"}
        tokens = [s["token"] for s in created["seats"]]
        with contextlib.suppress(queue.Full):
            self.games_out.put_nowait(created["game_id"])
        status, view = self.request("POST", url + "/deal", headers=host)
        moves = 0
        while status == 200 and view["status"] == "in_round" and moves < 400:
            seat = view["turn"]
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            if self.bad and self.rng.random() < BAD_SHARE:
                self.bad_request(url, view, tokens, auth)
            status, listed = self.request("GET", url + "/legal-moves", headers=auth)
            if status != 200:
                return
            headers = {**auth, "If-Match": f'"{view["version"]}"'}
            if self.rng.random() < 0.25:
                headers["Idempotency-Key"] = f'"{self.rng.getrandbits(64):x}"'
            status, view = self.request(
                "POST", url + "/moves", self.rng.choice(listed["moves"]), headers
            )
            moves += 1
        if status == 200 and view["status"] in ("game_over", "round_over"):
            self.tally.games += 1

    def bad_request(self, url: str, view: dict[str, Any], tokens: list[str], auth: Any) -> None:
        """One refused request of a kind chosen at random; its 4xx is the expected answer."""
        self.tally.bad += 1
        kind = self.rng.randrange(5)
        if kind == 0:
            stranger = {"Authorization": "Bearer " + "x" * 43}
            self.request("POST", url + "/draw", headers=stranger, expect=(401,))
        elif kind == 1:
            self.request(
                "POST", url + "/play", {"tile": [99, 99], "train": "0"}, auth, expect=(422,)
            )
        elif kind == 2:
            self.request("POST", url + "/moves", b'{"action": ', auth, expect=(400,))
        elif kind == 3:
            stale = {**auth, "If-Match": f'"{view["version"] + 7}"'}
            self.request("POST", url + "/draw", headers=stale, expect=(412,))
        else:
            self.request("GET", "/api/v1/games/" + "Z" * 12, expect=(404,))


def player_process(
    base: str, seed: int, rate: float, bad: bool, until: float, out: Any, games: Any
) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    player = Player(base, seed, rate, bad, games)
    last = time.monotonic()
    while time.time() < until:
        player.game()
        if time.monotonic() - last > 2:
            out.put(player.tally)
            player.tally, last = Tally(), time.monotonic()
    out.put(player.tally)


# --------------------------------------------------------------------------- streams


def watch_streams(base: str, games: Any, until: float, out: Any, threads: int) -> None:
    """SOAK_STREAMS watchers in one process, reporting (time, kind, detail) tuples."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reports: queue.Queue[tuple[float, str, str]] = queue.Queue()
    workers = [
        threading.Thread(target=watcher, args=(base, games, until, reports, i), daemon=True)
        for i in range(threads)
    ]
    for w in workers:
        w.start()
    while any(w.is_alive() for w in workers) or not reports.empty():
        batch = []
        ship_at = time.monotonic() + 1  # at least every second, so minutes get their own
        with contextlib.suppress(queue.Empty):
            while time.monotonic() < ship_at:
                batch.append(reports.get(timeout=max(0.01, ship_at - time.monotonic())))
        if batch:
            out.put(batch)


def watcher(base: str, games: Any, until: float, reports: Any, seed: int) -> None:
    rng = random.Random(seed)
    session = requests.Session()
    game_id, last = None, 0
    while time.time() < until:
        if game_id is None:
            try:
                game_id, last = latest(games), 0
            except queue.Empty:
                continue
        hang_up = time.monotonic() + rng.uniform(0.5, 4)
        headers = {"Accept": "text/event-stream"}
        if last:
            headers["Last-Event-ID"] = str(last)
        try:
            with session.get(
                f"{base}/api/v1/games/{game_id}/events", headers=headers, stream=True, timeout=30
            ) as resp:
                if resp.status_code != 200:
                    reports.put((time.time(), "error", f"stream answered {resp.status_code}"))
                    game_id = None
                    continue
                reports.put((time.time(), "connect", "resumed" if last else "new"))
                last, over = read_stream(resp, last, hang_up, until, reports)
        except (requests.RequestException, OSError) as err:
            reports.put((time.time(), "error", f"stream: {type(err).__name__}"))
            game_id = None
            continue
        if over:
            game_id = None


def latest(games: Any) -> str:
    """The newest game offered (older ones are likely over): follow games still in play."""
    game_id = games.get(timeout=5)
    with contextlib.suppress(queue.Empty):
        while True:
            game_id = games.get_nowait()
    return str(game_id)


def read_stream(
    resp: Any, last: int, hang_up: float, until: float, reports: Any
) -> tuple[int, bool]:
    """Read SSE frames until the game ends or it is time to hang up; check ids follow on."""
    for line in resp.iter_lines():
        if line.startswith(b"id: "):
            seen = int(line[4:])
            if seen != last + 1:
                reports.put((time.time(), "error", f"stream id {seen} after {last}"))
            last = seen
            reports.put((time.time(), "entry", ""))
        elif line.startswith(b"data: ") and b'"game_over"' in line:
            return last, True
        if time.monotonic() > hang_up or time.time() > until:
            return last, False
    return last, True  # the server ends a stream only after the game's last entry


# --------------------------------------------------------------------------- sampling


def rss_kib(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class CpuMeter:
    """CPU the stack's processes used between two calls; a recycled worker's successor counts
    from its start, and a worker that exited counts up to its last reading."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}

    def used(self, pids: list[int]) -> float:
        total = 0.0
        for pid in pids:
            now = cpu_seconds(pid)
            total += max(0.0, now - self.seen.get(pid, 0.0))
            self.seen[pid] = now
        return total


def reference_ms() -> float:
    """Wall time of a fixed piece of pure Python in this process: it grows when the machine
    gives everything less CPU (other tenants, a slower host), while the stack's load is paced."""
    started = time.perf_counter()
    total = 0
    for i in range(200_000):
        total += i * i
    return (time.perf_counter() - started) * 1000 if total else 0.0


def client_names(client: redis.Redis) -> dict[str, int]:
    """Redis clients per connection name (each pool names its connections)."""
    counts: dict[str, int] = {}
    for c in client.client_list():
        name = c.get("name") or "(unnamed)"
        counts[name] = counts.get(name, 0) + 1
    return counts


def sample(stack: Stack, client: redis.Redis) -> dict[str, Any]:
    procs = stack.processes()
    info = client.info()
    return {
        "workers": len(procs["workers"]),
        "rss_mib": sum(rss_kib(p) for p in procs["workers"]) / 1024,
        "fds": sum(fds(p) for p in procs["workers"] + procs["nginx"]),
        "redis_mib": int(info["used_memory"]) / 2**20,
        "redis_clients": int(info["connected_clients"]),
        "reference_ms": reference_ms(),
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] * 1000


# --------------------------------------------------------------------------- runs


def capacity(base: str) -> float:
    """Requests a second that 8 unpaced players get through the stack."""
    out: Any = mp.Queue()
    games: Any = mp.Queue(maxsize=100)
    until = time.time() + CAPACITY_SECONDS
    procs = [
        mp.Process(target=player_process, args=(base, 1000 + i, 0.0, False, until, out, games))
        for i in range(8)
    ]
    for p in procs:
        p.start()
    pending = Tally()
    finish(procs, lambda: drain(out, None, pending, [], timeout=1.0))
    count = len(pending.lat)
    return count / CAPACITY_SECONDS


def soak(stack: Stack, rate: float) -> list[dict[str, Any]]:
    start = time.time()
    until = start + MINUTES * MINUTE
    out: Any = mp.Queue()
    streams_out: Any = mp.Queue()
    games: Any = mp.Queue(maxsize=200)
    procs = [
        mp.Process(
            target=player_process,
            args=(stack.url, i, rate / CLIENTS, True, until, out, games),
        )
        for i in range(CLIENTS)
    ]
    procs.append(
        mp.Process(target=watch_streams, args=(stack.url, games, until, streams_out, STREAMS))
    )
    for p in procs:
        p.start()
    client = redis.Redis(unix_socket_path=str(stack.redis_socket))
    rows: list[dict[str, Any]] = []
    pending = Tally()
    meter = CpuMeter()
    meter.used(stack_pids(stack))
    stream_events: list[tuple[float, str, str]] = []
    for minute in range(1, int(MINUTES) + 1):
        boundary, samples, next_sample = start + minute * MINUTE, [], time.time()
        while time.time() < boundary:
            if time.time() >= next_sample:
                samples.append(sample(stack, client))
                next_sample += SAMPLE_SECONDS
            drain(
                out,
                streams_out,
                pending,
                stream_events,
                timeout=max(0.0, min(1.0, boundary - time.time(), next_sample - time.time())),
            )
        row = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
        row.update(minute_figures(minute, start, pending, stream_events))
        row["cpu_ms_per_request"] = meter.used(stack_pids(stack)) * 1000 / max(1, row["requests"])
        row["client_names"] = client_names(client)
        rows.append(row)
        print(format_row(row), flush=True)
    finish(procs, lambda: drain(out, streams_out, Tally(), [], timeout=1.0))
    return rows


def stack_pids(stack: Stack) -> list[int]:
    procs = stack.processes()
    return procs["workers"] + procs["masters"] + procs["nginx"] + procs["redis"]


def finish(procs: list[Any], drain_once: Any) -> None:
    """Wait for the processes while emptying their queues (a process that still has items to
    hand over cannot exit)."""
    deadline = time.monotonic() + 120
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        drain_once()
    for p in procs:
        if p.is_alive():
            p.kill()
        p.join()
    drain_once()


def drain(
    out: Any, streams_out: Any, pending: Tally, stream_events: list[Any], timeout: float
) -> None:
    with contextlib.suppress(queue.Empty):
        tally = out.get(timeout=timeout)
        pending.lat += tally.lat
        pending.errors += tally.errors
        pending.bad += tally.bad
        pending.games += tally.games
    if streams_out is None:
        return
    with contextlib.suppress(queue.Empty):
        while True:
            stream_events += streams_out.get_nowait()


def minute_figures(
    minute: int, start: float, pending: Tally, stream_events: list[Any]
) -> dict[str, Any]:
    """This minute's figures, taken out of ``pending`` (later results stay for the next)."""
    end = start + minute * MINUTE
    lat = [s for t, s in pending.lat if t < end]
    pending.lat = [(t, s) for t, s in pending.lat if t >= end]
    errors = [e for t, e in pending.errors if t < end]
    pending.errors = [(t, e) for t, e in pending.errors if t >= end]
    mine = [e for e in stream_events if e[0] < end]
    stream_events[:] = [e for e in stream_events if e[0] >= end]
    errors += [detail for _, kind, detail in mine if kind == "error"]
    games, pending.games = pending.games, 0
    bad, pending.bad = pending.bad, 0
    return {
        "minute": minute,
        "requests": len(lat),
        "rps": len(lat) / MINUTE,
        "p50_ms": percentile(lat, 0.5),
        "p99_ms": percentile(lat, 0.99),
        "errors": len(errors),
        "error_kinds": sorted(set(errors))[:5],
        "games": games,
        "bad": bad,
        "stream_connects": sum(1 for e in mine if e[1] == "connect"),
        "stream_resumes": sum(1 for e in mine if e[1] == "connect" and e[2] == "resumed"),
        "stream_entries": sum(1 for e in mine if e[1] == "entry"),
    }


def format_row(row: dict[str, Any]) -> str:
    return (
        f"| {row['minute']:>3} | {row['requests']:>6} | {row['p50_ms']:7.1f} | {row['p99_ms']:7.1f}"
        f" | {row['errors']:>3} | {row['bad']:>4} | {row['stream_connects']:>4}"
        f" | {row['stream_resumes']:>4} | {row['stream_entries']:>6} | {row['workers']:>2}"
        f" | {row['rss_mib']:7.1f} | {row['fds']:>5} | {row['redis_mib']:6.2f}"
        f" | {row['redis_clients']:>4} | {row['cpu_ms_per_request']:5.2f}"
        f" | {row['reference_ms']:5.1f} |"
    )


HEADER = (
    "| min | requests | p50 ms | p99 ms | errors | bad requests | stream connects | resumed"
    " | stream entries | workers | worker RSS MiB | fds | Redis MiB | Redis clients"
    " | stack CPU ms/request | reference ms |\n"
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


# --------------------------------------------------------------------------- verdict


def growth(rows: list[dict[str, Any]], key: str) -> float:
    """Median of the last 3 minutes against the median of the first 3 after warm-up."""
    after = rows[WARMUP:]
    if len(after) < 2:
        return 0.0
    span = min(3, len(after) // 2)
    first = statistics.median(r[key] for r in after[:span])
    last = statistics.median(r[key] for r in after[-span:])
    return last / first - 1 if first else 0.0


def verdict(rows: list[dict[str, Any]]) -> list[tuple[str, bool, str]]:
    checks = []
    for key, label in (
        ("rss_mib", "worker RSS"),
        ("fds", "open file descriptors"),
        ("redis_mib", "Redis used_memory"),
        ("redis_clients", "Redis connected_clients"),
    ):
        g = growth(rows, key)
        checks.append((label, g < GROWTH_LIMIT, f"{g:+.1%} after warm-up"))
    first = rows[0]["p99_ms"]
    worst = max(rows, key=lambda r: r["p99_ms"])
    ok = worst["p99_ms"] <= P99_LIMIT * first
    ratio = worst["p99_ms"] / first if first else 0.0
    checks.append(
        (
            "p99",
            ok,
            f"worst {worst['p99_ms']:.1f} ms (minute {worst['minute']}) = {ratio:.2f}x minute 1",
        )
    )
    errors = sum(r["errors"] for r in rows)
    checks.append(("errors", errors == 0, f"{errors}"))
    return checks


def chart(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [r["minute"] for r in rows]
    fig, axes = plt.subplots(3, 2, figsize=(11, 9), sharex=True)
    panels = (
        (axes[0][0], [("rss_mib", "worker RSS, all workers")], "MiB"),
        (axes[0][1], [("fds", "open fds, workers + nginx")], "file descriptors"),
        (axes[1][0], [("redis_mib", "Redis used_memory")], "MiB"),
        (axes[1][1], [("redis_clients", "Redis connected_clients")], "clients"),
        (
            axes[2][0],
            [("p50_ms", "p50"), ("p99_ms", "p99"), ("reference_ms", "reference loop")],
            "ms",
        ),
        (
            axes[2][1],
            [("requests", "requests"), ("stream_entries", "SSE entries read")],
            "per minute",
        ),
    )
    for ax, series, unit in panels:
        ax.axvspan(0.5, WARMUP + 0.5, color="0.9", label="warm-up")
        for key, label in series:
            ax.plot(minutes, [r[key] for r in rows], marker="o", markersize=3, label=label)
        ax.set_ylim(bottom=0, top=max(max(r[k] for r in rows) for k, _ in series) * 1.25 or 1)
        ax.set_ylabel(unit)
        ax.grid(alpha=0.3)
    limit = P99_LIMIT * rows[0]["p99_ms"]
    axes[2][0].axhline(limit, color="red", linestyle="--", linewidth=1, label="1.5x minute 1 p99")
    axes[2][0].set_ylim(top=max(limit, max(r["p99_ms"] for r in rows)) * 1.15)
    for ax, _, _ in panels:
        ax.legend(loc="upper right", fontsize=8, ncols=2)
    for ax in axes[2]:
        ax.set_xlabel("minute")
    fig.suptitle(f"make soak: {len(rows)} minutes of mixed traffic through nginx")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def report(rows: list[dict[str, Any]], cap: float, rate: float, loads: tuple[str, str]) -> str:
    checks = verdict(rows)
    passed = all(ok for _, ok, _ in checks)
    lines = [
        "# Soak",
        "",
        f"`make soak` (`bench/soak.py`), SOAK_MINUTES={MINUTES:g}: the stack `make run` starts "
        "(nginx, the API pool, the streams pool, an embedded Redis) under mixed traffic: players "
        "over HTTP (half the games with two server bot seats), one request in 20 a bad one, "
        f"{STREAMS} SSE watchers that hang up after 0.5-4 s and resume with `Last-Event-ID`. "
        f"Games live GAME_TTL_SECONDS={GAME_TTL}, so they expire about as fast as they are made.",
        "",
        f"Capacity measured first: {cap:.0f} requests/s (8 unpaced players, "
        f"{CAPACITY_SECONDS:g} s); "
        f"the soak paces {CLIENTS} players to {rate:.0f} requests/s ({LOAD:.0%}). The machine "
        f"(2 cores) was shared with other work: load average {loads[0]} at the start, "
        f"{loads[1]} at the end.",
        "",
        "Worker RSS is the sum over every gunicorn worker of both pools (API workers are recycled "
        "after 20,000 requests, as deployed); fds counts the workers' and nginx's. Stack CPU is "
        "the CPU time of every process of the stack (workers, masters, nginx, Redis) that minute "
        "per request: it grows if the service does more work per request. Reference is the wall "
        "time of a fixed loop of pure Python in the soak's own process (median of the minute's "
        "readings): it grows when the machine gives everything less CPU.",
        "",
        "Redis clients by connection name in the last minute: "
        + ", ".join(f"{k} {v}" for k, v in sorted(rows[-1]["client_names"].items()))
        + ".",
        "",
        HEADER,
        *(format_row(r) for r in rows),
        "",
        f"Verdict ({'pass' if passed else 'FAIL'}; warm-up: the first {WARMUP} minute(s); growth: "
        "median of the last 3 minutes against the median of the first 3 after warm-up):",
        "",
        *(f"- {label}: {'ok' if ok else 'FAIL'} ({detail})" for label, ok, detail in checks),
        "",
        "Errors seen: "
        + (", ".join(sorted({k for r in rows for k in r["error_kinds"]})) or "none")
        + ".",
        "",
        "![per-minute figures](soak.png)",
        "",
    ]
    return "\n".join(lines)


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def main() -> None:
    loads = [load_average()]
    with tempfile.TemporaryDirectory(prefix="mt-soak-") as tmp, start_stack(Path(tmp)) as stack:
        cap = capacity(stack.url)
        rate = cap * LOAD
        print(f"capacity {cap:.0f} req/s; soaking at {rate:.0f} req/s for {MINUTES:g} min")
        print(HEADER)
        rows = soak(stack, rate)
        loads.append(load_average())
        tracebacks = stack.log.read_text(errors="replace").count("Traceback")
    if tracebacks:
        print(f"the stack's log has {tracebacks} traceback(s)")
        rows[-1]["errors"] += tracebacks
        rows[-1]["error_kinds"].append(f"{tracebacks} traceback(s) in the log")
    DOCS.mkdir(exist_ok=True)
    chart(rows, DOCS / "soak.png")
    text = report(rows, cap, rate, (loads[0], loads[1]))
    (DOCS / "soak.md").write_text(text)
    print(text.split("Verdict", 1)[1])


if __name__ == "__main__":
    main()
