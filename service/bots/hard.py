"""``hard``: determinized Monte Carlo over the seat's information set.

For a real choice it deals ``worlds`` samples of the tiles its seat cannot see (from the seat's
view alone: ``SeatView.from_game_view``, so it cannot peek), tries every candidate move in every
sample, plays each on to the end of the round with a fast policy for every seat, and keeps the
move with the best mean result: its own round points minus the mean of the others' (lower is
better; a game is won on the lowest total). Every candidate meets the same samples (common random
numbers), so the comparison is not blurred by luck of the deal.

The budget is a number of roll-outs, not a time, so a seed fixes every decision on every
machine and in-process games match their HTTP twins. Successive halving spends it well: each
round gives an equal share of the budget to the candidates still in, then drops the worse half,
so the close calls get the most samples.
"""

from __future__ import annotations

from service.bots.base import View, canonical, is_opening
from service.bots.planner import PlannerBot, best_chain
from service.rules import (
    Action,
    GameState,
    Move,
    SeatView,
    Status,
    apply,
    legal_moves,
    sample_state,
    sampling_rng,
)

_IN_ROUND = Status.IN_ROUND
_END_TURN = Action.END_TURN


def policy(state: GameState, seat: int, moves: list[Move]) -> Move:
    """The roll-out policy, the planner's idea at engine speed: keep the longest chain the hand
    can build on the seat's own train (laid whole in the opening turn), and otherwise shed the
    biggest tile outside it; a chain tile only when nothing else fits."""
    if len(moves) == 1:
        return moves[0]
    hand = state.hands[seat]
    chain = best_chain(state.ends[seat], tuple(hand))
    if not state.opened[seat]:
        if chain:
            first = chain[0]
            for move in moves:
                if move.tile == first:
                    return move
        if moves[-1].action == _END_TURN:
            return moves[-1]
    keep = set(chain)
    best = moves[0]
    best_value = -1
    for move in moves:
        tile = move.tile
        if tile is None:
            continue
        value = tile.a + tile.b + (0 if tile in keep else 100)
        if value > best_value:
            best, best_value = move, value
    return best


def rollout(state: GameState) -> None:
    """Play ``state`` to the end of its round, every seat with the roll-out policy."""
    while state.status == _IN_ROUND:
        seat = state.turn
        assert seat is not None
        apply(state, seat, policy(state, seat, legal_moves(state, seat)))


def result(state: GameState, seat: int) -> float:
    """The finished round as ``seat`` sees it: its points minus the others' mean."""
    last = [s[-1] for s in state.scores]
    return last[seat] - (sum(last) - last[seat]) / (len(last) - 1)


class HardBot:
    name = "hard"

    def __init__(self, seed: int | None = None, rollouts: int = 160, least: int = 4) -> None:
        self.rng = sampling_rng(seed)
        self.rollouts = rollouts  # the decision's budget (exceeded only to give ``least``)
        self.least = least  # samples per candidate and round, at the least
        self.opening = PlannerBot()

    def choose(self, view: View, moves: list[Move]) -> Move:
        ordered = canonical(moves)
        if len(ordered) == 1:
            return ordered[0]
        if is_opening(view):
            # Lay the longest chain whole (the planner's opening): it is what wins most, and
            # searching it would cost the longest roll-outs of the round for little gain.
            return self.opening.choose(view, moves)
        seat_view = SeatView.from_game_view(view)
        seat = seat_view.seat
        candidates = ordered
        totals = {move: 0.0 for move in candidates}
        # Successive halving: each round spends an equal share of the budget on the survivors.
        share = self.rollouts // max(1, (len(candidates) - 1).bit_length())
        while len(candidates) > 1:
            per = max(self.least, share // len(candidates))
            worlds = [sample_state(seat_view, self.rng) for _ in range(per)]
            for move in candidates:
                for world in worlds:
                    trial = world.copy()
                    apply(trial, seat, move)
                    rollout(trial)
                    totals[move] += result(trial, seat)
            # The survivors have all met the same samples, so their totals compare.
            candidates = sorted(candidates, key=lambda m: totals[m])[: (len(candidates) + 1) // 2]
        return min(candidates, key=lambda m: totals[m])
