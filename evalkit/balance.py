"""Balanced display orders across evaluators: Williams designs keyed by arrival order.

An evaluator's *arrival* is the number of sessions created before theirs (``sessions.meta["arrival"]``, set by
:meth:`evalkit.store.base.Store.create_session`). Plans that know it (:func:`evalkit.sampling.plan` with
``arrival``) do not draw the display order of a question's texts independently; they take it from a
**Williams design** (Williams 1949): a balanced Latin square whose ``n`` rows (``2n`` for odd ``n``) are
orders of ``n`` treatments such that

* every treatment is in every position equally often (a Latin square; twice per position for odd ``n``), and
* every treatment immediately follows every other one equally often (once for even ``n``, twice for odd
  ``n``: first-order carryover balance, here "which text is read right after which").

The occurrences of one combination of systems (a pair, a set of three, ...) are numbered over all
evaluators in arrival order: occurrence ``m`` of combination number ``j`` is shown in the order
``row_for(m, j, k)`` (row ``(m + j) mod rows`` of the design of size ``k``). So over any run of consecutive
occurrences the rows come round in turn, and a pair (``k = 2``: rows ``(0, 1)`` and ``(1, 0)``) simply
alternates its sides. Within one evaluator the occurrences are consecutive too, so each evaluator's own
questions are balanced as well (within one).

Reference: E. J. Williams (1949), "Experimental designs balanced for the estimation of residual effects of
treatments", Australian Journal of Scientific Research, Series A 2(2), 149-168.

Everything here is pure integer arithmetic; :mod:`evalkit.audit` counts how the orders fell over simulated
evaluators. Imports nothing from evalkit.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = ["arrival_of", "extras", "extras_before", "row_for", "williams"]


@lru_cache(maxsize=64)
def _williams(n: int) -> tuple[tuple[int, ...], ...]:
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:  # 0, 1, n-1, 2, n-2, ...: consecutive differences are 1, -2, 3, -4, ... (all distinct)
        first.append(low)
        low += 1
        if len(first) < n:
            first.append(high)
            high -= 1
    rows = [tuple((t + r) % n for t in first) for r in range(n)]
    if n % 2:  # odd n: the square and its mirror image (2n rows) balance the carryover
        rows += [row[::-1] for row in rows]
    return tuple(rows)


def williams(n: int) -> list[list[int]]:
    """The rows of a Williams design for ``n`` treatments (``0..n-1``): ``n`` rows for even ``n``, ``2n`` for
    odd ``n`` (a cyclic square from the first row ``0, 1, n-1, 2, n-2, ...`` and, for odd ``n``, its rows
    reversed). Each row is a display order: ``row[p]`` is the treatment shown at position ``p``."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"a Williams design needs n >= 1 treatments, got {n!r}")
    return [list(row) for row in _williams(n)]


def row_for(arrival: int, index: int, n: int) -> list[int]:
    """Row ``(arrival + index) mod rows`` of :func:`williams` ``(n)``: the display order of the ``index``-th
    question of the evaluator who arrived ``arrival``-th (or, as the plans use it, of occurrence ``arrival``
    of combination number ``index``). Consecutive arrivals (or indices) walk through the rows in turn."""
    if isinstance(arrival, bool) or not isinstance(arrival, int) or arrival < 0:
        raise ValueError(f"arrival must be an integer >= 0, got {arrival!r}")
    rows = _williams(n) if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else williams(n)
    return list(rows[(arrival + index) % len(rows)])


def extras(arrival: int, rest: int, c: int) -> list[int]:
    """Which of ``c`` combinations an evaluator gets once more than the others when their ``q`` questions are
    ``q // c`` full rounds and ``rest = q % c`` more: ``rest`` consecutive ones of a cycle through all
    ``c``, starting where the previous arrival's stopped, so over ``c / gcd(rest, c)`` consecutive
    evaluators every combination gets the same number of extras."""
    return [(arrival * rest + t) % c for t in range(rest)]


def extras_before(arrival: int, rest: int, c: int, j: int) -> int:
    """How many extras (:func:`extras`) combination ``j`` got from the evaluators who arrived before ``arrival``."""
    shown = arrival * rest  # the cycle's positions 0 .. shown-1 were dealt; j sits at j, j + c, ...
    return max(0, -(-(shown - j) // c))


def arrival_of(meta: Mapping[str, Any] | None) -> int | None:
    """A session's arrival number from its ``meta``; None for sessions created before arrivals were stored
    (they keep the plan they always had) or a value that is not a non-negative integer."""
    value = (meta or {}).get("arrival")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value
