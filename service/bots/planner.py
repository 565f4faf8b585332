"""``planner``: plans the longest chain for its own train and plays everything else elsewhere.

Why this wins: a tile in the planned chain is a guaranteed future play on a train nobody else may
touch (while it is unmarked), so each turn the planner prefers to unload an *orphan* (a tile outside
the chain) on the Mexican or a marked train, and spends a chain tile only when nothing else fits.
The opening turn (chain opening) lays the whole chain at once: every tile beyond the first is a
turn saved. Doubles are played when they can be followed (two tiles in one turn), open doubles are
satisfied with the tile that hurts the plan least, and a move that empties the hand always wins.

Each candidate move is scored by a one-ply look-ahead (two plies after a double, since the same
player must follow it) of :func:`evaluate` on the hand it leaves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from service.bots.base import (
    TileT,
    canonical,
    hand_of,
    other_end,
    pips,
    play_tile,
    plays,
)
from service.rules import MAX_PIP, MEXICAN, Action, DoubleFollow, GameState, Move, Rules, Tile, View

_SEARCH_BUDGET = 4000  # DFS nodes per chain search: hands are small; this only caps pathologies


class Searched(threading.local):
    """DFS nodes of this thread's chain searches (a thread's own: a server thread's count must
    not move with another game's bot). A search on a hand that drew a dozen tiles
    visits a hundred times the nodes of a five-tile one, so the ``hard`` bot charges them to its
    decisions' budgets, which then bound their CPU whatever the hands hold. A search answered
    from the cache counts its nodes again: the charge must not depend on what this process
    happened to search before, or the same seed would decide otherwise in another process."""

    nodes = 0


SEARCHED = Searched()


#: Every normalised tile of the largest set, in sorted order: a hand is a bit set over them,
#: a cache key that is cheap to make and hash, and whose bits run in the hand's sorted order.
_TILES: tuple[TileT, ...] = tuple((a, b) for a in range(MAX_PIP + 1) for b in range(a, MAX_PIP + 1))
_BIT: dict[TileT, int] = {tile: 1 << i for i, tile in enumerate(_TILES)}


def best_chain(end: int, hand: Iterable[TileT], search: int = _SEARCH_BUDGET) -> tuple[TileT, ...]:
    """The longest chain (ties: most pips) buildable from ``end`` with tiles of ``hand``
    (distinct normalised tiles, in any order), searching at most ``search`` nodes."""
    chain, nodes = _best_chain(end, sum(map(_BIT.__getitem__, hand)), search)
    SEARCHED.nodes += nodes
    return chain


def hand_of_bits(bits: int) -> tuple[TileT, ...]:
    """The sorted hand a bit set stands for."""
    hand = []
    while bits:
        low = bits & -bits
        hand.append(_TILES[low.bit_length() - 1])
        bits ^= low
    return tuple(hand)


@lru_cache(maxsize=65536)
def _best_chain(end: int, bits: int, search: int) -> tuple[tuple[TileT, ...], int]:
    """The longest chain (ties: most pips) from ``end`` in the hand ``bits`` stands for, and
    the nodes visited, trails tried in the hand's sorted order. Depth-first search over trails
    with a node budget (``search``); domino hands are sparse graphs, so the budget is seldom
    reached, but a hand that drew a dozen tiles reaches it at every call. It runs inside the
    ``hard`` bot's roll-outs, so it is written for speed: an explicit stack rather than
    recursion, the tiles themselves (distinct in a hand) as the marks of use, and no table
    built when no tile shows ``end`` (four searches in ten). Its nodes are those a recursive
    search visits, since they are charged to budgets: ``tests/bots/test_chain_search.py``
    holds it to one.
    """
    if search <= 0:
        return (), 0
    hand = hand_of_bits(bits)
    if not any(end in tile for tile in hand):
        return (), 1
    steps = _steps(hand)
    budget = search - 1  # the root
    best: tuple[TileT, ...] = ()
    best_count = best_total = 0
    path: list[TileT] = []
    used: set[TileT] = set()
    # Each frame: the trails still to try from a node, and the node's length and pips.
    stack = [(iter(steps[end]), 0, 0)]
    while stack:
        trails, count, total = stack[-1]
        for tile, nxt, pips_ in trails:
            if tile in used:
                continue
            path.append(tile)
            count_, total_ = count + 1, total + pips_
            if count_ > best_count or (count_ == best_count and total_ > best_total):
                best_count, best_total, best = count_, total_, tuple(path)
            if budget > 0:  # visit it: go one step deeper
                budget -= 1
                used.add(tile)
                stack.append((iter(steps.get(nxt, ())), count_, total_))
                break
            path.pop()  # out of budget: seen, not visited
        else:
            stack.pop()
            if path:
                used.discard(path.pop())
    return best, search - budget


def _steps(hand: tuple[TileT, ...]) -> dict[int, list[tuple[TileT, int, int]]]:
    """For each pip, the hand's tiles that show it, in hand order, with the pip each leaves
    open and its pips: the search does no tile arithmetic."""
    steps: dict[int, list[tuple[TileT, int, int]]] = {}
    for tile in hand:
        a, b = tile
        steps.setdefault(a, []).append((tile, b, a + b))
        if b != a:
            steps.setdefault(b, []).append((tile, a, a + b))
    return steps


@dataclass(frozen=True)
class Weights:
    """Cost of what is left in hand. Orphans cost more than chain tiles: they need luck to play.

    The values are the measured best in planner-only tournaments.
    """

    orphan: float = 10.0
    live_orphan: float = 7.0  # an orphan that fits a public train right now
    chain: float = 5.0
    pip: float = 0.35
    marked_own_bonus: float = 6.0  # playing on our own marked train takes the marker off
    open_double_bonus: float = 1.5  # leaving an open double burdens the next players
    no_follow_penalty: float = 12.0  # a double we cannot follow: draw, maybe mark
    search: int = _SEARCH_BUDGET  # DFS nodes a chain search may visit (not a cost)


def evaluate(
    hand: list[TileT],
    own_end: int,
    public_ends: set[int],
    w: Weights,
    pip_weight: float,
    blank: int = 0,
) -> float:
    """Higher is better. Empty hand (went out) is best of all."""
    if not hand:
        return 1e9
    chain = best_chain(own_end, hand, w.search)
    rest = list(hand)
    for t in chain:
        rest.remove(t)
    points = sum(map(sum, hand))
    if blank and (0, 0) in hand:
        points += blank  # the double blank's points, when the rules give it any
    cost = w.chain * len(chain) + pip_weight * points
    for t in rest:
        cost += w.live_orphan if (t[0] in public_ends or t[1] in public_ends) else w.orphan
    return -cost


class PlannerBot:
    name = "planner"

    def __init__(self, seed: int | None = None, weights: Weights | None = None) -> None:
        del seed  # deterministic
        self.w = weights or Weights()

    def choose(self, view: View, moves: list[Move]) -> Move:
        return decide(view, view.seat, hand_of(view), moves, self.w)


class Table(Protocol):
    """What the planner reads of the table, alike in a seat's View and in a full state (the
    ``hard`` bot's sampled worlds): never a hand, which its caller hands over."""

    @property
    def n_players(self) -> int: ...
    @property
    def ends(self) -> Sequence[int]: ...
    @property
    def marked(self) -> Sequence[bool]: ...
    @property
    def opened(self) -> Sequence[bool]: ...
    @property
    def rules(self) -> Rules: ...


def decide(table: Table, seat: int, hand: list[TileT], moves: list[Move], w: Weights) -> Move:
    """The planner's choice for ``seat`` holding ``hand`` at ``table``."""
    ordered = canonical(moves)
    candidates = plays(ordered)
    if not candidates:
        return ordered[0]  # draw, mark or end_turn: the rules leave no real choice
    own_end = table.ends[seat]
    if not table.opened[seat]:
        return _opening(ordered, candidates, hand, str(seat), own_end)
    return max(candidates, key=_LaterTurn.of(table, seat, hand, own_end, w).score)


def _opening(
    ordered: list[Move], candidates: list[Move], hand: list[TileT], own: str, own_end: int
) -> Move:
    """Lay the planned chain tile by tile; stop (end_turn) once it is laid."""
    chain = best_chain(own_end, hand)
    if chain:
        for m in candidates:
            if m.train == own and play_tile(m) == chain[0]:
                return m
    for m in ordered:
        if m.action == Action.END_TURN:
            return m
    return max(candidates, key=lambda m: pips(play_tile(m)))


_PLANNER_WEIGHTS = Weights()


def later_turn_score(
    table: Table, seat: int, hand: list[TileT], w: Weights = _PLANNER_WEIGHTS
) -> Callable[[Move], float]:
    """How the planner rates each play of a later turn for ``seat`` holding ``hand`` (higher
    is better): what :func:`decide` takes the best of, for a caller that ranks them."""
    return _LaterTurn.of(table, seat, hand, table.ends[seat], w).score


def planner_move(
    state: GameState,
    seat: int,
    tiles: Iterable[Tile],
    moves: list[Move],
    weights: Weights = _PLANNER_WEIGHTS,
) -> Move:
    """The planner's choice for ``seat`` holding ``tiles``, read straight off a state (the
    ``hard`` bot's sampled worlds), with no View built: the same decision as
    ``PlannerBot().choose`` on the seat's view, since it reads only what that view holds (the
    hand it is given, the trains' ends and markers, the rules). The caller hands over the
    seat's tiles: the planner never reads a hand of the state. ``weights`` other than the
    planner's make another player (the ``hard`` bot's roll-outs search chains less deeply)."""
    return decide(state, seat, [(t.a, t.b) for t in tiles], moves, weights)


@dataclass(slots=True)  # made once per roll-out move: not frozen, so its __init__ is plain
class _LaterTurn:
    """What a later-turn move is scored against: the hand, the trains open to us, the weights."""

    w: Weights
    hand: list[TileT]
    own: str
    own_end: int
    own_marked: bool
    ends: dict[str, int]  # open end of each public train other than our own
    follow_any: bool
    blank: int

    @classmethod
    def of(cls, table: Table, seat: int, hand: list[TileT], own_end: int, w: Weights) -> _LaterTurn:
        n = table.n_players
        # The trains open to us besides our own: the Mexican and every marked one.
        ends = {
            (MEXICAN if t == n else str(t)): table.ends[t]
            for t in range(n + 1)
            if t != seat and (t == n or table.marked[t])
        }
        return cls(
            w=w,
            hand=hand,
            own=str(seat),
            own_end=own_end,
            own_marked=table.marked[seat],
            ends=ends,
            follow_any=table.rules.double_follow != DoubleFollow.SATISFY,
            blank=table.rules.double_blank_points,
        )

    def value(self, hand: list[TileT], own_end: int, public: set[int]) -> float:
        return evaluate(hand, own_end, public, self.w, self.w.pip, self.blank)

    def after(
        self, tile: TileT, train: str, hand: list[TileT], own_end: int
    ) -> tuple[list[TileT], int]:
        """The hand and our own train's end once ``tile`` is played on ``train``."""
        rest = list(hand)
        rest.remove(tile)
        return rest, (other_end(tile, own_end) if train == self.own else own_end)

    def score(self, m: Move) -> float:
        tile = play_tile(m)
        train = m.train or ""
        rest, oe = self.after(tile, train, self.hand, self.own_end)
        bonus = self.w.marked_own_bonus if (self.own_marked and train == self.own) else 0.0
        if tile[0] != tile[1] or not rest:
            return self.value(rest, oe, set(self.ends.values())) + bonus
        return self.double_score(tile[0], train, rest, oe) + bonus

    def double_score(self, x: int, train: str, rest: list[TileT], oe: int) -> float:
        """A double on ``train``: the same player must follow it, so look one tile further."""
        spots: dict[str, int] = {train: x}
        if self.follow_any:
            spots.setdefault(self.own, oe)
            for tid, e in self.ends.items():
                spots.setdefault(tid, e)
        public_after = {x if k == train else v for k, v in self.ends.items()}
        best = -1e18
        for t2 in set(rest):
            for tid, e in spots.items():
                if e not in t2:
                    continue
                rest2, oe2 = self.after(t2, tid, rest, oe)
                val = self.value(rest2, oe2, public_after)
                if tid != train:
                    val += self.w.open_double_bonus
                best = max(best, val)
        if best <= -1e18:
            return self.value(rest, oe, set(self.ends.values())) - self.w.no_follow_penalty
        return best
