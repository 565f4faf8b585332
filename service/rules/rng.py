"""The documented deterministic shuffle: same seed, same deal, on every machine and Python.

Python's ``random`` is not used because its algorithms are not promised stable across versions.
Instead, for round ``r`` of a game with seed ``s``:

1. the generator state is the first 8 bytes (big-endian) of
   ``SHA-256(b"mexican-train/1:" + str(s) + b":" + str(r))``;
2. numbers come from SplitMix64 (Steele, Lea & Flood 2014): add ``0x9E3779B97F4A7C15`` to the
   state, then mix it with the two multiply/xor-shift steps shown in ``SplitMix64.next``;
3. a uniform index below ``n`` is ``(x * n) >> 64`` for the next 64-bit output ``x``;
4. lists are shuffled with Fisher-Yates from the last position down: for ``i = len-1 .. 1``,
   swap item ``i`` with item ``below(i + 1)``.

The set's tiles enter the shuffle in canonical order (``[0,0], [0,1], ... [N,N]``).
"""

from __future__ import annotations

import hashlib
import secrets
from typing import TypeVar

T = TypeVar("T")

MASK64 = (1 << 64) - 1
MAX_SEED = (1 << 63) - 1


class SplitMix64:
    """SplitMix64: tiny, well known, and trivially re-implementable in any language."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & MASK64

    @classmethod
    def for_round(cls, seed: int, round_no: int) -> SplitMix64:
        digest = hashlib.sha256(b"mexican-train/1:%d:%d" % (seed, round_no)).digest()
        return cls(int.from_bytes(digest[:8], "big"))

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in ``0 .. n-1`` (multiply-shift; bias below 2**-50 for n <= 190)."""
        return (self.next() * n) >> 64

    def shuffle(self, items: list[T]) -> None:
        """Fisher-Yates in place, as documented in the module docstring."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def random_seed() -> int:
    """A fresh 53-bit seed: an exact integer in every JSON client, JavaScript's doubles included,
    so a position exported and re-imported by any client keeps its future deals. Seeds up to
    ``MAX_SEED`` are still accepted when given."""
    return secrets.randbits(53)
