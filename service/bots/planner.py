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

from dataclasses import dataclass
from functools import lru_cache

from service.bots.base import (
    TileT,
    View,
    canonical,
    hand_of,
    is_opening,
    norm,
    other_end,
    pips,
    play_tile,
    plays,
    seat_of,
    train_by_id,
)
from service.rules import Move

_SEARCH_BUDGET = 4000  # DFS nodes per chain search: hands are small; this only caps pathologies


@lru_cache(maxsize=65536)
def best_chain(end: int, hand: tuple[TileT, ...], pip_ratio: float = 0.0) -> tuple[TileT, ...]:
    """The longest chain (ties: most pips) buildable from ``end`` with tiles of ``hand``.

    With ``pip_ratio`` > 0 a chain is valued ``tiles + pip_ratio * pips`` (a shorter chain that
    sheds many more pips can win).

    ``hand`` must be sorted (it is the cache key). Depth-first search over trails with a node
    budget; domino hands are sparse graphs, so the budget is almost never reached.
    """
    by_pip: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(hand):
        by_pip.setdefault(a, []).append(i)
        if b != a:
            by_pip.setdefault(b, []).append(i)
    best: list[TileT] = []
    best_key: tuple[float, int] = (0.0, 0)
    path: list[TileT] = []
    used = [False] * len(hand)
    budget = [_SEARCH_BUDGET]

    def dfs(at: int, count: int, total: int) -> None:
        nonlocal best, best_key
        key = (count + pip_ratio * total, total)
        if key > best_key:
            best_key = key
            best = list(path)
        if budget[0] <= 0:
            return
        budget[0] -= 1
        for i in by_pip.get(at, ()):
            if used[i]:
                continue
            tile = hand[i]
            used[i] = True
            path.append(tile)
            dfs(other_end(tile, at), count + 1, total + tile[0] + tile[1])
            path.pop()
            used[i] = False

    dfs(end, 0, 0)
    return tuple(best)


@dataclass(frozen=True)
class Weights:
    """Cost of what is left in hand. Orphans cost more than chain tiles: they need luck to play.

    Defaults are the measured best. The knobs from ``endgame_pip`` on sit at neutral values: each
    was measured in planner-only tournaments and gave no significant gain (README, "Bots").
    """

    orphan: float = 10.0
    live_orphan: float = 7.0  # an orphan that fits a public train right now
    chain: float = 5.0
    pip: float = 0.35
    marked_own_bonus: float = 6.0  # playing on our own marked train takes the marker off
    open_double_bonus: float = 1.5  # leaving an open double burdens the next players
    no_follow_penalty: float = 12.0  # a double we cannot follow: draw, maybe mark
    endgame_pip: float = 1.0  # pip weight multiplier once an opponent is about to go out
    danger_hand: int = 2  # ... i.e. holds at most this many tiles
    blank_points: bool = True  # count [0, 0] at the rules' double_blank_points, not 0
    reserve: int = 0  # chain tiles kept back in the opening as guaranteed later plays
    opening_pip_ratio: float = 0.0  # opening chain value: tiles + ratio * pips
    update_public: bool = False  # look-ahead moves the end of the public train played on
    hijack_bonus: float = 0.0  # playing on an opponent's (marked) train breaks their plan
    block: float = 0.0  # reward public ends (and open doubles) few unseen tiles can answer


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
    chain = best_chain(own_end, tuple(sorted(hand)))
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
        ordered = canonical(moves)
        candidates = plays(ordered)
        if not candidates:
            return ordered[0]  # draw, mark or end_turn: the rules leave no real choice
        seat = seat_of(view)
        own = str(seat)
        trains = train_by_id(view)
        hand = hand_of(view)
        own_end = int(trains[own]["open_end"]) if own in trains else int(view["engine"])
        if is_opening(view):
            return self._opening(ordered, candidates, hand, own, own_end)
        return self._later(view, candidates, hand, own, own_end, trains)

    def _opening(
        self, ordered: list[Move], candidates: list[Move], hand: list[TileT], own: str, own_end: int
    ) -> Move:
        chain = best_chain(own_end, tuple(sorted(hand)), self.w.opening_pip_ratio)
        keep = self.w.reserve if len(chain) < len(hand) else 0
        can_stop = any(m.action == "end_turn" for m in ordered)
        if chain and (len(chain) > keep or not can_stop):
            for m in candidates:
                if m.train == own and play_tile(m) == chain[0]:
                    return m
        for m in ordered:
            if m.action == "end_turn":
                return m
        return max(candidates, key=lambda m: pips(play_tile(m)))

    def _later(
        self,
        view: View,
        candidates: list[Move],
        hand: list[TileT],
        own: str,
        own_end: int,
        trains: dict[str, dict[str, object]],
    ) -> Move:
        w = self.w
        own_marked = bool(trains.get(own, {}).get("marked"))
        ends: dict[str, int] = {}
        for tid, t in trains.items():
            if tid == own:
                continue
            usable = tid == "mexican" or bool(t.get("marked"))
            if usable and t.get("open_end") is not None:
                ends[tid] = int(str(t["open_end"]))
        rules = view.get("rules") or {}
        options = rules.get("options") or {}
        follow_any = options.get("double_follow", "any") != "satisfy"
        blank = int(options.get("double_blank_points", 0)) if w.blank_points else 0
        others = [
            int(p.get("hand_size", 99)) for p in view.get("players") or [] if str(p["seat"]) != own
        ]
        pip_w = w.pip
        if others and min(others) <= w.danger_hand:
            pip_w *= w.endgame_pip

        unseen = _unseen_by_pip(view, hand) if w.block else {}
        per_pip = max(1, int(options.get("set", 12)) + 1)

        def blocked(end: int) -> float:
            """1.0 when no hidden tile can answer ``end``, 0.0 when all of them are hidden."""
            return 1.0 - unseen.get(end, 0) / per_pip if w.block else 0.0

        def value(h: list[TileT], oe: int, pub: set[int]) -> float:
            return evaluate(h, oe, pub, w, pip_w, blank)

        def after(tile: TileT, train: str, h: list[TileT], oe: int) -> tuple[list[TileT], int]:
            rest = list(h)
            rest.remove(tile)
            return rest, (other_end(tile, oe) if train == own else oe)

        def score(m: Move) -> float:
            tile = play_tile(m)
            train = m.train or ""
            rest, oe = after(tile, train, hand, own_end)
            bonus = w.marked_own_bonus if (own_marked and train == own) else 0.0
            if train not in (own, "mexican"):
                bonus += w.hijack_bonus
            public = set(ends.values())
            if w.update_public and train in ends and tile[0] != tile[1]:
                public = {other_end(tile, e) if k == train else e for k, e in ends.items()}
            if train in ends and tile[0] != tile[1]:
                bonus += w.block * blocked(other_end(tile, ends[train]))
            if tile[0] != tile[1] or not rest:
                return value(rest, oe, public) + bonus
            # A double: the same player must follow it. Look one tile further.
            x = tile[0]
            spots: dict[str, int] = {train: x}
            if follow_any:
                spots.setdefault(own, oe)
                for tid, e in ends.items():
                    spots.setdefault(tid, e)
            best = -1e18
            for t2 in set(rest):
                for tid, e in spots.items():
                    if e not in t2:
                        continue
                    rest2, oe2 = after(t2, tid, rest, oe)
                    pub2 = {x if k == train else v for k, v in ends.items()}
                    if w.update_public and tid in ends:
                        moved = {**ends, train: x} if train in ends else dict(ends)
                        moved[tid] = other_end(t2, e)
                        pub2 = set(moved.values())
                    val = value(rest2, oe2, pub2)
                    if tid != train:
                        val += w.open_double_bonus + 2 * w.block * blocked(x)
                    best = max(best, val)
            if best <= -1e18:
                return value(rest, oe, public) - w.no_follow_penalty + bonus
            return best + bonus

        return max(candidates, key=score)


def _unseen_by_pip(view: View, hand: list[TileT]) -> dict[int, int]:
    """For each pip, how many tiles bearing it are neither on the table nor in our hand."""
    n = int(((view.get("rules") or {}).get("options") or {}).get("set", 12))
    seen: set[TileT] = set(hand)
    for train in view.get("trains") or []:
        seen.update(norm(t) for t in train.get("tiles") or [])
    engine = view.get("engine")
    if engine is not None:
        seen.add((int(engine), int(engine)))
    counts = {x: n + 1 for x in range(n + 1)}
    for a, b in seen:
        counts[a] = counts.get(a, 0) - 1
        if b != a:
            counts[b] = counts.get(b, 0) - 1
    return counts
