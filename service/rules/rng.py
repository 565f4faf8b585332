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

A seed is for reproducing games; anyone who knows it knows every hand. A game whose randomness
the server picks also gets a *deal secret* of 128 random bits (32 hex digits ``k``), and its
numbers come from :class:`SecretStream` instead: output ``i`` (from 0) of round ``r`` is the
first 8 bytes (big-endian) of ``SHA-256(b"mexican-train/2:" + str(s) + b":" + k + b":" + str(r)
+ b":" + str(i))``, used by steps 3 and 4 unchanged. SplitMix64's 64-bit state could be searched
from one seen hand; this stream needs the 128-bit secret.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import TypeVar

T = TypeVar("T")

MASK64 = (1 << 64) - 1
_GAMMA, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
MAX_SEED = (1 << 63) - 1
SECRET_BYTES = 16  # 128 bits: out of reach of any search
_SECRET_RE = re.compile(f"[0-9a-f]{{{2 * SECRET_BYTES}}}")


class Shuffler:
    """Uniform indices and Fisher-Yates over a stream of 64-bit outputs (``next``)."""

    __slots__ = ()

    def next(self) -> int:
        raise NotImplementedError

    def below(self, n: int) -> int:
        """A uniform integer in ``0 .. n-1`` (multiply-shift; bias below 2**-50 for n <= 190)."""
        return (self.next() * n) >> 64

    def shuffle(self, items: list[T]) -> None:
        """Fisher-Yates in place, as documented in the module docstring."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


class SplitMix64(Shuffler):
    """SplitMix64: tiny, well known, and trivially re-implementable in any language."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & MASK64

    @classmethod
    def for_round(cls, seed: int, round_no: int) -> SplitMix64:
        digest = hashlib.sha256(b"mexican-train/1:%d:%d" % (seed, round_no)).digest()
        return cls(int.from_bytes(digest[:8], "big"))

    def next(self) -> int:
        self.state = (self.state + _GAMMA) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * _MIX1) & MASK64
        z = ((z ^ (z >> 27)) * _MIX2) & MASK64
        return z ^ (z >> 31)

    # ``below`` and ``shuffle`` with ``next`` inlined (the same numbers): a deal shuffles the
    # whole set, and the samplers' random walks ask thousands of indices.
    def below(self, n: int) -> int:
        z = self.state = (self.state + _GAMMA) & MASK64
        z = ((z ^ (z >> 30)) * _MIX1) & MASK64
        z = ((z ^ (z >> 27)) * _MIX2) & MASK64
        return ((z ^ (z >> 31)) * n) >> 64

    def shuffle(self, items: list[T]) -> None:
        state = self.state
        for i in range(len(items) - 1, 0, -1):
            z = state = (state + _GAMMA) & MASK64
            z = ((z ^ (z >> 30)) * _MIX1) & MASK64
            z = ((z ^ (z >> 27)) * _MIX2) & MASK64
            j = ((z ^ (z >> 31)) * (i + 1)) >> 64
            items[i], items[j] = items[j], items[i]
        self.state = state


class SecretStream(Shuffler):
    """The numbers of one round of a game with a deal secret: SHA-256 in counter mode, so no
    number of seen outputs reveals the secret or the next output."""

    __slots__ = ("count", "prefix")

    def __init__(self, seed: int, secret: str, round_no: int) -> None:
        self.prefix = b"mexican-train/2:%d:%s:%d:" % (seed, secret.encode(), round_no)
        self.count = 0

    def next(self) -> int:
        digest = hashlib.sha256(self.prefix + b"%d" % self.count).digest()
        self.count += 1
        return int.from_bytes(digest[:8], "big")


def deal_stream(seed: int, round_no: int, secret: str | None) -> Shuffler:
    """The numbers that deal round ``round_no``: from the seed alone, or with the deal secret."""
    if secret is None:
        return SplitMix64.for_round(seed, round_no)
    return SecretStream(seed, secret, round_no)


def random_secret() -> str:
    """128 fresh random bits as 32 lowercase hex digits."""
    return secrets.token_hex(SECRET_BYTES)


def valid_secret(value: object) -> bool:
    return isinstance(value, str) and _SECRET_RE.fullmatch(value) is not None


def random_seed() -> int:
    """A fresh 53-bit seed: an exact integer in every JSON client, JavaScript's doubles included,
    so a position exported and re-imported by any client keeps its future deals. Seeds up to
    ``MAX_SEED`` are still accepted when given."""
    return secrets.randbits(53)
