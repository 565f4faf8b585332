"""Bot games as load for fault tests: every HTTP answer is recorded, every applied action counted.

The bots are deterministic per seed, so each game played through HTTP must match the same game
played in-process move for move; its final version must be 1 + the actions its client saw
applied (a lost write or a doubled one breaks either).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import requests
from mexican_train_client import Client, RetryPolicy

from service.tournament.runner import GameSpec, game_specs, play_http, play_local
from service.tournament.stats import GameResult

# Enough retries (Retry-After: 1) to outlast a 10-20 s outage; a game that gives up fails the test.
PATIENT = RetryPolicy(attempts=80, base=0.05, cap=0.5, max_retry_after=2.0)


@dataclass(frozen=True)
class Answer:
    """One HTTP exchange as the client saw it."""

    sent: float  # time.monotonic() when sent
    seconds: float  # until the response headers arrived
    method: str
    path: str
    status: int
    content_type: str
    retry_after: str | None
    code: str | None


@dataclass
class Journal:
    """Every answer of a run, and the count of applied actions, shared by all clients."""

    answers: list[Answer] = field(default_factory=list)
    applied: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, resp: requests.Response, *_args: Any, **_kwargs: Any) -> None:
        problem = resp.headers.get("Content-Type", "") == "application/problem+json"
        code = resp.json().get("code") if problem else None
        seconds = resp.elapsed.total_seconds()
        answer = Answer(
            time.monotonic() - seconds,
            seconds,
            str(resp.request.method),
            str(resp.request.path_url).split("?")[0],
            resp.status_code,
            resp.headers.get("Content-Type", ""),
            resp.headers.get("Retry-After"),
            code,
        )
        with self.lock:
            self.answers.append(answer)

    def count_applied(self) -> None:
        with self.lock:
            self.applied += 1


class CountingClient(Client):
    """The bots' client, patient with 503s, counting the actions applied on its current game."""

    def __init__(self, base_url: str, journal: Journal) -> None:
        super().__init__(base_url, pool_size=2, timeout=20.0, retry=PATIENT)
        self.session.hooks["response"].append(journal.hook)
        self.journal = journal
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
            self.journal.count_applied()
        return body


@dataclass
class Played:
    spec: GameSpec
    result: GameResult
    created: Mapping[str, Any]
    applied: int


def specs(count: int, base_seed: int) -> list[GameSpec]:
    """Short games (one round) of 2 to 4 bots."""
    bots = ("planner", "greedy", "random", "random")
    out = []
    for i in range(count):
        (spec,) = game_specs(bots[: 2 + i % 3], 1, base_seed=base_seed + i, options={"rounds": 1})
        out.append(GameSpec(i, spec.seed, spec.bots, spec.bot_seeds, spec.preset, spec.options))
    return out


def total_actions(game_specs_: Sequence[GameSpec]) -> int:
    """Moves and deals of all games, from playing them in-process."""
    return sum(r.moves + len(r.rounds[0]) for r in map(play_local, game_specs_))


def play(
    url: str, game_specs_: Sequence[GameSpec], journal: Journal, concurrency: int
) -> list[Played | BaseException]:
    local = threading.local()
    clients: list[CountingClient] = []

    def one(spec: GameSpec) -> Played | BaseException:
        try:
            client: CountingClient | None = getattr(local, "client", None)
            if client is None:
                client = local.client = CountingClient(url, journal)
                clients.append(client)
            result = play_http(client, spec)
            assert client.created is not None
            return Played(spec, result, client.created, client.applied)
        except Exception as exc:  # reported per game by the caller
            return exc

    try:
        with ThreadPoolExecutor(concurrency) as pool:
            return list(pool.map(one, game_specs_))
    finally:
        for client in clients:
            client.close()


def play_during(
    url: str,
    game_specs_: Sequence[GameSpec],
    fault: Callable[[Journal], object],
    *,
    concurrency: int = 6,
    journal: Journal | None = None,
) -> tuple[list[Played], Journal]:
    """Play the games while ``fault(journal)`` runs in this thread; every game must finish and
    match its in-process twin, with version = 1 + acknowledged actions."""
    journal = journal or Journal()
    box: dict[str, list[Played | BaseException]] = {}
    runner = threading.Thread(
        target=lambda: box.update(out=play(url, game_specs_, journal, concurrency))
    )
    runner.start()
    try:
        fault(journal)
    finally:
        runner.join(timeout=600)
    assert not runner.is_alive(), "games did not finish"
    outcomes = box["out"]
    failed = [(s.index, repr(o)) for s, o in zip(game_specs_, outcomes, strict=True)]
    assert all(isinstance(o, Played) for o in outcomes), failed
    played = [o for o in outcomes if isinstance(o, Played)]
    for game in played:
        check_game(url, game)
    return played, journal


def read_view(url: str, game_id: str) -> dict[str, Any]:
    """The game's public view; a 503 (a worker meeting a failed-over shard for the first time
    answers one, as documented) is asked again after its Retry-After, as any client does."""
    for _ in range(10):
        r = requests.get(f"{url}/api/v1/games/{game_id}", timeout=10)
        if r.status_code != 503:
            break
        time.sleep(float(r.headers.get("Retry-After", "1")))
    view: dict[str, Any] = r.json()
    return view


def check_game(url: str, game: Played) -> None:
    want = play_local(game.spec)
    view = read_view(url, str(game.created["game_id"]))
    assert view["status"] == "game_over", view
    assert (game.result.digest, game.result.totals) == (want.digest, want.totals)
    assert game.applied == want.moves + len(want.rounds[0]), "each move and deal seen once"
    assert view["version"] == 1 + game.applied, "no action lost or applied twice"


def wait_for(journal: Journal, applied: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while journal.applied < applied:
        assert time.monotonic() < deadline, f"only {journal.applied} of {applied} actions"
        time.sleep(0.01)
