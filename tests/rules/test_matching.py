"""The random walk over perfect matchings reaches every matching, equally often."""

from __future__ import annotations

from collections import Counter

from service.rules.matching import find_matching, shuffle_matching
from service.rules.sampling import sampling_rng


def cycle_masks(k: int) -> list[int]:
    """Item ``i`` fits slots ``i`` and ``i + 1`` (mod ``k``): exactly two matchings, which
    differ by one rotation of all ``k`` slots, so no swap or 3-cycle joins them for k >= 4."""
    return [(1 << s) | (1 << ((s - 1) % k)) for s in range(k)]


def test_a_matching_is_found_or_there_is_none() -> None:
    masks = cycle_masks(5)
    found = find_matching(masks, 5)
    assert found is not None and sorted(found) == list(range(5))
    assert all(masks[slot] >> item & 1 for slot, item in enumerate(found))
    assert find_matching([0b01, 0b01], 2) is None  # two slots, one item fits either


def test_the_walk_reaches_matchings_only_long_rotations_join() -> None:
    """The two matchings of a 4-cycle are joined only by a rotation of all four slots (rare:
    one proposal in 16, then the right slots in order), yet a long walk spends half its time
    in each."""
    masks = cycle_masks(4)
    walk = find_matching(masks, 4)
    assert walk is not None
    rng, seen = sampling_rng(4), Counter[tuple[int, ...]]()
    for _ in range(4000):
        shuffle_matching(walk, masks, rng, 100)
        assert all(masks[slot] >> item & 1 for slot, item in enumerate(walk))
        seen[tuple(walk)] += 1
    assert len(seen) == 2
    assert 0.4 < min(seen.values()) / 4000 <= 0.5
