"""Seeded randomness that is bit-for-bit compatible with the JavaScript original.

The original survey drew its questions in the browser with the well-known
``mulberry32`` generator and a Fisher–Yates shuffle::

    function mulberry32(a) {
      return function () {
        let t = a += 0x6D2B79F5;
        t = Math.imul(t ^ t >>> 15, t | 1);
        t ^= t + Math.imul(t ^ t >>> 7, t | 61);
        return ((t ^ t >>> 14) >>> 0) / 4294967296;
      };
    }

Python's :mod:`random` is a Mersenne Twister and cannot reproduce that
sequence, and no maintained package implements Mulberry32, so it is written
here by hand (a dozen lines). The JavaScript state ``a`` is a double: it is kept
as a Python float so that even after 2**53 / 0x6D2B79F5 calls, when the double
starts to round, the sequence still matches JavaScript exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_MASK = 0xFFFFFFFF
_INCREMENT = 0x6D2B79F5


def _imul(a: int, b: int) -> int:
    """``Math.imul`` on unsigned 32-bit inputs, result as unsigned 32-bit."""
    return (a * b) & _MASK


class Mulberry32:
    """The Mulberry32 generator; ``random()`` matches JavaScript's ``mulberry32(seed)()``."""

    __slots__ = ("_a",)

    def __init__(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__}")
        self._a = float(seed)

    def next_uint32(self) -> int:
        """The next raw 32-bit output (before the division by 2**32)."""
        self._a += _INCREMENT  # a JavaScript number: an IEEE double, like a Python float
        t = int(self._a) & _MASK  # ToUint32 (same bits as ToInt32)
        t = _imul(t ^ (t >> 15), t | 1)
        t ^= (t + _imul(t ^ (t >> 7), t | 61)) & _MASK
        return (t ^ (t >> 14)) & _MASK

    def random(self) -> float:
        """A float in [0, 1), the same value JavaScript's ``mulberry32`` returns."""
        return self.next_uint32() / 4294967296

    def randbelow(self, n: int) -> int:
        """``Math.floor(rng() * n)``: an index in ``range(n)`` (n >= 1)."""
        if n < 1:
            raise ValueError("randbelow needs n >= 1")
        return int(self.random() * n)


def shuffle(items: Sequence[T], rng: Mulberry32) -> list[T]:
    """Return a shuffled copy: the JavaScript Fisher–Yates used by the original.

    For i from n-1 down to 1: j = floor(rng() * (i + 1)); swap items i and j.
    """
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


def derive_seed(*parts: object) -> int:
    """A stable 32-bit seed from labels (e.g. a study seed and a task id).

    Uses SHA-256, not :func:`hash`, which is salted per process.
    """
    import hashlib

    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big")
