"""``hard``: determinized Monte Carlo over the seat's information set.

For a real choice it deals samples of the tiles its seat cannot see (from the seat's view
alone, so it cannot peek), tries every candidate move in every sample, plays each on to the end
of the round with the planner's choices for every seat, and keeps the move with the best mean
result: its own round points minus the mean of the others' (lower is
better; a game is won on the lowest total). Every candidate meets the same samples (common random
numbers), so the comparison is not blurred by luck of the deal.

The budget is a number of engine moves played in roll-outs, not a time, so a seed fixes every
decision on every machine and in-process games match their HTTP twins; and since a move costs
about the same whenever it is played, so does a decision. Early in a round a roll-out is long
and the budget buys few of them; near its end, where one tile decides who goes out, it buys many
more. Successive halving spends it well: each round gives an equal share of the budget to the
candidates still in (one more sample for all of them at a time, until the share is spent), then
drops the worse half, so the close calls get the most samples.
"""

from __future__ import annotations

from service.bots.base import canonical
from service.bots.planner import SEARCHED, PlannerBot, Weights, planner_move
from service.rules import (
    GameState,
    Move,
    Sampler,
    Status,
    View,
    apply,
    legal_moves,
    sampling_rng,
)

_IN_ROUND = Status.IN_ROUND


#: The planner's weights, its chain search cut to a tenth: a sampled hand that drew a dozen
#: tiles made every search of a roll-out visit the whole budget, and one decision took seconds.
ROLLOUT_WEIGHTS = Weights(search=400)


def policy(state: GameState, seat: int, moves: list[Move]) -> Move:
    """The roll-out policy: the planner's own choice, for every seat. The other seats at the
    table it is built for are planners or play like them, and its own later moves are at least
    as good; read off the state, it costs tens of microseconds a move."""
    if len(moves) == 1:
        return moves[0]
    return planner_move(state, seat, state.hands[seat], moves, ROLLOUT_WEIGHTS)


def rollout(state: GameState) -> int:
    """Play ``state`` to the end of its round, every seat with the roll-out policy; the moves
    it took."""
    moves = 0
    while state.status == _IN_ROUND:
        seat = state.turn
        assert seat is not None
        apply(state, seat, policy(state, seat, legal_moves(state, seat)))
        moves += 1
    return moves


def result(state: GameState, seat: int) -> float:
    """The finished round as ``seat`` sees it: its points minus the others' mean."""
    last = [s[-1] for s in state.scores]
    return last[seat] - (sum(last) - last[seat]) / (len(last) - 1)


#: Engine moves a decision may play in roll-outs (each with the planner's choice for the seat
#: to move): about 50 ms of one core here, whatever the stage of the round (docs/bots.md has
#: the measured decision times).
MOVES = 5_000
#: What a sample costs on top of its roll-outs, counted in moves (dealing it, copying it).
SAMPLE_COST = 20
#: Chain-search nodes that cost as much CPU as one roll-out move (about half a microsecond
#: against fifteen here): a roll-out's searches are charged to the budget at this rate.
NODES_PER_MOVE = 30
#: The most a decision may spend, in budgets, to give every round its ``least`` samples: with
#: thirty candidates and roll-outs of a hundred moves, four samples a round would cost several
#: budgets, and such turns made the slowest decisions.
CEILING = 2


class HardBot:
    name = "hard"

    def __init__(self, seed: int | None = None, moves: int = MOVES, least: int = 4) -> None:
        self.rng = sampling_rng(seed)
        self.moves = moves  # the decision's budget (exceeded only to give ``least``)
        self.least = least  # samples per candidate and round, at the least
        self.opening = PlannerBot()
        self.sampler: Sampler | None = None  # of the view of the decision under way

    def choose(self, view: View, moves: list[Move]) -> Move:
        ordered = canonical(moves)
        if len(ordered) == 1:
            return ordered[0]
        if view.in_opening():
            # Lay the longest chain whole (the planner's opening): it is what wins most, and
            # searching it would cost the longest roll-outs of the round for little gain.
            return self.opening.choose(view, moves)
        candidates = self.shortlist(view, ordered)
        totals = {move: 0.0 for move in candidates}
        # Successive halving: each round spends an equal share of the budget on the survivors.
        share = self.moves // max(1, (len(candidates) - 1).bit_length())
        spent = 0
        while len(candidates) > 1:
            spent += self._sample_round(view, candidates, totals, share, spent)
            # The survivors have all met the same samples, so their totals compare.
            candidates = sorted(candidates, key=lambda m: totals[m])[: (len(candidates) + 1) // 2]
        return min(candidates, key=lambda m: totals[m])

    def shortlist(self, view: View, moves: list[Move]) -> list[Move]:
        """The moves worth searching (a bench swaps in others)."""
        del view
        return moves

    def playout(self, state: GameState) -> int:
        """Play a sample on; the moves it took (a bench swaps in others)."""
        return rollout(state)

    def outcome(self, state: GameState, seat: int) -> float:
        """A played-out sample's worth to ``seat``, lower better (a bench swaps in others)."""
        return result(state, seat)

    def world(self, view: View) -> GameState:
        """One determinization: a full state that agrees with ``view``, hidden tiles dealt
        uniformly (a measuring bench swaps in others to price the hidden information)."""
        if self.sampler is None or self.sampler.view is not view:
            self.sampler = Sampler(view)
        return self.sampler.draw(self.rng)

    def _sample_round(
        self, view: View, candidates: list[Move], totals: dict[Move, float], share: int, before: int
    ) -> int:
        """One sample at a time, every candidate played out on it, until ``share`` moves are
        spent, and then up to ``least`` samples while the decision (``before`` spent in its
        earlier rounds) stays under its ceiling; the moves it spent."""
        seat = view.seat
        ceiling = self.moves * CEILING - before
        spent = samples = 0
        while samples == 0 or spent < share or (samples < self.least and spent < ceiling):
            world = self.world(view)
            spent += SAMPLE_COST
            for move in candidates:
                trial = world.copy()
                apply(trial, seat, move)
                searched = SEARCHED.nodes
                spent += self.playout(trial) + (SEARCHED.nodes - searched) // NODES_PER_MOVE
                totals[move] += self.outcome(trial, seat)
            samples += 1
        return spent
