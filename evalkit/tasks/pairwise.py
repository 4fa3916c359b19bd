"""Kind ``pairwise``: which of two texts (two sources, same domain, drawn from the review pools) is better.
Answered by a forced choice (:func:`evalkit.tasks.responses.record_choice`) or the HELP slider
(:func:`evalkit.tasks.responses.record_slider`).

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .base import Common, Table, TaskKind
from .triplet import Order, Selection, selection_and_order

__all__ = ["KIND", "PairwiseTask"]


@dataclass(frozen=True)
class PairwiseTask:
    """Which of two texts (two sources, same domain) is more natural."""

    id: str
    title: str
    question: str
    instructions: str
    pairs: tuple[tuple[str, str], ...]
    domains: tuple[str, ...]
    response: Literal["choice", "slider"] = "choice"
    selection: Selection = "per-evaluator"
    order: Order = "shuffled"
    kind: Literal["pairwise"] = "pairwise"

    def slots(self) -> list[tuple[tuple[str, ...], str]]:
        """(sources, domain) of every question in config order."""
        return [(tuple(p), d) for p, d in zip(self.pairs, self.domains, strict=True)]


class PairwiseKind(TaskKind):
    """Two texts from two sources side by side: a forced choice or the HELP slider."""

    name = "pairwise"
    source = "pools"
    analysis = "pairwise_analysis"
    analysis_columns = ("left_source", "right_source", "button")
    summary_line = "two texts from two sources of the review pools; a choice (A or B) or the HELP slider"

    def parse(self, t: Table, common: Common) -> PairwiseTask:
        raw_pairs = t.get("pairs")
        if not isinstance(raw_pairs, list) or not raw_pairs:
            t.fail("pairs", "must be a non-empty list of [source, source] pairs")
        pairs: list[tuple[str, str]] = []
        for k, p in enumerate(raw_pairs, start=1):
            if not (isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) and s.strip() for s in p)):
                t.fail("pairs", f"entry #{k} must be a list of two source names, got {p!r}")
            if p[0].strip() == p[1].strip():
                t.fail("pairs", f"entry #{k} compares {p[0].strip()!r} with itself")
            pairs.append((p[0].strip(), p[1].strip()))
        domains = t.strs("domains")
        if len(domains) != len(pairs):
            t.fail("domains", f"must give one domain per pair: {len(pairs)} pairs but {len(domains)} domains")
        return PairwiseTask(
            id=common.id, title=common.title, instructions=common.instructions,
            question=t.str("question", "Which review sounds more natural and realistic?"),
            pairs=tuple(pairs), domains=domains, response=t.choice("response", ("choice", "slider"), "choice"),
            **selection_and_order(t))

    def describe(self, task: PairwiseTask) -> dict[str, Any]:
        return {"pairs": [list(p) for p in task.pairs], "response": task.response, "selection": task.selection}


KIND = PairwiseKind()
