"""Random perfect matchings of items to slots, each slot taking the items its mask allows.

:func:`find_matching` finds one (augmenting paths); :func:`shuffle_matching` then walks a
Markov chain whose moves swap two slots' items or rotate three (now and then more), a move
taken only when every item lands in a slot that allows it. Each move is as likely as its
reverse and any matching can reach any other, so the chain's stationary law is uniform over
all of them: the sampler of consistent deals runs it long enough to forget its start
(docs/bots.md gives the measured fit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from service.rules.rng import Shuffler

__all__ = ["find_matching", "shuffle_matching"]


def find_matching(masks: Sequence[int], n_items: int) -> list[int] | None:
    """One item per slot, all different, each allowed by its slot's mask (bit ``i`` for item
    ``i``); ``None`` when there is none. Kuhn's augmenting paths: slots are few (< 200)."""
    owner: list[int] = [-1] * n_items  # item -> slot holding it

    def place(slot: int, tried: list[bool]) -> bool:
        mask = masks[slot]
        while mask:
            low = mask & -mask
            item = low.bit_length() - 1
            mask ^= low
            if tried[item]:
                continue
            tried[item] = True
            if owner[item] < 0 or place(owner[item], tried):
                owner[item] = slot
                return True
        return False

    for slot in range(len(masks)):
        if not place(slot, [False] * n_items):
            return None
    assignment = [-1] * len(masks)
    for item, slot in enumerate(owner):
        if slot >= 0:
            assignment[slot] = item
    return assignment


def shuffle_matching(
    assignment: list[int], masks: Sequence[int], rng: Shuffler, steps: int
) -> None:
    """``steps`` moves of the chain, in place. Most propose a swap of two slots' items or a
    rotation of three; one in ``_LONG`` a rotation of 4 to all slots, so that any two matchings
    are joined (they differ by disjoint cycles, each one such rotation), which swaps and
    3-cycles alone do not promise."""
    n = len(assignment)
    if n < 2:
        return
    below = rng.below
    for _ in range(steps):
        pick = below(_LONG)
        if pick == 0 and n > 3:
            _rotate_many(assignment, masks, below, n)
            continue
        i, j = below(n), below(n)
        x, y = assignment[i], assignment[j]
        if pick & 1 or n < 3:
            if masks[i] >> y & 1 and masks[j] >> x & 1:
                assignment[i], assignment[j] = y, x
            continue
        k = below(n)
        z = assignment[k]
        if i in (j, k) or j == k:
            continue
        # i's item moves to j, j's to k, k's to i
        if masks[j] >> x & 1 and masks[k] >> y & 1 and masks[i] >> z & 1:
            assignment[j], assignment[k], assignment[i] = x, y, z


#: One move in this many proposes a long rotation.
_LONG = 16


def _rotate_many(
    assignment: list[int], masks: Sequence[int], below: Callable[[int], int], n: int
) -> None:
    """Propose moving the item of each of ``k`` random distinct slots (4 <= k <= n) to the
    next, the last's to the first; stop at the first slot that would not take its item. The
    reverse rotation is the same tuple reversed, exactly as likely."""
    k = 4 + below(n - 3)
    first = below(n)
    chosen, item = [first], assignment[first]
    for _ in range(k - 1):
        slot = below(n)
        if slot in chosen or not masks[slot] >> item & 1:
            return
        chosen.append(slot)
        item = assignment[slot]
    if not masks[first] >> item & 1:
        return
    items = [assignment[slot] for slot in chosen]
    for m in range(k):
        assignment[chosen[(m + 1) % k]] = items[m]
