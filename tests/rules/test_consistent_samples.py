"""Samples true to the public history: on small sets every deal that fits the recorded moves
is enumerated by replaying them through the engine, and the sampler's frequencies must match
that count (chi-square); on bigger games no sample may contradict a recorded draw or mark."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import combinations
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from service.rules import (
    GameState,
    InvalidPosition,
    Move,
    Status,
    apply,
    deal,
    import_position,
    legal_moves,
    new_game,
    visible_events,
)
from service.rules.events import Event
from service.rules.history import Chronicle, Clue, ClueKind
from service.rules.observer import seat_view
from service.rules.sampling import sample_positions, sample_state, sampling_rng
from service.rules.tiles import Action, Tile
from tests.rules.test_properties import games
from tests.rules.test_sampling import advance_randomly

VIEWER = 0
Hand = tuple[Tile, ...]


@dataclass
class Recorded:
    """A round played from its deal: the state then and now, the moves, what seat 0 saw."""

    start: GameState
    now: GameState
    moves: list[tuple[int, Move]]
    seen: list[list[Event]]
    chronicle: Chronicle

    def clues(self) -> tuple[Clue, ...]:
        return self.chronicle.seen_by(VIEWER, self.now.round)


def record_round(
    players: int, options: dict[str, Any], seed: int, steps: int, preset: str = "standard"
) -> Recorded:
    """Deal round 1 and play up to ``steps`` random moves (fewer if the round ends)."""
    state = new_game([f"p{i}" for i in range(players)], preset, options, seed=seed)
    deal(state)
    rng = random.Random(seed)
    rec = Recorded(state.copy(), state, [], [], Chronicle())
    for _ in range(steps):
        if state.status != Status.IN_ROUND:
            break
        seat = state.turn
        assert seat is not None
        move = rng.choice(legal_moves(state, seat))
        rec.chronicle.note(state, seat, move)
        rec.seen.append(visible_events(apply(state, seat, move), VIEWER))
        rec.moves.append((seat, move))
    return rec


def _replays(state: GameState, rec: Recorded, at: int) -> Iterator[GameState]:
    """Every way the unknown boneyard order lets the recorded moves ``at..`` replay exactly:
    each of the other seat's draws branches on the tile it takes; seat 0's draws are known."""
    if at == len(rec.moves):
        yield state
        return
    seat, move = rec.moves[at]
    if move not in legal_moves(state, seat):
        return
    if move.action != Action.DRAW:
        if visible_events(apply(state, seat, move), VIEWER) == rec.seen[at]:
            yield from _replays(state, rec, at + 1)
        return
    drawn = rec.seen[at][0].get("tile")
    options = set(state.boneyard) if drawn is None else {Tile.of(*drawn)} & set(state.boneyard)
    for tile in sorted(options):
        branch = state.copy()
        branch.boneyard.remove(tile)
        branch.boneyard.insert(0, tile)
        if visible_events(apply(branch, seat, move), VIEWER) == rec.seen[at]:
            yield from _replays(branch, rec, at + 1)


def enumerate_deals(rec: Recorded) -> Counter[Hand]:
    """Seat 1's hand now, over every deal of the hidden tiles that replays the record (each
    leaf stands for the same number of orders of the tiles never drawn)."""
    start = rec.start
    hidden = sorted(start.hands[1] + start.boneyard)
    counts: Counter[Hand] = Counter()
    for hand in combinations(hidden, len(start.hands[1])):
        state = start.copy()
        state.hands[1] = list(hand)
        state.boneyard = [t for t in hidden if t not in hand]
        state.reindex()
        state.forget_legal()
        for end in _replays(state, rec, 0):
            counts[tuple(end.hands[1])] += 1
    return counts


def sampled_hands(rec: Recorded, n: int, seed: int) -> Counter[Hand]:
    view, clues, rng = seat_view(rec.now, VIEWER), rec.clues(), sampling_rng(seed)
    return Counter(tuple(sample_state(view, rng, clues).hands[1]) for _ in range(n))


def chi_square_p(exact: Counter[Hand], sampled: Counter[Hand], n: int) -> float:
    """The p-value of the sampled hands against the enumeration (cells of a small expected
    count pooled, as the test needs); a hand the enumeration never gives fails outright."""
    assert set(sampled) <= set(exact), "a sample that no deal fits"
    total = sum(exact.values())
    cells = sorted(exact, key=lambda h: exact[h])
    observed, expected, pool_o, pool_e = [], [], 0, 0.0
    for hand in cells:
        e = n * exact[hand] / total
        if e < 5:
            pool_o, pool_e = pool_o + sampled[hand], pool_e + e
            continue
        observed.append(sampled[hand])
        expected.append(e)
    if pool_e:
        observed.append(pool_o)
        expected.append(pool_e)
    return float(chisquare(observed, expected).pvalue)


# Found by search: rounds of double-6 where seat 1 drew and marked, so the history rules
# deals out (in the first two, the deals that fit give seat 1's hands unequal weights).
SMALL = [
    ({"set": 6, "hand_size": 10}, 17),
    ({"set": 6, "hand_size": 10}, 25),
    ({"set": 6, "hand_size": 9}, 10),
    ({"set": 6, "hand_size": 9}, 26),
]
STEPS = 18
SAMPLES = 3000
#: The samplers' seed, fixed so that a run is repeatable: an exact sampler fails the 0.001 test
#: for one seed in a thousand (docs/bots.md lists the p-values measured at other seeds).
SAMPLER_SEED = 2030


@cache
def enumerated(set_: int, hand_size: int, seed: int) -> tuple[Recorded, Counter[Hand]]:
    rec = record_round(2, {"set": set_, "hand_size": hand_size}, seed, STEPS)
    return rec, enumerate_deals(rec)


@pytest.mark.parametrize(("options", "seed"), SMALL)
def test_samples_match_the_enumerated_consistent_deals(options: dict[str, Any], seed: int) -> None:
    rec, exact = enumerated(options["set"], options["hand_size"], seed)
    assert len(exact) > 10
    p = chi_square_p(exact, sampled_hands(rec, SAMPLES, SAMPLER_SEED), SAMPLES)
    assert p > 0.001, p


@pytest.mark.parametrize(("options", "seed"), SMALL)
def test_uniform_samples_contradict_the_history(options: dict[str, Any], seed: int) -> None:
    """The control: dealt uniformly, seat 1 gets hands the recorded moves rule out."""
    rec, exact = enumerated(options["set"], options["hand_size"], seed)
    view, rng = seat_view(rec.now, VIEWER), sampling_rng(seed)
    uniform = Counter(tuple(sample_state(view, rng).hands[1]) for _ in range(200))
    assert not set(uniform) <= set(exact)


def contradictions(sample: GameState, clues: tuple[Clue, ...]) -> list[str]:
    """Recorded lacks a sample breaks: a seat now holds more tiles bearing a pip it lacked
    than it has drawn since."""
    found = []
    for at, clue in enumerate(clues):
        if clue.kind != ClueKind.LACKS or clue.seat == VIEWER:
            continue
        held = [t for t in sample.hands[clue.seat] if t.a in clue.pips or t.b in clue.pips]
        drawn = sum(c.kind == ClueKind.DREW and c.seat == clue.seat for c in clues[at:])
        if len(held) > drawn:
            found.append(f"seat {clue.seat} holds {held} after lacking {sorted(clue.pips)}")
    return found


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(games(), st.integers(0, 300), st.integers(0, 2**63 - 1))
def test_no_sample_contradicts_the_history(
    game: tuple[str, int, dict[str, Any], int], steps: int, seed: int
) -> None:
    """Every preset and option: the true deal fits the clues, and so does every sample."""
    preset, n, options, game_seed = game
    state = new_game([f"p{i}" for i in range(n)], preset, options, seed=game_seed)
    chronicle = Chronicle()
    advance_randomly(state, steps, random.Random(game_seed), chronicle.note)
    view = seat_view(state, VIEWER)
    clues = chronicle.seen_by(VIEWER, state.round)
    assert contradictions(state, clues) == []  # the checker accepts the truth
    for doc in sample_positions(view, 3, seed, clues):
        sample = import_position(doc)
        assert seat_view(sample, VIEWER) == view
        assert contradictions(sample, clues) == []


def test_a_long_round_keeps_every_recorded_mark() -> None:
    """Four players, a round deep in marks and draws: no sample breaks a recorded lack."""
    rec = record_round(4, {}, 12, 100)
    clues = rec.clues()
    assert sum(c.kind == ClueKind.LACKS and c.seat != VIEWER for c in clues) > 10
    view = seat_view(rec.now, VIEWER)
    uniform = [sample_state(view, sampling_rng(s)) for s in range(20)]
    assert any(contradictions(sample, clues) for sample in uniform)  # the checker can fail
    for doc in sample_positions(view, 50, 7, clues):
        assert contradictions(import_position(doc), clues) == []


def test_clues_no_deal_fits_are_refused() -> None:
    rec = record_round(2, {"set": 6, "hand_size": 9}, 10, STEPS)
    clues = rec.clues()
    every_pip = Clue(ClueKind.LACKS, 1, pips=frozenset(range(7)))
    with pytest.raises(InvalidPosition):
        sample_state(seat_view(rec.now, VIEWER), sampling_rng(1), (*clues, every_pip))
    draws = [Clue(ClueKind.DREW, 1)] * (len(rec.now.hands[1]) + len(clues))
    with pytest.raises(InvalidPosition):  # more draws than tiles held and played
        sample_state(seat_view(rec.now, VIEWER), sampling_rng(1), (*clues, *draws))


def test_a_chronicle_starts_afresh_each_round() -> None:
    rec = record_round(2, {"set": 6, "hand_size": 9}, 10, STEPS)
    assert rec.clues()
    assert rec.chronicle.seen_by(VIEWER, rec.now.round + 1) == ()
    others = [c for c in rec.clues() if c.kind == ClueKind.DREW and c.seat != VIEWER]
    assert others and all(c.tile is None for c in others)


@pytest.mark.parametrize(("options", "seed"), SMALL[:2])
def test_the_samples_of_one_walk_match_the_enumeration_too(
    options: dict[str, Any], seed: int
) -> None:
    """``sample_positions`` takes successive samples of one walk, ``THINNING`` apart."""
    rec, exact = enumerated(options["set"], options["hand_size"], seed)
    docs = sample_positions(seat_view(rec.now, VIEWER), SAMPLES, SAMPLER_SEED, rec.clues())
    walked = Counter(tuple(Tile.of(*t) for t in doc["hands"][1]) for doc in docs)
    assert chi_square_p(exact, walked, SAMPLES) > 0.001
