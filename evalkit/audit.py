"""The balance audit of ``evalkit check``: over simulated evaluators' plans, how often each system sat at each
position and each pair was shown, with chi-square tests against uniform (:func:`audit`, :func:`audit_lines`).

Sits above the task kinds (it asks the kind registry which kinds read items files); may import
:mod:`evalkit.question` and :mod:`evalkit.tasks`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .question import Question
from .tasks import KINDS

__all__ = ["TaskBalance", "audit", "audit_lines"]


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
            if len(q.sources) == 2 and KINDS[q.kind].source == "items":
                b.pairs[tuple(sorted(q.sources))] += 1  # type: ignore[index]
    for b in out.values():
        b.evaluators = n
    return list(out.values())


def _ratio(counts: Sequence[int]) -> str:
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
            lines.append(f"    pairs: {shown}; {_ratio(counts)}; chi-square {stat:.2f} (df {df}), p = {p:.3g}")
    return lines
