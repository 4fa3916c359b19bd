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

Floor: core (``.importlinter``). Imports nothing from evalkit.
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


#: from this many items on, :func:`shuffle` draws its random numbers with numpy (the same numbers)
_VECTOR_FROM = 2048


def shuffle(items: Sequence[T], rng: Mulberry32) -> list[T]:
    """Return a shuffled copy: the JavaScript Fisher–Yates used by the original.

    For i from n-1 down to 1: j = floor(rng() * (i + 1)); swap items i and j. A long list (a queue of a
    million units) has its draws computed at once with numpy (:func:`_draws`): the same numbers, bit for bit.
    """
    out = list(items)
    n = len(out)
    if n >= _VECTOR_FROM and rng._a + n * _INCREMENT < 2.0**53:
        for i, j in zip(range(n - 1, 0, -1), _draws(rng, n), strict=True):
            out[i], out[j] = out[j], out[i]
        return out
    for i in range(n - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out


def _draws(rng: Mulberry32, n: int) -> list[int]:
    """The ``j`` of each step of a Fisher–Yates shuffle of ``n`` items, ``rng``'s next n - 1 outputs computed at
    once, and ``rng`` moved past them. Mulberry32's k-th output is a function of ``a + k x 0x6D2B79F5`` alone,
    and while that sum stays below 2**53 the JavaScript double that holds it is exact, so the integers here are
    the same; the products of 32-bit numbers fit uint64; ``u / 2**32 * (i + 1)`` is the same IEEE double
    arithmetic as JavaScript's. (numpy has no Mulberry32: written here, checked against :meth:`Mulberry32.random`
    in the tests.)"""
    import numpy as np

    mask = np.uint64(_MASK)
    steps = np.arange(1, n, dtype=np.uint64)
    t = (np.uint64(int(rng._a)) + steps * np.uint64(_INCREMENT)) & mask
    t = ((t ^ (t >> np.uint64(15))) * (t | np.uint64(1))) & mask
    t ^= (t + (((t ^ (t >> np.uint64(7))) * (t | np.uint64(61))) & mask)) & mask
    u = (t ^ (t >> np.uint64(14))) & mask
    bound = np.arange(n, 1, -1, dtype=np.float64)  # i + 1 for i = n-1 .. 1
    rng._a += (n - 1) * _INCREMENT
    return (u.astype(np.float64) / 4294967296.0 * bound).astype(np.int64).tolist()


def derive_seed(*parts: object) -> int:
    """A stable 32-bit seed from labels (e.g. a study seed and a task id).

    Uses SHA-256, not :func:`hash`, which is salted per process.
    """
    import hashlib

    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big")
