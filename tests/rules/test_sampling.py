"""Samples of a seat's information set: they agree with all the seat sees, hold every tile once,
import as positions, depend on the view alone, and deal the unseen tiles uniformly."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
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
    export_position,
    game_view,
    import_position,
    legal_moves,
    new_game,
    score_view,
)
from service.rules.observer import View, seat_view
from service.rules.rng import SplitMix64
from service.rules.sampling import Sampler, sample_positions, sample_state, sampling_rng
from service.rules.tiles import Tile, full_set
from tests.rules.test_properties import games


def advance_randomly(
    state: GameState,
    steps: int,
    rng: random.Random,
    before: Callable[[GameState, int, Move], None] | None = None,
) -> GameState:
    """Deal and play ``steps`` random actions (deals count), stopping wherever that lands;
    ``before`` sees each move just before it is applied."""
    for _ in range(steps):
        if state.status == Status.GAME_OVER:
            break
        if state.status != Status.IN_ROUND:
            deal(state)
            continue
        seat = state.turn
        assert seat is not None
        move = rng.choice(legal_moves(state, seat))
        if before is not None:
            before(state, seat, move)
        apply(state, seat, move)
    return state


def hidden_tiles(state: GameState, seat: int) -> list[Tile]:
    others = [t for s, hand in enumerate(state.hands) if s != seat for t in hand]
    return sorted(others + state.boneyard)


def every_tile(doc: dict[str, Any]) -> list[tuple[int, ...]]:
    tiles = [tuple(sorted(t)) for hand in doc["hands"] for t in hand]
    tiles += [tuple(sorted(t)) for t in doc["boneyard"]]
    tiles += [tuple(sorted(t)) for train in doc["trains"].values() if train for t in train]
    if doc["engine"] is not None:
        tiles.append((doc["engine"], doc["engine"]))
    return sorted(tiles)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(games(), st.integers(0, 400), st.integers(0, 13), st.integers(0, 2**63 - 1))
def test_samples_agree_with_the_seat_view(
    game: tuple[str, int, dict[str, Any], int], steps: int, seat_pick: int, seed: int
) -> None:
    preset, n, options, game_seed = game
    state = new_game([f"p{i}" for i in range(n)], preset, options, seed=game_seed)
    advance_randomly(state, steps, random.Random(game_seed))
    seat = seat_pick % n
    view = seat_view(state, seat)
    # A bot's path: the seat's game view JSON (plus the public per-round scores) gives the same.
    from_json = View.from_json(game_view(state, seat), seat, state.scores)
    assert from_json == view
    full = sorted(tuple(t) for t in full_set(state.rules.set))
    for doc in sample_positions(view, 3, seed):
        sample = import_position(doc)
        assert export_position(sample) == doc
        assert game_view(sample, seat) == game_view(state, seat)
        assert score_view(sample) == score_view(state)
        assert seat_view(sample, seat) == view
        assert doc["seed"] != state.seed  # the real seed would reveal every deal
        if state.status != Status.WAITING_DEAL:
            assert every_tile(doc) == full
            assert hidden_tiles(sample, seat) == hidden_tiles(state, seat)
        if state.turn == seat:
            assert legal_moves(sample, seat) == legal_moves(state, seat)


def mid_round(seed: int = 7, steps: int = 20, players: int = 4) -> GameState:
    state = new_game([f"p{i}" for i in range(players)], "standard", seed=seed)
    return advance_randomly(state, steps, random.Random(seed))


def test_the_samples_depend_on_the_view_alone() -> None:
    """Two true states that differ only in tiles seat 0 cannot see give the same samples."""
    state = mid_round()
    twin = state.copy()
    # Swap one tile of seat 1's hand with the boneyard's first tile: seat 0 cannot tell.
    a, b = twin.hands[1][0], twin.boneyard[0]
    twin.hands[1] = sorted([*twin.hands[1][1:], b])
    twin.boneyard[0] = a
    twin.reindex()
    twin.seed = state.seed + 1
    assert export_position(twin) != export_position(state)
    assert seat_view(twin, 0) == seat_view(state, 0)
    ours = sample_positions(seat_view(state, 0), 20, seed=99)
    assert sample_positions(seat_view(twin, 0), 20, seed=99) == ours
    assert sample_positions(seat_view(state, 0), 20, seed=100) != ours
    assert len({str(doc["hands"]) for doc in ours}) == 20


@pytest.mark.parametrize(("players", "steps"), [(2, 5), (4, 20), (4, 60)])
def test_a_sampler_draws_what_fresh_samples_draw(players: int, steps: int) -> None:
    """A bot draws a decision's samples from one Sampler and plays each to the end of the
    round: every draw is still the sample ``sample_state`` deals from the generator at that
    point, whatever was done to the ones before."""
    state = mid_round(seed=players + steps, steps=steps, players=players)
    view = seat_view(state, state.turn if state.turn is not None else 0)
    sampler, ours, fresh = Sampler(view), sampling_rng(5), sampling_rng(5)
    rng = random.Random(1)
    for _ in range(20):
        sample = sampler.draw(ours)
        assert export_position(sample) == export_position(sample_state(view, fresh))
        while sample.status == Status.IN_ROUND and sample.turn is not None:
            apply(sample, sample.turn, rng.choice(legal_moves(sample, sample.turn)))


def test_a_view_that_does_not_fit_its_tiles_is_refused() -> None:
    view = seat_view(mid_round(), 0)
    broken = View(**{**_fields(view), "boneyard_size": view.boneyard_size + 1})
    with pytest.raises(InvalidPosition):
        sample_state(broken, sampling_rng(1))


def _fields(view: View) -> dict[str, Any]:
    return {name: getattr(view, name) for name in View.__slots__}


# ------------------------------------------------------------------------ uniformity

SAMPLES = 1000
FAMILY_ALPHA = 0.001  # Bonferroni over the tiles: a false alarm once in a thousand seeds


def placement_p_values(view: View, rng: SplitMix64) -> tuple[list[float], float]:
    """Per unseen tile, the chi-square p-value of where it landed against the sizes of the
    hidden places; and the p-value of which tile is drawn next (uniform over unseen tiles)."""
    places = [s for s in range(len(view.players)) if s != view.seat]
    sizes = [view.hand_sizes[s] for s in places] + [view.boneyard_size]
    unseen = view.unseen()
    counts = {tile: [0] * len(sizes) for tile in unseen}
    first: Counter[Tile] = Counter()
    for _ in range(SAMPLES):
        sample = sample_state(view, rng)
        for k, s in enumerate(places):
            for tile in sample.hands[s]:
                counts[tile][k] += 1
        for tile in sample.boneyard:
            counts[tile][-1] += 1
        first[sample.boneyard[0]] += 1
    expected = [SAMPLES * size / len(unseen) for size in sizes]
    per_tile = [float(chisquare(counts[tile], expected).pvalue) for tile in unseen]
    draws = [first[tile] for tile in unseen]
    return per_tile, float(chisquare(draws).pvalue)


class _SometimesUnshuffled(SplitMix64):
    """A broken dealer for the control: one deal in ten keeps the canonical tile order."""

    def shuffle(self, items: list[Any]) -> None:
        if self.below(10):
            super().shuffle(items)


def test_unseen_tiles_land_uniformly_over_the_hidden_places() -> None:
    view = seat_view(mid_round(), 0)
    assert view.boneyard_size and len(view.unseen()) > 30
    per_tile, first_draw = placement_p_values(view, sampling_rng(2024))
    tests = len(per_tile) + 1
    assert min(per_tile) > FAMILY_ALPHA / tests
    assert first_draw > FAMILY_ALPHA / tests


def test_the_uniformity_check_catches_a_biased_dealer() -> None:
    view = seat_view(mid_round(), 0)
    per_tile, _ = placement_p_values(view, _SometimesUnshuffled(2024))
    assert min(per_tile) < FAMILY_ALPHA / (len(per_tile) + 1)
