"""Play complete games between bots, in-process on the engine or through the HTTP API.

Determinism: game ``i`` uses engine seed ``base + i``; the seat order and each bot's RNG seed are
derived from that seed alone, and bots see only the seat view and the (sorted) legal moves, so
the same seed gives the same move sequence and scores in both modes.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import orjson

from service import rules
from service.bots.base import Bot
from service.bots.registry import make_bot
from service.client import Client, StaleVersion
from service.rules import Move, Status
from service.tournament.stats import GameResult

MAX_ACTIONS = 200_000  # a guard against a bot/engine bug looping forever, far above real games


@dataclass(frozen=True)
class GameSpec:
    """Everything that fixes one game: seed, which bot sits where, and each bot's RNG seed."""

    index: int
    seed: int
    bots: tuple[str, ...]
    bot_seeds: tuple[int, ...]
    preset: str = "standard"
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def players(self) -> list[str]:
        return [f"{name}-{seat}" for seat, name in enumerate(self.bots)]

    def make_bots(self) -> list[Bot]:
        return [make_bot(n, s) for n, s in zip(self.bots, self.bot_seeds, strict=True)]


def game_specs(
    bots: Sequence[str],
    games: int,
    *,
    base_seed: int = 0,
    preset: str = "standard",
    options: Mapping[str, Any] | None = None,
    shuffle_seats: bool = True,
) -> list[GameSpec]:
    """Game ``i``: seed ``base_seed + i``; seats shuffled and bot seeds drawn from that seed."""
    specs = []
    for i in range(games):
        seed = base_seed + i
        rng = random.Random(seed)
        order = list(bots)
        if shuffle_seats:
            rng.shuffle(order)
        bot_seeds = tuple(rng.getrandbits(63) for _ in order)
        specs.append(GameSpec(i, seed, tuple(order), bot_seeds, preset, dict(options or {})))
    return specs


class _Recorder:
    """Hashes the move sequence (and optionally keeps it) so two runs can be compared cheaply."""

    def __init__(self, keep: bool) -> None:
        self.hash = hashlib.sha256()
        self.count = 0
        self.log: list[tuple[int, dict[str, Any]]] | None = [] if keep else None

    def add(self, seat: int, move: Move) -> None:
        obj = move.to_json()
        if obj.get("tile") is not None:
            # Orientation is the server's business; compare tiles unordered.
            a, b = obj["tile"]
            obj["tile"] = [min(a, b), max(a, b)]
        self.hash.update(orjson.dumps([seat, obj], option=orjson.OPT_SORT_KEYS))
        self.count += 1
        if self.log is not None:
            self.log.append((seat, obj))


def _result(spec: GameSpec, score: Mapping[str, Any], rec: _Recorder, started: float) -> GameResult:
    players = sorted(score["players"], key=lambda p: int(p["seat"]))
    return GameResult(
        index=spec.index,
        seed=spec.seed,
        bots=list(spec.bots),
        rounds=[[int(x) for x in p["rounds"]] for p in players],
        totals=[int(p["total"]) for p in players],
        winners=[int(s) for s in score.get("winners") or []],
        moves=rec.count,
        digest=rec.hash.hexdigest()[:16],
        seconds=time.perf_counter() - started,
        move_log=rec.log,
    )


def play_local(spec: GameSpec, *, record: bool = False) -> GameResult:
    """One complete game in-process on the engine (every round)."""
    started = time.perf_counter()
    bots = spec.make_bots()
    state = rules.new_game(spec.players, spec.preset, spec.options, spec.seed)
    rec = _Recorder(record)
    for _ in range(MAX_ACTIONS):
        if state.status in (Status.WAITING_DEAL, Status.ROUND_OVER):
            rules.deal(state)
            continue
        if state.status == Status.GAME_OVER:
            break
        seat = state.turn
        assert seat is not None
        moves = rules.legal_moves(state, seat)
        # A forced move is not offered to the bot, in both modes (over HTTP it saves a request).
        move = (
            moves[0] if len(moves) == 1 else bots[seat].choose(rules.game_view(state, seat), moves)
        )
        rec.add(seat, move)
        rules.apply(state, seat, move)
    else:
        raise RuntimeError(f"game {spec.index} (seed {spec.seed}) did not finish")
    return _result(spec, rules.score_view(state), rec, started)


def play_http(client: Client, spec: GameSpec, *, record: bool = False) -> GameResult:
    """One complete game through the HTTP API: the host deals each round, each seat its turns."""
    started = time.perf_counter()
    created = client.create_game(
        spec.players, preset=spec.preset, options=spec.options, seed=spec.seed
    )
    rec = _Recorder(record)
    score = drive_http(client, created, spec.make_bots(), rec.add)
    return _result(spec, score, rec, started)


def drive_http(
    client: Client,
    created: Mapping[str, Any],
    bots: Sequence[Bot],
    on_move: Callable[[int, Move], object] | None = None,
) -> dict[str, Any]:
    """Play an existing game to its end (``created`` = the create response, with the tokens).

    Returns the final score view. Works from any point, e.g. a game imported from a position.
    """
    gid = str(created["game_id"])
    host = str(created["host_token"])
    tokens = {int(s["seat"]): str(s["token"]) for s in created["seats"]}
    view = client.view(gid)
    view_seat: int | None = None  # whose hand `view` shows (None: public/host view)
    for _ in range(MAX_ACTIONS):
        status = view["status"]
        if status == Status.GAME_OVER:
            break
        try:
            if status in (Status.WAITING_DEAL, Status.ROUND_OVER):
                view = client.deal(gid, token=host, if_match=int(view["version"]))
                view_seat = None
                continue
            seat = int(view["turn"])
            token = tokens[seat]
            listed = client.legal_moves(gid, token=token)
            version = int(listed["version"])
            moves = [Move.from_json(m) for m in listed["moves"]]
            if len(moves) == 1:
                move = moves[0]  # forced: no need to fetch the hand (saves a request)
            else:
                if view_seat != seat or int(view["version"]) != version:
                    view = client.view(gid, token=token)
                    view_seat = seat
                    if int(view["version"]) != version:
                        continue  # the game moved between the two reads: decide on one state
                move = bots[seat].choose(view, moves)
            view = client.move(gid, move.to_json(), token=token, if_match=version)
            if on_move is not None:
                on_move(seat, move)
        except StaleVersion:
            # Someone else changed the game (should not happen in a tournament): decide again.
            view = client.view(gid)
            view_seat = None
            continue
        # The response is the caller's view: reusable only while that seat keeps the turn.
        view_seat = seat
    else:
        raise RuntimeError(f"game {gid} did not finish")
    return client.score(gid)


def run_local(
    specs: Sequence[GameSpec], *, record: bool = False, progress: Callable[[], object] | None = None
) -> Iterator[GameResult]:
    for spec in specs:
        yield play_local(spec, record=record)
        if progress:
            progress()


def run_http(
    base_url: str,
    specs: Sequence[GameSpec],
    *,
    concurrency: int = 8,
    record: bool = False,
    progress: Callable[[], object] | None = None,
) -> Iterator[GameResult | BaseException]:
    """Games in a thread pool (one HTTP session per thread); yields results as they finish.

    A game that fails yields its exception instead, so one bad game does not lose the others.
    """
    local = threading.local()
    clients: list[Client] = []
    lock = threading.Lock()

    def client() -> Client:
        c: Client | None = getattr(local, "client", None)
        if c is None:
            c = Client(base_url, pool_size=2)
            local.client = c
            with lock:
                clients.append(c)
        return c

    def one(spec: GameSpec) -> GameResult:
        return play_http(client(), spec, record=record)

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency))
    try:
        futures: list[Future[GameResult]] = [pool.submit(one, s) for s in specs]
        for fut in as_completed(futures):
            exc = fut.exception()
            yield exc if exc is not None else fut.result()
            if progress:
                progress()
    finally:
        # On Ctrl-C (or an abandoned generator) drop the games not started yet.
        pool.shutdown(wait=True, cancel_futures=True)
        for c in clients:
            c.close()
