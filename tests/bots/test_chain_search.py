"""The planner's chain search against a plain recursive reading of it.

The search is written for speed (it runs inside every roll-out of the ``hard`` bot); its
answer and its node count must still be what this straightforward depth-first search gives,
since the count is charged to ``hard``'s budgets and so decides how far a decision looks.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.bots.planner import SEARCHED, TileT, _best_chain, best_chain, hand_of_bits
from service.rules import MAX_PIP

ALL_TILES = [(a, b) for a in range(MAX_PIP + 1) for b in range(a, MAX_PIP + 1)]


def reference(end: int, hand: list[TileT], search: int) -> tuple[tuple[TileT, ...], int]:
    """Longest trail from ``end`` (ties: most pips, first found), trails tried in the sorted
    hand's order, at most ``search`` nodes expanded; the chain and the nodes expanded."""
    hand = sorted(hand)
    used = [False] * len(hand)
    path: list[int] = []
    best: list[int] = []
    best_key = (0, 0)
    budget = search

    def dfs(at: int, count: int, total: int) -> None:
        nonlocal best, best_key, budget
        if (count, total) > best_key:
            best_key, best = (count, total), path[:]
        if budget <= 0:
            return
        budget -= 1
        for i, (a, b) in enumerate(hand):
            if used[i] or at not in (a, b):
                continue
            used[i] = True
            path.append(i)
            dfs(b if a == at else a, count + 1, total + a + b)
            path.pop()
            used[i] = False

    dfs(end, 0, 0)
    return tuple(hand[i] for i in best), search - budget


def bits_of(hand: list[TileT]) -> int:
    return sum(1 << ALL_TILES.index(tile) for tile in hand)


hands = st.lists(st.sampled_from(ALL_TILES[:91]), min_size=0, max_size=16, unique=True)


@settings(max_examples=400, deadline=None)
@given(hands, st.integers(0, 12), st.integers(0, 60))
def test_the_search_finds_what_a_plain_search_finds_with_the_same_nodes(
    hand: list[TileT], end: int, search: int
) -> None:
    """Budgets from none to past what the hand needs, so cut-off searches are compared too."""
    assert _best_chain.__wrapped__(end, bits_of(hand), search) == reference(end, hand, search)


def test_large_hands_that_exhaust_the_budget() -> None:
    """Hands that drew a dozen tiles and more: the budget runs out in the middle of a trail."""
    rng = random.Random(7)
    for _ in range(200):
        hand = rng.sample(ALL_TILES[:91], rng.randint(12, 24))
        end, search = rng.randint(0, 12), rng.choice((10, 100, 400, 4000))
        assert _best_chain.__wrapped__(end, bits_of(hand), search) == reference(end, hand, search)


def test_best_chain_charges_the_nodes_and_reads_any_order() -> None:
    hand = [(3, 7), (0, 3), (7, 7), (1, 2), (2, 7)]
    before = SEARCHED.nodes
    chain = best_chain(3, list(reversed(hand)))
    expected, nodes = reference(3, hand, 4000)
    assert chain == expected == ((3, 7), (7, 7), (2, 7), (1, 2))
    assert SEARCHED.nodes - before == nodes
    assert hand_of_bits(bits_of(hand)) == tuple(sorted(hand))
