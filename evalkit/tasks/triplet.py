"""Kind ``triplet``: which of N texts (one per source, same domain, drawn from the review pools) comes from
the target source. Answered by a choice among the texts (:func:`evalkit.tasks.responses.record_choice`).

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .base import Common, Table, TaskKind

__all__ = ["KIND", "Order", "Selection", "TripletTask"]

Selection = Literal["per-evaluator", "shared"]
Order = Literal["shuffled", "fixed"]


@dataclass(frozen=True)
class TripletTask:
    """Which of N texts (one per source, same domain) comes from ``target``."""

    id: str
    title: str
    question: str
    instructions: str
    sources: tuple[str, ...]
    target: str
    domains: tuple[str, ...]
    selection: Selection = "per-evaluator"
    order: Order = "shuffled"
    kind: Literal["triplet"] = "triplet"

    def slots(self) -> list[tuple[tuple[str, ...], str]]:
        """(sources, domain) of every question in config order."""
        return [(self.sources, d) for d in self.domains]


def selection_and_order(t: Table) -> dict[str, Any]:
    """The ``selection`` and ``order`` keys of a pool-based task."""
    return {"selection": t.choice("selection", ("per-evaluator", "shared"), "per-evaluator"),
            "order": t.choice("order", ("shuffled", "fixed"), "shuffled")}


class TripletKind(TaskKind):
    """Spot the text from the target source among one text per source."""

    name = "triplet"
    source = "pools"
    analysis = "triplet_analysis"
    analysis_columns = ("domain", "matched")
    summary_line = "one text per source from the review pools; which one comes from the target source?"

    def parse(self, t: Table, common: Common) -> TripletTask:
        sources = t.strs("sources")
        if len(sources) < 2:
            t.fail("sources", "needs at least two sources")
        if len(set(sources)) != len(sources):
            t.fail("sources", f"names a source twice: {list(sources)}")
        if len(sources) > 26:
            t.fail("sources", "at most 26 sources (texts are labelled A-Z)")
        target = t.str("target")
        if target not in sources:
            t.fail("target", f"{target!r} is not one of the task's sources {list(sources)}")
        return TripletTask(
            id=common.id, title=common.title, instructions=common.instructions,
            question=t.str("question", f"Which review was written by a {target} source?"),
            sources=sources, target=target, domains=t.strs("domains"), **selection_and_order(t))

    def describe(self, task: TripletTask) -> dict[str, Any]:
        return {"sources": list(task.sources), "target": task.target, "selection": task.selection}


KIND = TripletKind()
