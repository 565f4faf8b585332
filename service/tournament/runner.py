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
from mexican_train_client import Client, StaleVersion

from service import rules
from service.bots.base import Bot
from service.bots.registry import make_bot
from service.rules import Move, Preset, Status
from service.rules.log import EntryAction
from service.seating.server_turns import bot_seed
from service.tournament.stats import GameResult

MAX_ACTIONS = 200_000  # a guard against a bot/engine bug looping forever, far above real games
#: A bot name with this prefix sits in a server bot seat (``server:planner``): the server plays
#: it, in the same request as the move before its turn.
SERVER = "server:"


def server_level(name: str) -> str | None:
    """The level of a server bot seat's name, else None (a bot this process plays)."""
    return name.removeprefix(SERVER) if name.startswith(SERVER) else None


@dataclass(frozen=True)
class GameSpec:
    """Everything that fixes one game: seed, which bot sits where, and each bot's RNG seed."""

    index: int
    seed: int
    bots: tuple[str, ...]
    bot_seeds: tuple[int, ...]
    preset: str = Preset.STANDARD
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def players(self) -> list[str]:
        return [f"{name.removeprefix(SERVER)}-{seat}" for seat, name in enumerate(self.bots)]

    def seats(self) -> list[str | dict[str, str]]:
        """``players`` of the create request: a name, or a server bot seat."""
        return [
            name if (level := server_level(bot)) is None else {"name": name, "bot": level}
            for name, bot in zip(self.players, self.bots, strict=True)
        ]

    def make_bots(self) -> list[Bot | None]:
        """This process's bots, seat by seat; None where the server plays the seat."""
        return [
            None if server_level(n) is not None else make_bot(n, s)
            for n, s in zip(self.bots, self.bot_seeds, strict=True)
        ]


def game_specs(
    bots: Sequence[str],
    games: int,
    *,
    base_seed: int = 0,
    preset: str = Preset.STANDARD,
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
    """One complete game in-process on the engine (every round). Server bot seats are played
    as the server plays them (a fresh bot seeded by the game and version), so a game gives the
    same moves here and over HTTP."""
    started = time.perf_counter()
    bots = spec.make_bots()
    state = rules.new_game(spec.players, spec.preset, spec.options, spec.seed)
    rec = _Recorder(record)
    version = 1  # the creation is the log's first entry
    for _ in range(MAX_ACTIONS):
        if state.status == Status.GAME_OVER:
            break
        version += 1
        if state.status in BETWEEN_ROUNDS:
            rules.deal(state)
            continue
        seat = state.turn
        assert seat is not None
        move = _choice(spec, bots, state, seat, version)
        rec.add(seat, move)
        rules.apply(state, seat, move)
    else:
        raise RuntimeError(f"game {spec.index} (seed {spec.seed}) did not finish")
    return _result(spec, rules.score_view(state), rec, started)


def _choice(
    spec: GameSpec, bots: Sequence[Bot | None], state: rules.GameState, seat: int, version: int
) -> Move:
    """The move of ``seat``, which will produce ``version``."""
    moves = rules.legal_moves(state, seat)
    bot = bots[seat]
    if bot is None:
        level = server_level(spec.bots[seat])
        assert level is not None
        return make_bot(level, bot_seed(state, version)).choose(rules.seat_view(state, seat), moves)
    # A forced move is not offered to the bot, in both modes (over HTTP it saves a request).
    return moves[0] if len(moves) == 1 else bot.choose(rules.seat_view(state, seat), moves)


def play_http(client: Client, spec: GameSpec, *, record: bool = False) -> GameResult:
    """One complete game through the HTTP API: the host deals each round, each seat of this
    process its turns; the server plays its bot seats."""
    started = time.perf_counter()
    created = client.create_game(
        spec.seats(), preset=spec.preset, options=spec.options, seed=spec.seed
    )
    rec = _Recorder(record)
    score = drive_http(client, created, spec.make_bots(), rec.add)
    return _result(spec, score, rec, started)


def drive_http(
    client: Client,
    created: Mapping[str, Any],
    bots: Sequence[Bot | None],
    on_move: Callable[[int, Move], object] | None = None,
    *,
    deals: bool = True,
) -> dict[str, Any]:
    """Play an existing game to its end (``created`` = the create response, with the tokens).

    The driver keeps a copy of the game, from the host's position at the start, so it knows
    whose turn it is and what its seats may do without asking: each of its moves and deals
    (``deals``: the host deals each round) is one request, and an answer that counts only that
    change is applied to the copy as is. Whatever else happens (server bot seats moving in the
    same request, turn clocks, automatic deals, other players) it reads from the game's log as
    the host sees it, waiting on a long-poll when the turn is nobody's it plays. ``bots[seat]``
    is None for a seat this driver does not play; ``on_move`` sees every move, whoever made
    it. Works from any point, e.g. a game imported from a position. Returns the final score
    view."""
    gid, host = str(created["game_id"]), str(created["host_token"])
    tokens = {int(s["seat"]): str(s["token"]) for s in created["seats"] if s.get("token")}
    players = {seat: bot for seat, bot in enumerate(bots) if bot is not None and seat in tokens}
    version, position = client.position_at(gid, token=host)
    game = _Copy(rules.import_position(position), version, on_move)
    mover = _Mover(client, gid, host if deals else None, tokens, players)
    for _ in range(MAX_ACTIONS):
        if game.state.status == Status.GAME_OVER:
            return rules.score_view(game.state)
        acted = mover.act(game)
        if acted is None or not game.take(*acted):
            wait = 0 if acted is not None else LONG_POLL_SECONDS
            page = client.events_page(gid, token=host, after=game.version, wait=wait)
            for entry in page["entries"]:
                game.follow(entry)
    raise RuntimeError(f"game {gid} did not finish")


BETWEEN_ROUNDS = (Status.WAITING_DEAL, Status.ROUND_OVER)
#: How long the driver's read of the log waits for others to act.
LONG_POLL_SECONDS = 30


@dataclass
class _Copy:
    """The driver's copy of a game, kept by applying each change to the engine."""

    state: rules.GameState
    version: int
    on_move: Callable[[int, Move], object] | None = None

    def take(self, seat: int | None, move: Move | None, answer: Mapping[str, Any]) -> bool:
        """Apply the driver's own change (``move`` of ``seat``, or a deal) if its answer counts
        it alone; False when more happened (read it from the log) or it was refused (412)."""
        if int(answer.get("version", -1)) != self.version + 1:
            return False
        self.follow({**answer, "seat": seat, "action": _action(move)})
        return True

    def follow(self, entry: Mapping[str, Any]) -> None:
        """Apply one entry. The engine must give the events the server gave (as the reader saw
        them): anything else means the copy went astray."""
        action, seat = entry["action"], entry["seat"]
        move: Move | None = None
        if action["action"] == EntryAction.DEAL:
            events: list[rules.Event] = rules.deal(self.state)
        elif action["action"] in (EntryAction.JOIN, EntryAction.SEAT):
            if action["action"] == EntryAction.JOIN:
                self.state.players[seat] = entry["events"][0]["name"]
            events = list(entry["events"])
        else:
            move = Move.from_json(action)
            events = rules.apply(self.state, seat, move)
        seen = rules.visible_events(events, seat)
        if int(entry["version"]) != self.version + 1 or entry["events"] not in (events, seen):
            raise RuntimeError(f"the copy of the game disagrees at version {entry['version']}")
        self.version += 1
        if move is not None and self.on_move is not None:
            self.on_move(seat, move)


def _action(move: Move | None) -> dict[str, Any]:
    return {"action": EntryAction.DEAL} if move is None else move.to_json()


@dataclass
class _Mover:
    """Makes the driver's moves (and deals) on its copy of the game."""

    client: Client
    game_id: str
    host: str | None
    tokens: Mapping[int, str]
    bots: Mapping[int, Bot]

    def act(self, game: _Copy) -> tuple[int | None, Move | None, Mapping[str, Any]] | None:
        """Deal or move if that is the driver's to do now: ``(seat, move, answer)`` (seat and
        move None for a deal), or None when it is not. ``If-Match`` makes a decision on a game
        that moved on meanwhile a 412 (answered as an empty answer): read the log, decide again."""
        state = game.state
        try:
            if state.status in BETWEEN_ROUNDS and self.host is not None:
                answer = self.client.deal(self.game_id, token=self.host, if_match=game.version)
                return None, None, answer
            if state.status == Status.IN_ROUND and (seat := state.turn) in self.bots:
                assert seat is not None
                moves = rules.legal_moves(state, seat)
                move = moves[0] if len(moves) == 1 else self._choose(state, seat, moves)
                token = self.tokens[seat]
                body = move.to_json()
                answer = self.client.move(self.game_id, body, token=token, if_match=game.version)
                return seat, move, answer
        except StaleVersion:
            return None, None, {}
        return None

    def _choose(self, state: rules.GameState, seat: int, moves: list[Move]) -> Move:
        return self.bots[seat].choose(rules.seat_view(state, seat), moves)


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
