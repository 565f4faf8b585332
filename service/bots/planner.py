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
from collections.abc import Iterable, Sequence
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
from service.rules import MEXICAN, Action, DoubleFollow, GameState, Move, Rules, Tile, View

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


def best_chain(
    end: int, hand: tuple[TileT, ...], search: int = _SEARCH_BUDGET
) -> tuple[TileT, ...]:
    """The longest chain (ties: most pips) buildable from ``end`` with tiles of ``hand``
    (``hand`` sorted: it is the cache key), searching at most ``search`` nodes."""
    chain, nodes = _best_chain(end, hand, search)
    SEARCHED.nodes += nodes
    return chain


@lru_cache(maxsize=65536)
def _best_chain(end: int, hand: tuple[TileT, ...], search: int) -> tuple[tuple[TileT, ...], int]:
    """The longest chain (ties: most pips) from ``end`` in ``hand``, and the nodes visited.

    ``hand`` must be sorted (it is the cache key). Depth-first search over trails with a node
    budget (``search``); domino hands are sparse graphs, so the budget is seldom reached, but a
    hand that drew a dozen tiles reaches it at every call. Each pip's
    list holds (tile index, the pip left open, pips) so the search does no tile arithmetic: it
    runs inside the ``hard`` bot's roll-outs.
    """
    steps: dict[int, list[tuple[int, int, int]]] = {}
    for i, (a, b) in enumerate(hand):
        steps.setdefault(a, []).append((i, b, a + b))
        if b != a:
            steps.setdefault(b, []).append((i, a, a + b))
    best: list[int] = []
    best_count, best_total = 0, 0
    path: list[int] = []
    used = [False] * len(hand)
    budget = search

    def dfs(at: int, count: int, total: int) -> None:
        nonlocal best, best_count, best_total, budget
        if count > best_count or (count == best_count and total > best_total):
            best_count, best_total = count, total
            best = path[:]
        if budget <= 0:
            return
        budget -= 1
        for i, nxt, pips_ in steps.get(at, ()):
            if used[i]:
                continue
            used[i] = True
            path.append(i)
            dfs(nxt, count + 1, total + pips_)
            path.pop()
            used[i] = False

    dfs(end, 0, 0)
    return tuple(hand[i] for i in best), search - budget


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
    chain = best_chain(own_end, tuple(sorted(hand)), w.search)
    rest = list(hand)
    for t in chain:
        rest.remove(t)
    points = sum(blank if t == (0, 0) else t[0] + t[1] for t in hand)
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
    chain = best_chain(own_end, tuple(sorted(hand)))
    if chain:
        for m in candidates:
            if m.train == own and play_tile(m) == chain[0]:
                return m
    for m in ordered:
        if m.action == Action.END_TURN:
            return m
    return max(candidates, key=lambda m: pips(play_tile(m)))


_PLANNER_WEIGHTS = Weights()


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


@dataclass(frozen=True)
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
