"""``make bench-streams``: thousands of SSE watchers on the ``make run`` stack while games go on.

1. Starts what ``make run`` starts (service/launch/serve.py): a private Redis, the API pool, the
   streams pool (gevent) and nginx in front, with their default settings.
2. Creates GAMES 4-player ``standard`` games with ``auto_deal``; DRIVERS processes play random
   legal moves in them over HTTP (legal-moves, then the move with the seat's token) and note
   the wall time each version's response arrived.
3. Phase "alone": moves per second for SECONDS with nobody watching; run again after the
   watched phase, and the two averaged, so that the machine speeding up or slowing down over
   the run (other work on it) does not pass for the watchers' cost.
4. Phase "watched": WATCHERS SSE connections (WATCHERS / GAMES per game: each seat through its
   ``access_token``, the rest public) opened first and waited for until each holds its first
   entry (the time that takes is printed), then the same play for SECONDS. Each watcher notes
   when each entry id arrived.
5. Reports: entries lost and duplicated (every watcher must hold 1..final version of its game,
   each once), the latency from a move's response to each watcher's arrival (p50/p99/max),
   and the watched/alone ratio of moves per second. Numbers are printed, never asserted.

Watchers are raw sockets on gevent (HTTP/1.0, so the stream is plain bytes until nginx closes
it), one process: thousands of them cost little on the client side.
Environment: BENCH_GAMES (200), BENCH_WATCHERS (2000), BENCH_SECONDS (20), BENCH_DRIVERS (2),
BENCH_DRIVER_THREADS (3). Two processes of three threads keep the API pool busy: more threads
only fight over the drivers' GIL for the CPU the servers need (2x8 threads moved 272 moves/s
alone, 2x3 threads 308 in the same hour).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import random
import statistics
import tempfile
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import requests

from service.launch.nginx import Nginx, install_nginx
from service.launch.redis_server import RedisServer
from service.launch.serve import free_port, gunicorn

GAMES = int(os.environ.get("BENCH_GAMES", "200"))
WATCHERS = int(os.environ.get("BENCH_WATCHERS", "2000"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "20"))
DRIVERS = int(os.environ.get("BENCH_DRIVERS", "2"))
THREADS = int(os.environ.get("BENCH_DRIVER_THREADS", "3"))
SETTLE_SECONDS = 3.0
ATTACH_SECONDS = 120.0  # at most, for every watcher to hold its first entry


def create_games(base: str) -> list[dict[str, Any]]:
    with requests.Session() as http:
        body = {"players": ["a", "b", "c", "d"], "auto_deal": True}
        return [http.post(f"{base}/api/v1/games", json=body).json() for _ in range(GAMES)]


def play(base: str, games: list[dict[str, Any]], until: float, out: Any) -> None:
    """Play random moves in ``games`` until ``until``; put (moves, {(game, version): time})."""
    stamps: dict[tuple[str, int], float] = {}
    moves = 0
    rng = random.Random()
    lock = threading.Lock()

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

    threads = [threading.Thread(target=worker, args=(games[i::THREADS],)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    out.put((moves, stamps))


def drive(base: str, games: list[dict[str, Any]], seconds: float) -> tuple[int, dict[Any, float]]:
    until = time.time() + seconds
    queue: Any = mp.Queue()
    procs = [
        mp.Process(target=play, args=(base, games[i::DRIVERS], until, queue))
        for i in range(DRIVERS)
    ]
    for proc in procs:
        proc.start()
    total, stamps = 0, {}
    for _ in procs:
        moves, part = queue.get()
        total += moves
        stamps.update(part)
    for proc in procs:
        proc.join()
    return total, stamps


def watch(
    port: int, targets: list[tuple[str, str | None]], ready: Any, stop: Any, out: Any
) -> None:
    """One process of gevent socket readers; puts ``(attach seconds, readers attached,
    [(game, [(id, time), ...]), ...])``.

    ``ready`` is set once every reader holds its first entry (each game has a few already), so
    the watched phase measures delivery, not thousands of connections being set up at once."""
    from gevent import monkey

    monkey.patch_socket()
    import re
    import socket

    import gevent
    from gevent.event import Event

    found: list[tuple[str, list[tuple[int, float]]]] = []
    pattern = re.compile(rb"id: (\d+)\n")
    attached = [0]
    all_attached = Event()

    def reader(gid: str, token: str | None) -> None:
        seen: list[tuple[int, float]] = []
        found.append((gid, seen))
        query = f"?access_token={token}" if token else ""
        sock = socket.create_connection(("127.0.0.1", port))
        request = (
            f"GET /api/v1/games/{gid}/events{query} HTTP/1.0\r\nAccept: text/event-stream\r\n\r\n"
        )
        sock.sendall(request.encode())
        tail, counted = b"", False
        while True:
            data = sock.recv(65536)
            if not data:
                break
            now = time.time()
            tail += data
            last = 0
            for match in pattern.finditer(tail):
                seen.append((int(match.group(1)), now))
                last = match.end()
            tail = tail[max(last, len(tail) - 64) :]
            if seen and not counted:
                counted = True
                attached[0] += 1
                if attached[0] == len(targets):
                    all_attached.set()

    started = time.monotonic()
    greenlets = [gevent.spawn(reader, gid, token) for gid, token in targets]
    all_attached.wait(ATTACH_SECONDS)
    attach = time.monotonic() - started
    ready.set()
    while not stop.is_set():
        gevent.sleep(0.2)
    gevent.killall(greenlets, block=True, timeout=5)
    out.put((attach, attached[0], found))


def raise_file_limit() -> None:
    """Thousands of sockets: lift the soft limit to the hard one (children inherit it)."""
    import resource

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


def watched_phase(port: int, base: str, games: list[dict[str, Any]]) -> tuple[int, dict, list]:
    ready, stop, queue = mp.Event(), mp.Event(), mp.Queue()
    watcher = mp.Process(target=watch, args=(port, targets(games), ready, stop, queue))
    watcher.start()
    ready.wait(ATTACH_SECONDS + 10)
    moves, stamps = drive(base, games, SECONDS)
    time.sleep(SETTLE_SECONDS)  # let the last entries arrive
    stop.set()
    attach, attached, found = queue.get()
    watcher.join()
    print(f"attached: {attached} of {len(found)} watchers held their first entry in {attach:.1f} s")
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
        env = {**os.environ, "REDIS_URL": redis.url, "LOG_LEVEL": "warning"}
        api_port, streams_port, port = free_port(), free_port(), free_port()
        stack.enter_context(gunicorn(env, f"127.0.0.1:{api_port}", "api"))
        stack.enter_context(gunicorn(env, f"127.0.0.1:{streams_port}", "streams"))
        work = Path(tempfile.mkdtemp(prefix="mt-bench-streams-"))
        proxy = stack.enter_context(
            Nginx(nginx_binary, [api_port], port, work, streams_ports=[streams_port])
        )
        base = proxy.url
        games = create_games(base)
        print(f"{GAMES} games; {DRIVERS}x{THREADS} drivers; {SECONDS:.0f} s per phase")
        before, _ = drive(base, games, SECONDS)
        watched, stamps, found = watched_phase(port, base, games)
        finals = final_versions(base, games)
        after, _ = drive(base, games, SECONDS)
        print(f"moves/s alone: {before / SECONDS:.1f} before, {after / SECONDS:.1f} after")
        report(finals, (before + after) / 2, watched, stamps, found)


if __name__ == "__main__":
    main()
