"""Information sets: what one seat can see, and deals of the rest that agree with it.

A ``SeatView`` holds exactly what a seat knows (its hand, the trains, markers, open doubles, the
turn and turn state, the scores, every hand size and the boneyard size) and nothing else: no
other hand, no boneyard order and no seed (the seed fixes every deal, so it would reveal all).
``sample_state`` sees only a ``SeatView``, so a sample can never carry more than the seat knows:
it deals the tiles the seat cannot see uniformly at random among the other hands and the boneyard
(every assignment that fits the known sizes is equally likely, boneyard order included).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.rules.errors import InvalidPosition
from service.rules.options import Rules, resolve_rules
from service.rules.position import export_position
from service.rules.rng import SplitMix64, random_seed
from service.rules.state import GameState
from service.rules.tiles import Tile, full_set
from service.rules.vocabulary import MEXICAN, Status

__all__ = ["SeatView", "sample_positions", "sample_state", "sampling_rng", "seat_view"]


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything one seat can see of a game; trains are oriented, index ``P`` is the Mexican."""

    seat: int
    players: tuple[str, ...]
    rules: Rules
    status: Status
    round: int  # 0 before the first deal
    engine: int | None
    turn: int | None
    starter: int | None
    hand: tuple[Tile, ...]
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    trains: tuple[tuple[Tile, ...], ...]
    marked: tuple[bool, ...]
    opened: tuple[bool, ...]
    open_doubles: tuple[int, ...]  # train indices, oldest first
    scores: tuple[tuple[int, ...], ...]  # per finished round, per seat (public)
    drawn: bool
    tiles_played: int
    must_follow: int | None
    consecutive_marks: int  # public: every seat sees each mark made on an empty boneyard
    winners: tuple[int, ...] | None

    def unseen(self) -> list[Tile]:
        """The tiles this seat cannot see, in canonical order (the engine is on the table)."""
        if self.engine is None:
            return []
        seen = set(self.hand)
        seen.add(Tile(self.engine, self.engine))
        for train in self.trains:
            seen.update(tile.normal for tile in train)
        return [tile for tile in full_set(self.rules.set) if tile not in seen]

    @classmethod
    def from_game_view(
        cls,
        view: Mapping[str, Any],
        seat: int | None = None,
        scores: Sequence[Sequence[int]] | None = None,
        consecutive_marks: int = 0,
    ) -> SeatView:
        """The seat view behind a seat's game view JSON (``game_view(state, seat)``); ``seat``
        defaults to the seat on turn (a bot is asked on its turn).

        The game view carries totals, not per-round scores, and not the count of marks made in a
        row on an empty boneyard: pass them when known (the score view has the per-round scores).
        Without ``scores`` each total stands as the first finished round, the rest zero; that
        changes nothing within a round."""
        players = view["players"]
        n = len(players)
        status = Status(view["status"])
        rnd = 0 if status == Status.WAITING_DEAL else int(view["round"])
        finished = rnd - 1 if status == Status.IN_ROUND else rnd
        if scores is None:
            scores = [[int(p["score"])] + [0] * (finished - 1) if finished else [] for p in players]
        ids = {str(s): s for s in range(n)} | {MEXICAN: n}
        trains: list[tuple[Tile, ...]] = [()] * (n + 1)
        for train in view.get("trains") or []:
            trains[ids[train["id"]]] = tuple(Tile(int(a), int(b)) for a, b in train["tiles"])
        options = view["rules"]
        ts = view.get("turn_state") or {}
        follow = ts.get("must_follow")
        winners = view.get("winners")
        return cls(
            seat=int(view["turn"]) if seat is None else seat,
            players=tuple(p["name"] for p in players),
            rules=resolve_rules(options["preset"], options["options"], n),
            status=status,
            round=rnd,
            engine=view.get("engine"),
            turn=view.get("turn"),
            starter=view.get("starter"),
            hand=tuple(sorted(Tile.of(int(a), int(b)) for a, b in view["hand"])),
            hand_sizes=tuple(int(p["hand_size"]) for p in players),
            boneyard_size=int(view["boneyard_size"]),
            trains=tuple(trains),
            marked=tuple(bool(p["marked"]) for p in players),
            opened=tuple(bool(p["opened"]) for p in players),
            open_doubles=tuple(ids[t] for t in view.get("open_doubles") or []),
            scores=tuple(tuple(int(x) for x in s) for s in scores),
            drawn=bool(ts.get("drawn", False)),
            tiles_played=int(ts.get("tiles_played", 0)),
            must_follow=None if follow is None else ids[follow],
            consecutive_marks=consecutive_marks,
            winners=None if winners is None else tuple(winners),
        )


def seat_view(state: GameState, seat: int) -> SeatView:
    """What ``seat`` can see of ``state``: the only place the hidden tiles are in reach."""
    return SeatView(
        seat=seat,
        players=tuple(state.players),
        rules=state.rules,
        status=state.status,
        round=state.round,
        engine=state.engine,
        turn=state.turn,
        starter=state.starter,
        hand=tuple(state.hands[seat]),
        hand_sizes=tuple(len(hand) for hand in state.hands),
        boneyard_size=len(state.boneyard),
        trains=tuple(tuple(train) for train in state.trains),
        marked=tuple(state.marked),
        opened=tuple(state.opened),
        open_doubles=tuple(state.open_doubles),
        scores=tuple(tuple(s) for s in state.scores),
        drawn=state.drawn,
        tiles_played=state.tiles_played,
        must_follow=state.must_follow,
        consecutive_marks=state.consecutive_marks,
        winners=None if state.winners is None else tuple(state.winners),
    )


def sampling_rng(seed: int | None = None) -> SplitMix64:
    """The generator for a run of samples: the same ``seed`` gives the same samples everywhere
    (SplitMix64 as in ``rng.py``, started from SHA-256 of a prefix distinct from the deals')."""
    if seed is None:
        seed = random_seed()
    digest = hashlib.sha256(b"mexican-train-samples/1:%d" % seed).digest()
    return SplitMix64(int.from_bytes(digest[:8], "big"))


def sample_state(view: SeatView, rng: SplitMix64) -> GameState:
    """A full state that agrees with ``view``; the unseen tiles dealt uniformly at random.

    The sample's seed is drawn from ``rng`` (53 bits, exact in JSON): the real seed is hidden."""
    state = GameState(list(view.players), view.rules, rng.next() >> 11)
    state.status = view.status
    state.round = view.round
    state.engine = view.engine
    state.starter = view.starter
    state.turn = view.turn
    tiles = view.unseen()
    hidden = sum(view.hand_sizes) - view.hand_sizes[view.seat] + view.boneyard_size
    if hidden != len(tiles) or len(view.hand) != view.hand_sizes[view.seat]:
        raise InvalidPosition(
            f"invalid position: the view hides {hidden} tiles but {len(tiles)} are unseen"
        )
    rng.shuffle(tiles)
    hands: list[list[Tile]] = []
    at = 0
    for s, size in enumerate(view.hand_sizes):
        if s == view.seat:
            hands.append(list(view.hand))
        else:
            hands.append(sorted(tiles[at : at + size]))
            at += size
    state.hands = hands
    state.reindex()
    state.boneyard = tiles[at:]
    if view.engine is not None:
        state.trains = [list(train) for train in view.trains]
        state.recompute_trains()
    state.marked = list(view.marked)
    state.opened = list(view.opened)
    state.open_doubles = list(view.open_doubles)
    state.scores = [list(s) for s in view.scores]
    state.drawn = view.drawn
    state.tiles_played = view.tiles_played
    state.must_follow = view.must_follow
    state.consecutive_marks = view.consecutive_marks
    state.winners = None if view.winners is None else list(view.winners)
    return state


def sample_positions(view: SeatView, n: int, seed: int | None = None) -> list[dict[str, Any]]:
    """``n`` position documents (``mexican-train-position/1``) sampled from ``view``."""
    rng = sampling_rng(seed)
    return [export_position(sample_state(view, rng)) for _ in range(n)]
