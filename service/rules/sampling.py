"""Information sets: deals of the tiles a seat cannot see that agree with what it sees.

``sample_state`` sees only a seat's :class:`~service.rules.observer.View` (its hand, the trains,
markers, open doubles, the turn and turn state, the scores, every hand size and the boneyard
size; no other hand, no boneyard order and no seed) and, when given, the round's clues as that
seat knows them (:meth:`~service.rules.history.Chronicle.seen_by`), so a sample can never carry
more than the seat knows.

Without clues (or before the round's first move) the unseen tiles are dealt uniformly among
the other hands and the boneyard.
With them the sample is drawn from the deals of the round that fit its whole public history:
each other seat's hand at the first clue, then each tile drawn, in the boneyard's order, fill
one slot apiece; a tile the seat played sits in one of its slots filled before the play, and
a slot may not hold a tile bearing a pip the seat was shown to lack while it held it. A random
matching of tiles to slots (:mod:`service.rules.matching`) picks the deal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from service.rules.errors import InvalidPosition
from service.rules.history import Clue, ClueKind
from service.rules.matching import find_matching, shuffle_matching
from service.rules.observer import View
from service.rules.position import export_position
from service.rules.rng import Shuffler, SplitMix64, random_seed
from service.rules.state import GameState
from service.rules.tiles import Tile

__all__ = ["SWEEPS", "THINNING", "Sampler", "sample_positions", "sample_state", "sampling_rng"]

#: Walk moves per slot before a walk's first sample (docs/bots.md: the measured fit).
SWEEPS = 40
#: Walk moves per slot between the samples of one walk (``sample_positions``).
THINNING = 10
#: The first clue index, for the hand a seat held when its clues begin.
_AT_START = -1
#: After every clue: a tile still hidden is held to the end.
_NEVER = 1 << 62

_Slot = tuple[int | None, int]  # (seat, the clue index it filled at); seat None: the boneyard

_Hidden = tuple[list[list[Tile]], list[Tile]]  # every hand (the seat's empty), the boneyard


def sampling_rng(seed: int | None = None) -> SplitMix64:
    """The generator for a run of samples: the same ``seed`` gives the same samples everywhere
    (SplitMix64 as in ``rng.py``, started from SHA-256 of a prefix distinct from the deals')."""
    if seed is None:
        seed = random_seed()
    digest = hashlib.sha256(b"mexican-train-samples/1:%d" % seed).digest()
    return SplitMix64(int.from_bytes(digest[:8], "big"))


def sample_state(view: View, rng: SplitMix64, clues: Sequence[Clue] | None = None) -> GameState:
    """A full state that agrees with ``view`` (and with ``clues``, the round's clues as the
    seat knows them, when given); the seat's own hand and draws are its own.

    The sample's seed is drawn from ``rng`` (53 bits, exact in JSON): the real seed is hidden."""
    return Sampler(view, clues).draw(rng)


class Sampler:
    """Samples of one view: ``draw(rng)`` is ``sample_state(view, rng, clues)``, with what
    depends on the view alone (its public state, its unseen tiles, the check that its sizes
    add up) made once. A search bot draws hundreds of samples of one decision's view, and that
    part was half of each. With clues, successive draws are successive samples of one walk."""

    __slots__ = ("_deals", "_public", "_unseen", "view")

    def __init__(self, view: View, clues: Sequence[Clue] | None = None) -> None:
        self.view = view
        self._deals = _Deals(view, clues) if clues else None
        self._public = _public_state(view, 0)
        self._unseen = view.unseen()
        _check_sizes(view, self._unseen)

    def draw(self, rng: SplitMix64) -> GameState:
        view = self.view
        state = self._public.copy()
        state.seed = rng.next() >> 11
        if self._deals is None:
            hands, boneyard = _uniform_deal(view, self._unseen.copy(), rng)
        else:
            hands, boneyard = self._deals.draw(view.n_players, rng)
        hands[view.seat] = list(view.hand)
        state.hands = [sorted(hand) for hand in hands]
        state.reindex()
        state.boneyard = boneyard
        return state


def sample_positions(
    view: View, n: int, seed: int | None = None, clues: Sequence[Clue] | None = None
) -> list[dict[str, Any]]:
    """``n`` position documents (``mexican-train-position/1``) sampled from ``view``; with
    clues, successive samples of one walk (``THINNING`` moves per slot apart)."""
    rng = sampling_rng(seed)
    sampler = Sampler(view, clues)
    return [export_position(sampler.draw(rng)) for _ in range(n)]


def _public_state(view: View, seed: int) -> GameState:
    """A state holding everything ``view`` shows, its hands and boneyard still empty."""
    state = GameState(list(view.players), view.rules, seed)
    state.status = view.status
    state.round = view.round
    state.engine = view.engine
    state.starter = view.starter
    state.turn = view.turn
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
    state.winners = None if view.winners is None else list(view.winners)
    return state


def _check_sizes(view: View, unseen_tiles: list[Tile]) -> None:
    hidden = sum(view.hand_sizes) - view.hand_sizes[view.seat] + view.boneyard_size
    unseen = len(unseen_tiles)
    if hidden != unseen or len(view.hand) != view.hand_sizes[view.seat]:
        raise InvalidPosition(
            f"invalid position: the view hides {hidden} tiles but {unseen} are unseen"
        )


def _uniform_deal(view: View, tiles: list[Tile], rng: Shuffler) -> _Hidden:
    """``tiles`` (the view's unseen tiles, a list of the caller's to shuffle) dealt at random."""
    rng.shuffle(tiles)
    hands: list[list[Tile]] = []
    at = 0
    for s, size in enumerate(view.hand_sizes):
        if s == view.seat:
            hands.append([])
        else:
            hands.append(tiles[at : at + size])
            at += size
    return hands, tiles[at:]


# ------------------------------------------------------------------------ consistent deals


@dataclass(slots=True)
class _Seat:
    """One other seat's clues: its draws' and plays' clue indices, the pips it lacked when."""

    draws: list[int] = field(default_factory=list)
    plays: dict[Tile, int] = field(default_factory=dict)
    lacks: list[tuple[int, frozenset[int]]] = field(default_factory=list)

    def allows(self, tile: Tile, since: int, until: int) -> bool:
        """Whether the seat could hold ``tile`` from clue ``since`` to clue ``until``."""
        a, b = tile
        return not any(since < at < until and (a in p or b in p) for at, p in self.lacks)


def _read_clues(view: View, clues: Sequence[Clue]) -> dict[int, _Seat]:
    seats = {s: _Seat() for s in range(view.n_players) if s != view.seat}
    for at, clue in enumerate(clues):
        seat = seats.get(clue.seat)
        if seat is None:
            continue
        if clue.kind == ClueKind.DREW:
            seat.draws.append(at)
        elif clue.kind == ClueKind.LACKS:
            seat.lacks.append((at, clue.pips))
        elif clue.tile is not None:
            seat.plays[clue.tile] = at
    return seats


def _slots(view: View, seats: dict[int, _Seat]) -> list[_Slot]:
    """(seat, clue index it arrived at) per slot; seat ``None`` for the boneyard's."""
    slots: list[_Slot] = []
    for s, seat in seats.items():
        held = view.hand_sizes[s] + len(seat.plays) - len(seat.draws)
        if held < 0:
            raise InvalidPosition(f"invalid clues: seat {s} drew more tiles than it holds")
        slots += [(s, _AT_START)] * held + [(s, at) for at in seat.draws]
    return slots + [(None, _AT_START)] * view.boneyard_size


def _mask(slot: _Slot, pool: list[Tile], players: list[int | None], seats: dict[int, _Seat]) -> int:
    """The pool tiles ``slot`` may hold (bit ``i`` for ``pool[i]``, played by ``players[i]``)."""
    mask = 0
    for i, tile in enumerate(pool):
        if _fits(slot, tile, players[i], seats):
            mask |= 1 << i
    return mask


def _fits(slot: _Slot, tile: Tile, player: int | None, seats: dict[int, _Seat]) -> bool:
    """A boneyard slot holds a tile nobody played; a seat's slot one it held from the slot's
    clue on without lacking it, to the end or to its play (only its own plays)."""
    owner, since = slot
    if owner is None:
        return player is None
    seat = seats[owner]
    if player is None:
        return seat.allows(tile, since, _NEVER)
    played = seat.plays.get(tile)
    if player != owner or played is None or played <= since:
        return False
    return seat.allows(tile, since, played)


class _Deals:
    """The consistent deals of one view and its clues: tiles, slots, what each slot allows,
    and the random walk over their matchings (one per run of samples)."""

    __slots__ = ("masks", "players", "pool", "slots", "walk", "walked")

    def __init__(self, view: View, clues: Sequence[Clue]) -> None:
        seats = _read_clues(view, clues)
        played = [(tile, s) for s, seat in seats.items() for tile in seat.plays]
        self.pool = view.unseen() + [tile for tile, _ in played]
        self.players: list[int | None] = [None] * (len(self.pool) - len(played))
        self.players += [s for _, s in played]
        self.slots = _slots(view, seats)
        if len(self.slots) != len(self.pool):
            raise InvalidPosition("invalid clues: they do not fit the hidden tiles")
        by_slot: dict[_Slot, int] = {}
        for slot in self.slots:
            if slot not in by_slot:
                by_slot[slot] = _mask(slot, self.pool, self.players, seats)
        self.masks = [by_slot[slot] for slot in self.slots]
        start = find_matching(self.masks, len(self.pool))
        if start is None:
            raise InvalidPosition("invalid clues: no deal fits them")
        self.walk = start
        self.walked = False

    def draw(self, n_players: int, rng: Shuffler) -> _Hidden:
        """The next sample of this walk: ``SWEEPS`` moves per slot from the matching found,
        ``THINNING`` from the previous sample."""
        assignment = self.walk
        sweeps = THINNING if self.walked else SWEEPS
        shuffle_matching(assignment, self.masks, rng, sweeps * len(self.slots))
        self.walked = True
        hands: list[list[Tile]] = [[] for _ in range(n_players)]
        boneyard: list[Tile] = []
        for (owner, _), item in zip(self.slots, assignment, strict=True):
            if owner is None:
                boneyard.append(self.pool[item])
            elif self.players[item] is None:
                hands[owner].append(self.pool[item])
        rng.shuffle(boneyard)
        return hands, boneyard
