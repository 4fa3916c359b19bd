"""Balanced display orders across evaluators: Williams designs keyed by arrival order, and their audit.

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

Everything here but :func:`audit` (which needs scipy) is pure integer arithmetic. Floor: the kinds' toolkit
(``.importlinter``); imports nothing from evalkit but :mod:`evalkit.question` (for types).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .question import Question

__all__ = ["TaskBalance", "arrival_of", "audit", "audit_lines", "extras", "extras_before", "row_for",
           "williams"]


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


# ----------------------------------------------------------------------------- the audit


@dataclass
class TaskBalance:
    """How one task's texts fell over simulated evaluators: counts per (position, system) and per pair."""

    task: str
    kind: str
    evaluators: int
    questions: int = 0
    positions: Counter[tuple[int, str]] = field(default_factory=Counter)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)  # two texts per question: the unordered pair
    width: int = 0  # texts per question (the most seen)

    @property
    def systems(self) -> list[str]:
        """The systems (or sources) seen, in first-seen order of their position counts."""
        return list(dict.fromkeys(s for _, s in self.positions))

    def position_test(self) -> tuple[float, int, float]:
        """(statistic, degrees of freedom, p-value): each system's counts over the positions against uniform
        (its own total spread evenly; :func:`scipy.stats.chisquare` per system, statistics and degrees of
        freedom summed)."""
        from scipy.stats import chi2, chisquare

        stat, df = 0.0, 0
        for s in self.systems:
            counts = [self.positions[(p, s)] for p in range(self.width)]
            if sum(counts) and self.width > 1:
                stat += float(chisquare(counts).statistic)
                df += self.width - 1
        return stat, df, float(chi2.sf(stat, df)) if df else 1.0

    def pair_test(self) -> tuple[float, int, float]:
        """(statistic, degrees of freedom, p-value) of the pair counts against uniform over every pair of the
        systems seen (a pair never shown counts 0)."""
        from scipy.stats import chisquare

        counts = [self.pairs[p] for p in self.all_pairs()]
        if len(counts) < 2 or not sum(counts):
            return 0.0, 0, 1.0
        result = chisquare(counts)
        return float(result.statistic), len(counts) - 1, float(result.pvalue)

    def all_pairs(self) -> list[tuple[str, str]]:
        """Every unordered pair of the systems seen in two-text questions, in first-seen order."""
        seen = list(dict.fromkeys(s for pair in self.pairs for s in pair))
        return [tuple(sorted(p)) for p in itertools.combinations(seen, 2)]  # type: ignore[misc]


def audit(plans: Iterable[Sequence[Question]]) -> list[TaskBalance]:
    """Count, per task with planned questions, which system (or source) sat at which position and,
    for the kinds over items files (whose plans deal every pair of systems), which pairs were shown, over the
    given plans (one per simulated evaluator). A pool task's pairs are the config's, so they are not counted."""
    out: dict[str, TaskBalance] = {}
    n = 0
    for questions in plans:
        n += 1
        for q in questions:
            if q.check is not None or not q.sources:  # tutorial and attention checks are fixed items, not part of
                continue  # the design; a judgments_per_item placeholder gets its item and order when claimed
            b = out.setdefault(q.task, TaskBalance(q.task, q.kind, 0))
            b.questions += 1
            b.width = max(b.width, len(q.sources))
            for p, s in enumerate(q.sources):
                b.positions[(p, s)] += 1
            # An items question shows one item's outputs (its review ids: that item's id, once per text); a pool
            # question's pairs of sources are the config's, so they are not counted.
            if len(q.sources) == 2 and len(set(q.review_ids)) == 1 and q.sources[0] != q.sources[1]:
                b.pairs[tuple(sorted(q.sources))] += 1  # type: ignore[index]
    for b in out.values():
        b.evaluators = n
    return list(out.values())


def _ratio(counts: Sequence[int]) -> str:
    if not counts:
        return "max/min: nothing counted"
    low, high = min(counts), max(counts)
    return f"max/min {high / low:.2f}" if low else "max/min inf (a count is 0)"


def audit_lines(balances: Sequence[TaskBalance], labels: Sequence[str] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                modes: Mapping[str, str] | None = None) -> list[str]:
    """``evalkit check``'s lines for :func:`audit`: per task the count of each system per position, the
    max/min ratio, a chi-square test against uniform and, for two texts per question, the counts per pair.
    ``modes`` names how each task orders its texts ("rotation" or "shuffle")."""
    lines: list[str] = []
    for b in balances:
        mode = (modes or {}).get(b.task, "") if b.width > 1 else ""
        lines.append(f"  Task {b.task!r} ({b.kind}{', ' + mode if mode else ''}): {b.questions} questions")
        systems = b.systems
        if b.width == 1:
            counts = [b.positions[(0, s)] for s in systems]
            shown = ", ".join(f"{s} {c}" for s, c in zip(systems, counts, strict=True))
            lines.append(f"    one text per question: {shown}; {_ratio(counts)}")
            continue
        width = max(len(s) for s in systems)
        for s in systems:
            counts = [b.positions[(p, s)] for p in range(b.width)]
            cells = "  ".join(f"{labels[p]} {c:>5}" for p, c in enumerate(counts))
            lines.append(f"    {s:<{width}}  {cells}   {_ratio(counts)}")
        stat, df, p = b.position_test()
        lines.append(f"    positions: chi-square {stat:.2f} (df {df}), p = {p:.3g}")
        if b.pairs:
            pairs = b.all_pairs()
            counts = [b.pairs[q] for q in pairs]
            stat, df, p = b.pair_test()
            shown = ", ".join(f"{x}-{y} {b.pairs[(x, y)]}" for x, y in pairs)
            if len(pairs) < 2:  # one pair of systems: every question shows it, there is no balance to test
                lines.append(f"    pairs: {shown} (one pair: shown in every question)")
            else:
                lines.append(f"    pairs: {shown}; {_ratio(counts)}; chi-square {stat:.2f} (df {df}), p = {p:.3g}")
    return lines
