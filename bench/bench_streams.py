"""``make bench-streams``: thousands of SSE watchers on the ``make run`` stack while games go on.

1. Starts what ``make run`` starts (devstack/serve.py): a private Redis, the API pool, the
   streams pool (gevent) and nginx in front, with their default settings.
2. Creates GAMES 4-player ``standard`` games with ``auto_deal``; DRIVERS processes play random
   legal moves in them over HTTP (legal-moves, then the move with the seat's token) and note
   the wall time each version's response arrived.
3. Phase "alone": moves per second for SECONDS with nobody watching; run again after the
   watched phase (once the streams pool holds none of the watchers' streams), and the two
   averaged, so that the machine speeding up or slowing down over the run (other work on it)
   does not pass for the watchers' cost.
4. Phase "watched": WATCHERS SSE connections (WATCHERS / GAMES per game: each seat through its
   ``access_token``, the rest public) opened first and waited for until each holds its first
   entry (the time that takes is printed), then the same play for SECONDS. Each watcher notes
   when each entry id arrived.
5. Reports: entries lost and duplicated (every watcher must hold 1..final version of its game,
   each once), the latency from a move's response to each watcher's arrival (p50/p99/max),
   and the watched/alone ratio of moves per second; the CPU of each part of the stack in the
   watched phase, and of the whole machine in every phase (the kernel's interrupt work, which
   no process is charged for, and the idle cores). Numbers are printed, never asserted.

Watchers are raw sockets read by one epoll loop (HTTP/1.0, so the stream is plain bytes until
nginx closes it), one process: thousands of them cost little on the client side.
Environment: BENCH_GAMES (200), WATCHERS or BENCH_WATCHERS (2000), BENCH_SECONDS (20),
BENCH_DRIVERS (2), BENCH_DRIVER_THREADS (3), BENCH_DRIVER_NICE (10). Two processes of three
threads keep the API pool busy: more threads only fight over the drivers' GIL for the CPU the
servers need (2x8 threads moved 272 moves/s alone, 2x3 threads 308 in the same hour).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import resource
import statistics
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil
import requests

from devstack.nginx import Nginx, install_nginx
from devstack.redis_server import RedisServer
from devstack.serve import free_port, gunicorn

GAMES = int(os.environ.get("BENCH_GAMES", "200"))
# ``make bench-streams WATCHERS=10000`` (make puts the command line's variables in the
# environment) or BENCH_WATCHERS.
WATCHERS = int(os.environ.get("WATCHERS") or os.environ.get("BENCH_WATCHERS") or "2000")
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
DRIVERS = int(os.environ.get("BENCH_DRIVERS", "2"))
THREADS = int(os.environ.get("BENCH_DRIVER_THREADS", "3"))
# The drivers' nice value: the servers are served first when the two cores are short, as they
# would be with the players on other machines (the watchers keep the default, since their
# arrival times are the measure). The API pool runs at nice 5 (deploy/gunicorn.conf.py), so
# the drivers yield to it too.
DRIVER_NICE = int(os.environ.get("BENCH_DRIVER_NICE", "10"))
SETTLE_SECONDS = 3.0
ATTACH_SECONDS = 120.0  # at most, for every watcher to hold its first entry


def create_games(base: str) -> list[dict[str, Any]]:
    with requests.Session() as http:
        body = {"players": ["a", "b", "c", "d"], "auto_deal": True}
        return [http.post(f"{base}/api/v1/games", json=body).json() for _ in range(GAMES)]


def play(base: str, games: list[dict[str, Any]], until: float, out: Any) -> None:
    """Play random moves in ``games`` until ``until``; put (moves, {(game, version): time})."""
    os.nice(DRIVER_NICE)
    stamps: dict[tuple[str, int], float] = {}
    moves = 0
    rng = random.Random()
    lock = threading.Lock()
    waited = [0.0]

    def worker(mine: list[dict[str, Any]]) -> None:
        nonlocal moves
        with requests.Session() as http:
            turns = {
                g["game_id"]: http.get(f"{base}/api/v1/games/{g['game_id']}").json()["turn"]
                for g in mine
            }
            while time.time() < until:
                for g in mine:
                    gid, turn = g["game_id"], turns[g["game_id"]]
                    if turn is None:
                        continue
                    auth = {"Authorization": f"Bearer {g['seats'][turn]['token']}"}
                    legal = http.get(f"{base}/api/v1/games/{gid}/legal-moves", headers=auth)
                    before = legal.json()["version"]
                    move = rng.choice(legal.json()["moves"])
                    done = http.post(f"{base}/api/v1/games/{gid}/moves", json=move, headers=auth)
                    now = time.time()
                    body = done.json()
                    with lock:
                        for version in range(before + 1, body["version"] + 1):
                            stamps[(gid, version)] = now
                        moves += 1
                    turns[gid] = body["turn"]
        with lock:  # a thread's run-queue time is gone from /proc once it has ended
            waited[0] += thread_run_queue_seconds()

    threads = [threading.Thread(target=worker, args=(games[i::THREADS],)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    used = resource.getrusage(resource.RUSAGE_SELF)
    out.put((moves, stamps, used.ru_utime + used.ru_stime, waited[0]))


def thread_run_queue_seconds() -> float:
    """The calling thread's run-queue seconds so far (see :func:`run_queue_seconds`)."""
    return int(Path("/proc/thread-self/schedstat").read_text().split()[1]) / 1e9


def run_queue_seconds(pid: int) -> float:
    """Seconds the process's threads have spent runnable but waiting for a core (the kernel's
    run-queue time, /proc/<pid>/task/<tid>/schedstat): the CPU a part got tells little when
    the two cores are shared, the wait for them tells whether it was starved."""
    tasks = Path(f"/proc/{pid}/task")
    return sum(int((t / "schedstat").read_text().split()[1]) for t in tasks.iterdir()) / 1e9


def drive(
    base: str, games: list[dict[str, Any]], seconds: float
) -> tuple[int, dict[Any, float], float, float]:
    """Moves made, when each version's answer came, and the drivers' CPU and run-queue
    seconds."""
    until = time.time() + seconds
    queue: Any = mp.Queue()
    procs = [
        mp.Process(target=play, args=(base, games[i::DRIVERS], until, queue))
        for i in range(DRIVERS)
    ]
    for proc in procs:
        proc.start()
    total, stamps, cpu, waited = 0, {}, 0.0, 0.0
    for _ in procs:
        moves, part, used, wait = queue.get()
        total += moves
        stamps.update(part)
        cpu += used
        waited += wait
    for proc in procs:
        proc.join()
    return total, stamps, cpu, waited


def machine_seconds() -> dict[str, float]:
    """CPU seconds of the whole machine so far, by kind (/proc/stat). The kernel's interrupt
    work, loopback TCP's receive side among it, is charged to no process: the parts' CPU
    leaves it out, and this shows it, with what the cores left idle."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in fields)
    tick = os.sysconf("SC_CLK_TCK")
    kinds = {"user": user + nice, "system": system, "interrupts": irq + softirq}
    kinds |= {"idle": idle + iowait, "stolen": steal}
    return {kind: ticks / tick for kind, ticks in kinds.items()}


def machine_line(phase: str, before: dict[str, float], seconds: float) -> str:
    after = machine_seconds()
    spent = ", ".join(f"{kind} {(after[kind] - before[kind]) / seconds:.2f}" for kind in after)
    return f"the machine in the {phase} phase, in cores: {spent}"


def timed_drive(
    phase: str, base: str, games: list[dict[str, Any]]
) -> tuple[int, dict[Any, float], float, float]:
    """:func:`drive` for SECONDS, printing what the whole machine spent meanwhile."""
    before, started = machine_seconds(), time.monotonic()
    driven = drive(base, games, SECONDS)
    print(machine_line(phase, before, time.monotonic() - started))
    return driven


def cpu_by_part() -> dict[str, float]:
    """CPU seconds used so far by each part of the stack this bench started (gunicorn pools by
    their GUNICORN_POOL, nginx, Redis, and the bench's own watcher process)."""
    found: dict[str, float] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            times = proc.cpu_times()
            part = part_of(proc)
        except psutil.Error:
            continue  # ended meanwhile
        found[part] = found.get(part, 0.0) + times.user + times.system
    return found


def waits_by_part() -> dict[str, float]:
    """Run-queue seconds so far of each part of the stack this bench started."""
    found: dict[str, float] = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            part = part_of(proc)
            waited = run_queue_seconds(proc.pid)
        except (psutil.Error, OSError, ValueError, IndexError):
            continue  # ended meanwhile
        found[part] = found.get(part, 0.0) + waited
    return found


def part_of(proc: psutil.Process) -> str:
    name = proc.name()
    if "nginx" in name or "redis" in name:
        return "nginx" if "nginx" in name else "redis"
    pool = proc.environ().get("GUNICORN_POOL")
    return f"{pool} pool" if pool else "watchers"


class Watcher:
    """One SSE connection of the watcher process: its request until sent, then what it read."""

    __slots__ = ("head", "request", "seen", "sock", "tail", "why")

    def __init__(self, sock: Any, request: bytes, seen: list[tuple[int, float]]) -> None:
        self.sock, self.request, self.seen, self.tail = sock, request, seen, b""
        self.head = b""  # the answer's first bytes: what a watcher without entries was told
        self.why = "no answer"  # how its connection ended, if it did

    def unattached(self) -> str:
        """Why a watcher holds no entry: its answer's status line, or how its socket ended."""
        status = self.head.split(b"\r\n", 1)[0].decode("latin-1") if self.head else ""
        return f"{status or 'nothing read'} ({self.why})"


def watch(
    port: int, targets: list[tuple[str, str | None]], ready: Any, stop: Any, out: Any
) -> None:
    """One process reading every watcher's socket from one epoll loop; puts ``(attach seconds,
    readers attached, [(game, [(id, time), ...]), ...])``.

    An entry's arrival is the time the poll that reported its socket returned: the bytes were
    in the socket by then, however long the loop then takes over the other sockets of the same
    poll. A plain loop, not a greenlet per socket: the watchers stand for clients on other
    machines, so the CPU they take from the stack is the bench's, and kept small.

    ``ready`` is set once every reader holds its first entry (each game has a few already), so
    the watched phase measures delivery, not thousands of connections being set up at once."""
    import re
    import select
    import socket

    poller = select.epoll()
    found: list[tuple[str, list[tuple[int, float]]]] = []
    watchers: dict[int, Watcher] = {}
    for gid, token in targets:
        query = f"?access_token={token}" if token else ""
        path = f"/api/v1/games/{gid}/events{query}"
        request = f"GET {path} HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n".encode()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))  # EINPROGRESS: writable once connected
        seen: list[tuple[int, float]] = []
        found.append((gid, seen))
        watchers[sock.fileno()] = Watcher(sock, request, seen)
        poller.register(sock.fileno(), select.EPOLLOUT)
    pattern = re.compile(rb"id: (\d+)\n")
    started, attached, attach = time.monotonic(), set(), None
    while not stop.is_set():
        events = poller.poll(0.2)
        now = time.time()
        for fd, _ in events:
            watcher = watchers[fd]
            try:
                if watcher.request:
                    watcher.sock.send(watcher.request)  # a few dozen bytes: sent whole
                    watcher.request = b""
                    poller.modify(fd, select.EPOLLIN)
                    continue
                data = watcher.sock.recv(65536)
            except OSError as err:  # refused or reset: what it holds is checked as lost
                data, watcher.why = b"", type(err).__name__
            if not data:
                poller.unregister(fd)
                watcher.why = "closed" if watcher.why == "no answer" else watcher.why
                continue
            if len(watcher.head) < 256:
                watcher.head += data[:256]
            tail = watcher.tail + data
            last = 0
            for match in pattern.finditer(tail):
                watcher.seen.append((int(match.group(1)), now))
                last = match.end()
            watcher.tail = tail[max(last, len(tail) - 64) :]
            if watcher.seen and len(attached) < len(targets):
                attached.add(fd)
        if attach is None and (
            len(attached) == len(targets) or time.monotonic() - started > ATTACH_SECONDS
        ):
            attach = time.monotonic() - started
            ready.set()
    unattached = Counter(w.unattached() for w in watchers.values() if not w.seen)
    for watcher in watchers.values():
        watcher.sock.close()
    out.put((attach, len(attached), found, dict(unattached)))


#: The most the bench waits for the streams pool to close the watchers' streams.
CLOSE_SECONDS = 60.0


def open_streams(port: int) -> int:
    """Sockets the server on ``port`` still holds for a connection (IPv4 loopback): any state
    but listening (0A), owned by a process (an inode). A stream whose client left is in
    CLOSE_WAIT until the pool notices, at its next write."""
    local = f":{port:04X}"
    with open("/proc/net/tcp") as table:
        rows = [line.split() for line in table.readlines()[1:]]
    return sum(1 for row in rows if row[1].endswith(local) and row[3] != "0A" and row[9] != "0")


def streams_closed(port: int) -> float:
    """Seconds until the streams pool holds no watcher's stream (at most CLOSE_SECONDS): the
    phase after the watched one must not pay for closing them, which would flatter the ratio."""
    started = time.monotonic()
    while open_streams(port) and time.monotonic() - started < CLOSE_SECONDS:
        time.sleep(0.25)
    return time.monotonic() - started


def raise_file_limit() -> None:
    """Thousands of sockets: lift the soft limit to the hard one (children inherit it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def targets(games: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    """WATCHERS / GAMES watchers per game: its seats first (by token), then the public."""
    per_game = max(1, WATCHERS // GAMES)
    found: list[tuple[str, str | None]] = []
    for g in games:
        tokens = [s["token"] for s in g["seats"]]
        found += [(g["game_id"], (tokens[i] if i < len(tokens) else None)) for i in range(per_game)]
    return found


def command_calls(redis_url: str) -> dict[str, int]:
    """Redis' count of calls per command so far (INFO commandstats)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        stats = client.info("commandstats")
    finally:
        client.close()
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


def watched_phase(
    port: int, base: str, games: list[dict[str, Any]], redis_url: str
) -> tuple[int, dict, list]:
    ready, stop, queue = mp.Event(), mp.Event(), mp.Queue()
    watcher = mp.Process(target=watch, args=(port, targets(games), ready, stop, queue))
    watcher.start()
    ready.wait(ATTACH_SECONDS + 10)
    # Said as it starts, so a profiler can be pointed at the watched play alone.
    print(f"watched play starts: {SECONDS:.0f} s", flush=True)
    before, calls, waited = cpu_by_part(), command_calls(redis_url), waits_by_part()
    moves, stamps, drivers, drivers_waited = timed_drive("watched", base, games)
    time.sleep(SETTLE_SECONDS)  # let the last entries arrive
    after, called, waits = cpu_by_part(), command_calls(redis_url), waits_by_part()
    stop.set()
    made = {name: n - calls.get(name, 0) for name, n in called.items()}
    busiest = sorted(made.items(), key=lambda kv: -kv[1])[:14]
    print("Redis calls in the watched phase: " + ", ".join(f"{k} {v}" for k, v in busiest))
    used = {part: after[part] - before.get(part, 0.0) for part in after}
    used["drivers"] = drivers
    spent = SECONDS + SETTLE_SECONDS
    print(
        f"CPU of the watched phase, in cores ({spent:.0f} s): "
        + ", ".join(f"{part} {cpu / spent:.2f}" for part, cpu in sorted(used.items()))
    )
    waits["drivers"] = waited.get("drivers", 0.0) + drivers_waited
    print(
        "Run-queue wait of the watched phase, in cores: "
        + ", ".join(
            f"{part} {(w - waited.get(part, 0.0)) / spent:.2f}" for part, w in sorted(waits.items())
        )
    )
    attach, attached, found, unattached = queue.get()
    watcher.join()
    print(f"attached: {attached} of {len(found)} watchers held their first entry in {attach:.1f} s")
    if unattached:
        print(
            "watchers without an entry, by answer: "
            + ", ".join(
                f"{why}: {n}" for why, n in sorted(unattached.items(), key=lambda kv: -kv[1])
            )
        )
    return moves, stamps, found


def final_versions(base: str, games: list[dict[str, Any]]) -> dict[str, int]:
    """Each game's version once the watched phase is over: what every watcher must hold."""
    with requests.Session() as http:
        return {
            g["game_id"]: http.get(f"{base}/api/v1/games/{g['game_id']}").json()["version"]
            for g in games
        }


def report(
    finals: dict[str, int], alone: float, watched: int, stamps: dict[Any, float], found: list[Any]
) -> None:
    lost = duplicated = 0
    delays: list[float] = []
    for gid, seen in found:
        ids = [i for i, _ in seen]
        duplicated += len(ids) - len(set(ids))
        lost += len(set(range(1, finals[gid] + 1)) - set(ids))
        delays += [(at - stamps[(gid, i)]) * 1000 for i, at in seen if (gid, i) in stamps]
    delays.sort()
    print(f"watchers: {len(found)} over {GAMES} games; entries delivered: {len(delays)} timed")
    print(f"lost: {lost}  duplicated: {duplicated}")
    if delays:
        p50, p99 = statistics.median(delays), delays[int(len(delays) * 0.99) - 1]
        print(
            f"move response -> arrival: p50 {p50:.1f} ms  p99 {p99:.1f} ms  max {delays[-1]:.1f} ms"
        )
    print(
        f"moves/s alone: {alone / SECONDS:.1f}  watched: {watched / SECONDS:.1f}  "
        f"ratio: {watched / max(alone, 1):.2f}"
    )


def main() -> None:
    raise_file_limit()
    nginx_binary = install_nginx()
    assert nginx_binary, "nginx is needed (root and apt-get install it)"
    with ExitStack() as stack:
        redis = stack.enter_context(RedisServer())
        # Every watcher connects from this one machine: no per-address cap on streams.
        env = {
            **os.environ,
            "REDIS_URL": redis.url,
            "LOG_LEVEL": "warning",
            "STREAMS_PER_ADDRESS": "0",
        }
        api_port, streams_port, port = free_port(), free_port(), free_port()
        stack.enter_context(gunicorn(env, f"127.0.0.1:{api_port}", "api"))
        stack.enter_context(gunicorn(env, f"127.0.0.1:{streams_port}", "streams"))
        work = Path(tempfile.mkdtemp(prefix="mt-bench-streams-"))
        proxy = stack.enter_context(
            Nginx(nginx_binary, [api_port], port, work, streams_ports=[streams_port])
        )
        base = proxy.url
        games = create_games(base)
        print(
            f"{GAMES} games; {DRIVERS}x{THREADS} drivers at nice {DRIVER_NICE}; "
            f"{SECONDS:.0f} s per phase"
        )
        before, *_ = timed_drive("first alone", base, games)
        watched, stamps, found = watched_phase(port, base, games, redis.url)
        finals = final_versions(base, games)
        closing = streams_closed(streams_port)
        after, *_ = timed_drive("second alone", base, games)
        print(f"the watchers' streams closed {closing:.1f} s after the watched phase")
        print(f"moves/s alone: {before / SECONDS:.1f} before, {after / SECONDS:.1f} after")
        report(finals, (before + after) / 2, watched, stamps, found)


if __name__ == "__main__":
    main()
