"""End to end through the production topology: bots play complete games through nginx to two
gunicorn instances sharing one Redis, first healthy, then with one instance killed (kill -9).

Every game is replayed on the engine in-process with the same seed (the bots are deterministic
per seed), so the HTTP game must produce the very same move sequence and scores: a move lost or
applied twice would change them. The game's version must equal 1 + the actions the client saw
applied, and every tile of the set must be in exactly one place at the end.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import orjson
import pytest
import requests
from mexican_train_client import Client

from service.rules import PRESETS
from service.tournament.runner import GameSpec, game_specs, play_http, play_local
from service.tournament.stats import GameResult
from tests.e2e.conftest import Stack
from tests.metrics import metric_total

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BOTS = ("planner", "greedy", "random", "random")
CONCURRENCY = 16


def make_specs(count: int, base_seed: int) -> list[GameSpec]:
    """Every preset, 2 to 4 players, one or two rounds (two rounds exercise the re-deal)."""
    specs = []
    for i in range(count):
        options = {"rounds": 2 if i % 4 == 0 else 1}
        (spec,) = game_specs(
            BOTS[: 2 + i % 3], 1, base_seed=base_seed + i, preset=PRESETS[i % 3], options=options
        )
        specs.append(replace(spec, index=i))
    return specs


class Progress:
    def __init__(self) -> None:
        self.applied = 0
        self._lock = threading.Lock()

    def add(self) -> None:
        with self._lock:
            self.applied += 1


class RecordingClient(Client):
    """The bots' own client, remembering the game it created and counting applied actions."""

    def __init__(self, base_url: str, progress: Progress) -> None:
        super().__init__(base_url, pool_size=2, timeout=20.0)
        self.progress = progress
        self.created: Mapping[str, Any] | None = None
        self.applied = 0

    def create_game(self, *args: Any, **kwargs: Any) -> Any:
        self.created = super().create_game(*args, **kwargs)
        self.applied = 0
        return self.created

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        body = super().request(method, path, **kwargs)
        # A POST to a game (deal or move) that answered 2xx was applied exactly once.
        if method.upper() == "POST" and path.startswith("/api/v1/games/"):
            self.applied += 1
            self.progress.add()
        return body


@dataclass
class Played:
    spec: GameSpec
    result: GameResult
    created: Mapping[str, Any]
    applied: int


def play_all(
    url: str, specs: Sequence[GameSpec], progress: Progress
) -> list[Played | BaseException]:
    local = threading.local()
    clients: list[RecordingClient] = []

    def one(spec: GameSpec) -> Played:
        client: RecordingClient | None = getattr(local, "client", None)
        if client is None:
            client = local.client = RecordingClient(url, progress)
            clients.append(client)
        result = play_http(client, spec)
        assert client.created is not None
        return Played(spec, result, client.created, client.applied)

    def guarded(spec: GameSpec) -> Played | BaseException:
        try:
            return one(spec)
        except Exception as exc:  # reported per game by the caller
            return exc

    try:
        with ThreadPoolExecutor(CONCURRENCY) as pool:
            return list(pool.map(guarded, specs))
    finally:
        for client in clients:
            client.close()


def check_game(url: str, played: Played, expected: GameResult) -> None:
    gid = played.created["game_id"]
    view = requests.get(f"{url}/api/v1/games/{gid}", timeout=10).json()
    assert view["status"] == "game_over"
    # Same seed, same bots: the very same moves and scores as on the engine in-process.
    assert played.result.digest == expected.digest
    assert played.result.moves == expected.moves
    assert played.result.totals == expected.totals
    rounds = len(expected.rounds[0])
    assert played.applied == expected.moves + rounds, "client saw each move and deal once"
    assert view["version"] == 1 + played.applied, "no action applied twice or lost"
    # Tiles conserved: every tile of the set in exactly one hand or train, or the boneyard.
    n = int(view["rules"]["options"]["set"])
    set_size = (n + 1) * (n + 2) // 2
    seen: list[tuple[int, int]] = [(view["engine"], view["engine"])]
    for train in view["trains"]:
        seen += [(min(t), max(t)) for t in train["tiles"]]
    for seat in played.created["seats"]:
        own = requests.get(
            f"{url}/api/v1/games/{gid}",
            headers={"Authorization": f"Bearer {seat['token']}"},
            timeout=10,
        ).json()
        assert len(own["hand"]) == own["players"][seat["seat"]]["hand_size"]
        seen += [(min(t), max(t)) for t in own["hand"]]
    assert len(seen) == len(set(seen)), "a tile in two places"
    assert all(0 <= a <= b <= n for a, b in seen)
    assert len(seen) + view["boneyard_size"] == set_size


def nginx_lines(stack: Stack, start: int = 0) -> list[dict[str, Any]]:
    """The access log's complete lines from line ``start`` on: nginx may be writing the last."""
    logged = stack.nginx.access_log.read_bytes()
    lines = logged[: logged.rfind(b"\n") + 1].splitlines()[start:]
    return [orjson.loads(line) for line in lines if line.startswith(b"{")]


def served_by(line: Mapping[str, Any]) -> str:
    """The instance that produced the final answer (the last upstream nginx tried)."""
    return str(line["upstream"]).split(",")[-1].strip()


def run_phase(
    stack: Stack,
    specs: Sequence[GameSpec],
    during: Callable[[Progress], None] | None = None,
) -> tuple[list[Played], list[dict[str, Any]]]:
    expected = [play_local(spec) for spec in specs]
    before = len(nginx_lines(stack))
    progress = Progress()
    started = time.monotonic()
    box: dict[str, list[Played | BaseException]] = {}
    runner = threading.Thread(target=lambda: box.update(out=play_all(stack.url, specs, progress)))
    runner.start()
    if during is not None:
        during(progress)
    runner.join(timeout=600)
    assert not runner.is_alive(), "games did not finish"
    seconds = time.monotonic() - started
    outcomes = box["out"]
    failures = [
        (s.index, repr(o))
        for s, o in zip(specs, outcomes, strict=True)
        if not isinstance(o, Played)
    ]
    assert not failures, failures
    played = [o for o in outcomes if isinstance(o, Played)]
    for game, want in zip(played, expected, strict=True):
        check_game(stack.url, game, want)
    lines = nginx_lines(stack, before)
    print(f"\n{len(specs)} games, {len(lines)} requests through nginx in {seconds:.1f} s")
    errors = [line for line in lines if line["status"] >= 500]
    assert not errors, errors[:5]
    return played, lines


def app_lines(stack: Stack, request_id: str, want: int = 1) -> list[dict[str, Any]]:
    """The app's log lines for one request id, waiting briefly for ``want`` of them: a line is
    written as the response goes out, so the client can read the answer before it lands."""
    deadline = time.monotonic() + 5.0
    while True:
        found = [
            e for i in stack.instances for e in i.request_log() if e["request_id"] == request_id
        ]
        if len(found) >= want or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def nginx_has(stack: Stack, request_id: str) -> bool:
    """Whether nginx logged ``request_id``; nginx logs after the response, so wait briefly."""
    deadline = time.monotonic() + 5.0
    while not any(line["request_id"] == request_id for line in nginx_lines(stack)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_request_ids_forwarded_headers_and_body_limits(stack: Stack) -> None:
    # The caller's request id reaches the app and comes back, once.
    rid = f"e2e-{uuid.uuid4().hex}"
    spoofed = {"X-Request-ID": rid, "X-Forwarded-For": "198.51.100.7"}
    r = requests.get(stack.url + "/healthz", headers=spoofed, timeout=10)
    assert r.status_code == 200
    assert r.headers["X-Request-ID"] == rid
    (line,) = app_lines(stack, rid)
    # The app trusts exactly one proxy: the client nginx saw, not what the client claimed.
    assert line["remote_addr"] == "127.0.0.1"
    # Without one, nginx makes the id; the app logs that same id.
    made = requests.get(stack.url + "/healthz", timeout=10).headers["X-Request-ID"]
    assert len(made) == 32
    assert len(app_lines(stack, made)) == 1
    assert nginx_has(stack, made)
    # An unsafe id is replaced by nginx, and the app logs the replacement.
    replaced = requests.get(
        stack.url + "/healthz", headers={"X-Request-ID": 'x" y'}, timeout=10
    ).headers["X-Request-ID"]
    assert len(replaced) == 32 and len(app_lines(stack, replaced)) == 1
    # Bodies: above the app's limit the app answers 413, far above it nginx does; same problem.
    for size in (100_000, 1_000_000):
        big = b'{"players": ["' + b"a" * size + b'"]}'
        r = requests.post(
            stack.url + "/api/v1/games",
            data=big,
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        assert r.status_code == 413, size
        assert r.headers["Content-Type"] == "application/problem+json"
        assert r.json()["code"] == "body_too_large"
        assert r.headers["X-Request-ID"]
    # Metrics are for the scraper on each instance, not for the public side of the balancer.
    hidden = requests.get(stack.url + "/metrics", timeout=10)
    assert hidden.status_code == 404
    assert hidden.json()["code"] == "not_found"
    # nginx's own script for its page of words (served whether or not an instance answers)
    # carries the caller's id like every other answer.
    script = requests.get(stack.url + "/_page/reload.js", headers={"X-Request-ID": rid}, timeout=10)
    assert script.status_code == 200
    assert script.headers["X-Request-ID"] == rid


def test_bot_games_through_nginx_on_two_instances(stack: Stack) -> None:
    specs = make_specs(60, base_seed=10_000)
    _, lines = run_phase(stack, specs)
    by_instance = Counter(served_by(line) for line in lines)
    ports = [f"127.0.0.1:{i.port}" for i in stack.instances]
    print(
        f"\nhealthy: {len(specs)} games, {len(lines)} requests via nginx, by instance {by_instance}"
    )
    assert set(by_instance) == set(ports), by_instance
    # Round robin: each instance took a fair share of the requests.
    assert min(by_instance.values()) > 0.3 * len(lines), by_instance
    for instance in stack.instances:
        assert not [e for e in instance.request_log() if e["status"] >= 500]
        text = requests.get(instance.url + "/metrics", timeout=10).text
        assert metric_total(text, "http_requests_total") > 0.3 * len(lines)
        assert metric_total(text, "game_moves_applied_total") > 0


def test_kill_one_instance_mid_run_loses_no_game(stack: Stack) -> None:
    victim, survivor = stack.instances
    specs = make_specs(50, base_seed=20_000)
    total = sum(r.moves + len(r.rounds[0]) for r in map(play_local, specs))
    killed_at: list[int] = []
    log_at_kill: list[int] = []

    def kill_when_a_third_is_played(progress: Progress) -> None:
        deadline = time.monotonic() + 300
        while progress.applied < total // 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        killed_at.append(progress.applied)
        victim.kill9()
        log_at_kill.append(len(nginx_lines(stack)))

    _, lines = run_phase(stack, specs, during=kill_when_a_third_is_played)
    assert not victim.alive
    assert total // 3 <= killed_at[0] < total, "killed while games were being played"
    dead = f"127.0.0.1:{victim.port}"
    alive = f"127.0.0.1:{survivor.port}"
    # nginx noticed: requests sent to the dead instance were retried on the survivor.
    retried = [line for line in lines if dead in str(line["upstream"]) and served_by(line) == alive]
    posts = sum(1 for line in retried if line["method"] == "POST")
    statuses = Counter(line["status"] for line in lines)
    print(
        f"\nkill -9 after {killed_at[0]}/{total} actions: {len(lines)} requests, {len(retried)} "
        f"retried by nginx on the survivor ({posts} POST), statuses {dict(statuses)}"
    )
    assert retried, "no request was retried on the surviving instance"
    # After the kill everything was answered by the survivor (past a margin for the requests
    # the victim had answered just before dying, which nginx may log a moment later).
    after = nginx_lines(stack, log_at_kill[0] + 4 * CONCURRENCY)
    assert len(after) > 1000
    assert [line for line in after if served_by(line) != alive] == []


def test_restarted_instance_rejoins(stack: Stack) -> None:
    """After the kill, the instance comes back on its port: nginx tries it again once its
    fail_timeout has passed, and new games are served by both instances again."""
    victim = stack.instances[0]
    if victim.alive:  # the kill test ran on another xdist worker: kill it here
        victim.kill9()
    victim.start()
    address = f"127.0.0.1:{victim.port}"
    deadline = time.monotonic() + 30
    while True:
        start = len(nginx_lines(stack))
        requests.get(stack.url + "/healthz", timeout=10)
        if any(served_by(line) == address for line in nginx_lines(stack, start)):
            break
        assert time.monotonic() < deadline, "nginx never sent traffic to the restarted instance"
        time.sleep(0.2)
    _, lines = run_phase(stack, make_specs(12, base_seed=30_000))
    by_instance = Counter(served_by(line) for line in lines)
    assert set(by_instance) == {f"127.0.0.1:{i.port}" for i in stack.instances}, by_instance


def test_graceful_stop_mid_run_is_invisible(stack: Stack) -> None:
    """A rolling deploy: SIGTERM one instance while games run. gunicorn stops accepting, finishes
    what it holds; nginx sends the rest to the other instance. No game notices."""
    for instance in stack.instances:
        if not instance.alive:
            instance.start()
    leaving = stack.instances[1]
    specs = make_specs(24, base_seed=40_000)
    total = sum(r.moves + len(r.rounds[0]) for r in map(play_local, specs))

    def stop_when_a_third_is_played(progress: Progress) -> None:
        deadline = time.monotonic() + 300
        while progress.applied < total // 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        leaving.stop()  # SIGTERM, graceful: waits for the requests in flight
        log_at_stop.append(len(nginx_lines(stack)))

    log_at_stop: list[int] = []
    _, lines = run_phase(stack, specs, during=stop_when_a_third_is_played)
    assert not leaving.alive
    assert not [e for e in leaving.request_log() if e["status"] >= 500]
    staying = f"127.0.0.1:{stack.instances[0].port}"
    after = nginx_lines(stack, log_at_stop[0] + 4 * CONCURRENCY)  # margin: see the kill test
    assert after and all(served_by(line) == staying for line in after)
    print(f"\ngraceful stop: {len(lines)} requests, {len(after)} after the stop, none failed")


def test_no_instance_left_is_a_problem_not_a_hang(stack: Stack) -> None:
    for instance in stack.instances:
        instance.stop()
    r = requests.get(stack.url + "/api/v1/games/abcdefgh1234", timeout=30)
    assert r.status_code == 503
    assert r.headers["Content-Type"] == "application/problem+json"
    assert r.headers["Retry-After"] == "1"
    assert r.json()["code"] == "unavailable"
    assert len(r.headers["X-Request-ID"]) == 32
