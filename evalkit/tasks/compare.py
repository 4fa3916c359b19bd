"""Kind ``compare``: two outputs of one item side by side (A / B), the item's input shown above them (the
HELP protocol's shape). Answered by a forced choice, a choice with "no preference", or the HELP slider.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .base import Common, PlanInputs, Table, TaskKind
from .itemsource import (
    ItemsSource,
    QueueSpec,
    balanced,
    card_labels,
    check_source,
    combinations,
    items_source,
    outline,
    plan_items,
    queued_questions,
    systems_of,
    task_rng,
)
from .responses import in_sentence

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..items import ItemSet
    from ..question import Question

__all__ = ["KIND", "CompareTask"]

CompareResponse = Literal["choice", "choice-tie", "slider"]


@dataclass(frozen=True)
class CompareTask:
    """Which of two systems' outputs for the same input is better."""

    id: str
    title: str
    instructions: str
    question: str
    source: ItemsSource
    response: CompareResponse = "choice"
    input_label: str = "Input"  # the input's card
    output_label: str = "Response"  # the outputs' cards: "Response A", "Response B"
    kind: Literal["compare"] = "compare"


class CompareKind(TaskKind):
    """Two systems' outputs of one item side by side; pairs of systems balanced within an evaluator."""

    name = "compare"
    source = "items"
    analysis = "compare_analysis"
    analysis_columns = ("left_source", "right_source", "button", "item_ids")
    summary_line = ("two systems' outputs for one item's input (items file), side by side; a choice, a choice "
                    "with 'no preference', or the HELP slider")

    def parse(self, t: Table, common: Common) -> CompareTask:
        source = items_source(t, common)
        if source.systems and len(source.systems) < 2:
            t.fail("systems", "needs at least two systems to compare")
        input_label, output_label = card_labels(t)
        return CompareTask(
            id=common.id, title=common.title, instructions=common.instructions, source=source,
            question=t.str("question", f"Which {in_sentence(output_label)} is better?"),
            response=t.choice("response", ("choice", "choice-tie", "slider"), "choice"),
            input_label=input_label, output_label=output_label)

    def describe(self, task: CompareTask) -> dict[str, Any]:
        return {"systems": list(task.source.systems), "response": task.response, "questions": task.source.questions}

    def outline(self, task: CompareTask, items: Mapping[Path, ItemSet]) -> str:
        return outline(task.source, items[task.source.items], f"two outputs side by side ({task.response})")

    def items_files(self, task: CompareTask) -> tuple[Path, ...]:
        return (task.source.items,)

    def check(self, task: CompareTask, file: Path, items: Mapping[Path, ItemSet]) -> None:
        its = items[task.source.items]
        check_source(file, task.id, task.source, its, 2, combinations(systems_of(task.source, its), 2))

    def queue_spec(self, task: CompareTask) -> QueueSpec | None:
        return task.source.queue

    def combos(self, task: CompareTask, items: Mapping[Path, ItemSet]) -> list[tuple[str, ...]]:
        return combinations(systems_of(task.source, items[task.source.items]), 2)

    def plan(self, task: CompareTask, inputs: PlanInputs) -> list[Question]:
        if task.source.queue is not None:  # the items come from the shared queue when the question is reached
            return queued_questions(task.id, self.name, task.source.questions)
        its = inputs.items[task.source.items]
        rng = task_rng(task.id, inputs.seed)
        shown = balanced(combinations(systems_of(task.source, its), 2), task.source.questions, rng, inputs.arrival)
        return plan_items(task.id, self.name, its, shown, rng)


KIND = CompareKind()
