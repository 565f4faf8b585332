"""A learned value of a round in play, for ``bench.hard_oracle``'s ``learned`` variant.

``margin(state, seat)`` guesses what a roll-out of the full state ``state`` would end at if
played on to the round's end with the roll-out policy of ``hard``: ``seat``'s round points
minus the others' mean. It is a small network (one hidden layer of rectifiers) over a few
numbers read off the state for each seat, taken in turn order from ``seat``; its weights are
trained by ``bench/train_hard_value.py`` from roll-out-policy self-play and kept beside this
file as JSON (``hard_value.json``), so inference needs nothing but Python.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path

from service.bots.planner import best_chain
from service.rules import GameState
from service.rules.engine import hand_points

#: The model the training script writes and the variant reads.
MODEL = Path(__file__).with_name("hard_value.json")

#: Chain-search nodes for a seat's plan: the roll-outs' own cut (``ROLLOUT_WEIGHTS``).
CHAIN_SEARCH = 400

#: Numbers per seat, then the numbers of the whole table.
SEAT_FEATURES = ("pips", "tiles", "doubles", "chain", "orphan_pips", "fits", "marked", "one")
TABLE_FEATURES = ("to_move_1", "to_move_2", "to_move_3", "boneyard", "open_doubles")


def seat_numbers(state: GameState, seat: int) -> list[float]:
    """What one seat's hand and train say about its round: pips (the double-blank as scored),
    tiles, doubles, the length of its planned chain, the pips outside that chain, the tiles
    fitting an end open to it now, whether its train is marked, and whether one tile is left."""
    hand = state.hands[seat]
    n = state.n_players
    chain = best_chain(state.ends[seat], hand, CHAIN_SEARCH)
    in_chain = set(chain)
    orphan = sum(t.a + t.b for t in hand if t not in in_chain)
    ends = {state.ends[seat]}
    if state.trains[n] or state.opened[seat]:
        ends.add(state.ends[n])
    for other in range(n):
        if other != seat and state.marked[other]:
            ends.add(state.ends[other])
    index = state.index[seat]
    fits = len({t for end in ends for t in index[end]})
    return [
        hand_points(state, seat) / 10,
        len(hand),
        sum(t.a == t.b for t in hand),
        len(chain),
        orphan / 10,
        fits,
        float(state.marked[seat]),
        float(len(hand) == 1),
    ]


def features(state: GameState, seat: int) -> list[float]:
    """The network's input for ``seat``: every seat's numbers, ``seat``'s first and the others
    in turn order after it, then who is to move (as seats after ``seat``), the boneyard's size
    and the open doubles."""
    n = state.n_players
    out: list[float] = []
    for k in range(n):
        out += seat_numbers(state, (seat + k) % n)
    turn = state.turn if state.turn is not None else seat
    ahead = (turn - seat) % n
    out += [float(ahead == 1), float(ahead == 2), float(ahead == 3)]
    out += [len(state.boneyard) / 10, len(state.open_doubles)]
    return out


class Model:
    """Input scaling, one hidden layer of rectifiers, one output: the margin."""

    def __init__(self, path: Path = MODEL) -> None:
        data = json.loads(path.read_text())
        self.mean: list[float] = data["mean"]
        self.scale: list[float] = data["scale"]
        self.hidden: list[tuple[list[float], float]] = list(
            zip(data["w1"], data["b1"], strict=True)
        )
        self.out: list[float] = data["w2"]
        self.bias: float = data["b2"]

    def predict(self, x: list[float]) -> float:
        z = [(v - m) * s for v, m, s in zip(x, self.mean, self.scale, strict=True)]
        mul = operator.mul
        h = [max(0.0, sum(map(mul, w, z)) + b) for w, b in self.hidden]
        return sum(map(mul, self.out, h)) + self.bias

    def margin(self, state: GameState, seat: int) -> float:
        return self.predict(features(state, seat))
