"""Kind ``rank``: n outputs of one item side by side, the item's input above them; the evaluator picks the
best (``response = "best"``, best-of-N) or orders them all (``response = "ranking"``).

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..missing import either
from .base import Common, PlanInputs, SurveyError, Table, TaskKind
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
from .media_log import with_media
from .responses import in_sentence, plural, save_answer

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..items import ItemSet
    from ..question import Question
    from ..store import Answer, Session, Store

__all__ = ["KIND", "RankTask", "best_missing", "order_from_places", "place_label", "place_name", "place_problems",
           "record_rank"]


@dataclass(frozen=True)
class RankTask:
    """Best-of-N or a full ranking of ``outputs_per_question`` outputs of one item (0: every system)."""

    id: str
    title: str
    instructions: str
    question: str
    source: ItemsSource
    response: Literal["best", "ranking"] = "best"
    outputs_per_question: int = 0
    input_label: str = "Input"  # the input's card
    output_label: str = "Response"  # the outputs' cards: "Response A", "Response B", ...
    kind: Literal["rank"] = "rank"

    def shown(self, systems: tuple[str, ...]) -> int:
        """How many outputs a question shows, given the task's systems."""
        return self.outputs_per_question or len(systems)


class RankKind(TaskKind):
    """n outputs of one item: the best one, or all of them in order."""

    name = "rank"
    source = "items"
    analysis = "rank_analysis"
    analysis_columns = ("sources", "item_ids")
    summary_line = ("n systems' outputs for one item's input (items file); pick the best (best-of-N) or rank "
                    "them all")

    def parse(self, t: Table, common: Common) -> RankTask:
        source = items_source(t, common)
        if source.systems and len(source.systems) < 2:
            t.fail("systems", "needs at least two systems to rank")
        n = t.int("outputs_per_question", 0, minimum=0)
        if n == 1:
            t.fail("outputs_per_question", "must be at least 2 (or 0: every system)")
        if source.systems and n > len(source.systems):
            t.fail("outputs_per_question", f"({n}) is more than the {len(source.systems)} systems")
        response = t.choice("response", ("best", "ranking"), "best")
        input_label, output_label = card_labels(t)
        default = (f"Which {in_sentence(output_label)} is best?" if response == "best" else
                   f"Order the {in_sentence(plural(output_label))} from best to worst.")
        return RankTask(id=common.id, title=common.title, instructions=common.instructions, source=source,
                        question=t.str("question", default), response=response, outputs_per_question=n,
                        input_label=input_label, output_label=output_label)

    def describe(self, task: RankTask) -> dict[str, Any]:
        return {"systems": list(task.source.systems), "response": task.response,
                "questions": task.source.questions, "outputs_per_question": task.outputs_per_question}

    def outline(self, task: RankTask, items: Mapping[Path, ItemSet]) -> str:
        its = items[task.source.items]
        n = task.shown(systems_of(task.source, its))
        return outline(task.source, its, f"{n} outputs, {'the best' if task.response == 'best' else 'a ranking'}")

    def items_files(self, task: RankTask) -> tuple[Path, ...]:
        return (task.source.items,)

    def check(self, task: RankTask, file: Path, items: Mapping[Path, ItemSet]) -> None:
        its = items[task.source.items]
        systems = systems_of(task.source, its)
        n = task.shown(systems)
        check_source(file, task.id, task.source, its, max(n, 2), combinations(systems, n))

    def queue_spec(self, task: RankTask) -> QueueSpec | None:
        return task.source.queue

    def combos(self, task: RankTask, items: Mapping[Path, ItemSet]) -> list[tuple[str, ...]]:
        systems = systems_of(task.source, items[task.source.items])
        return combinations(systems, task.shown(systems))

    def plan(self, task: RankTask, inputs: PlanInputs) -> list[Question]:
        if task.source.queue is not None:  # the items come from the shared queue when the question is reached
            return queued_questions(task.id, self.name, task.source.questions)
        its = inputs.items[task.source.items]
        rng = task_rng(task.id, inputs.seed)
        systems = systems_of(task.source, its)
        shown = balanced(combinations(systems, task.shown(systems)), task.source.questions, rng, inputs.arrival)
        return plan_items(task.id, self.name, its, shown, rng)


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"


def place_name(place: int, n: int) -> str:
    """How place ``place`` of ``n`` is shown: "1st (best)", "2nd", ..., "3rd (worst)"."""
    return _ordinal(place) + (" (best)" if place == 1 else " (worst)" if place == n else "")


def _names(labels: Sequence[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def order_from_places(labels: Sequence[str], places: Mapping[str, int | None], noun: str = "Response") -> list[str]:
    """The labels best first, from the place (1 = best .. n) the evaluator gave each output; SurveyError
    naming the outputs without a place, or those sharing one (``noun``: the task's ``output_label``)."""
    n = len(labels)
    one, many = in_sentence(noun), in_sentence(plural(noun))
    missing = [label for label in labels if places.get(label) is None]
    if missing:
        who = f"{one} {missing[0]}" if len(missing) == 1 else f"{many} {_names(missing)}"
        raise SurveyError(f"Please give {who} a place in the ranking (1st to {_ordinal(n)}).")
    given = {label: places[label] for label in labels}
    if any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= n for v in given.values()):
        raise SurveyError(f"Places run from 1st to {_ordinal(n)}.")
    for place in range(1, n + 1):
        sharing = [label for label in labels if given[label] == place]
        if len(sharing) > 1:
            raise SurveyError(f"{plural(noun)} {_names(sharing)} {'are both' if len(sharing) == 2 else 'are all'} "
                              f"{place_name(place, n)}: please give each {one} its own place.")
    return sorted(labels, key=lambda label: given[label])  # type: ignore[arg-type, return-value]


def place_label(label: str, noun: str = "Response") -> str:
    """The label of an output's place box: "Place of response B" (``noun``: the task's ``output_label``)."""
    return f"Place of {in_sentence(noun)} {label}"


def place_problems(labels: Sequence[str], places: Mapping[str, int | None], noun: str = "Response") -> dict[str, str]:
    """What is wrong with each output's place, for a mark right under its place box ("Place of response B"):
    no place chosen yet, or a place another output has too. Empty when the ranking is complete."""
    n = len(labels)
    one = in_sentence(noun)
    problems: dict[str, str] = {}
    for label in labels:
        place = places.get(label)
        if place is None:
            problems[label] = f"Please choose a place for {one} {label} in “{place_label(label, noun)}”."
            continue
        others = [other for other in labels if other != label and places.get(other) == place]
        if others and isinstance(place, int) and 1 <= place <= n:
            problems[label] = (f"{noun if len(others) == 1 else plural(noun)} {_names(others)} "
                               f"{'is' if len(others) == 1 else 'are'} "
                               f"{place_name(place, n)} too: each {one} needs its own place.")
    return problems


def best_missing(task: RankTask, labels: Sequence[str]) -> str:
    """The message of "Next" with no output chosen in a best-of-N question, naming the options as the page
    labels them ("Please choose the best response (Response A, Response B or Response C) before continuing.")."""
    noun = task.output_label
    return f"Please choose the best {in_sentence(noun)} ({either([f'{noun} {x}' for x in labels])}) before continuing."


def record_rank(store: Store, session: Session, task: RankTask, question: Question, order: Sequence[str] | None,
                time_spent_ms: int | None, *, media: Any = None) -> Answer:
    """Store a best-of-N answer (``order`` = [the best label]) or a full ranking (every label once, best
    first), exactly once. Response: the best label, or the labels best first joined by ``>`` (``"B>A>C"``);
    ``review_source``: the best output's system; ``detail["ranking"]``: the systems best first; ``detail["media"]``:
    the play log of the question's clips (``media``, :mod:`evalkit.tasks.media_log`)."""
    labels = question.labels
    given = list(order or [])
    noun = task.output_label
    if task.response == "best":
        if len(given) != 1 or given[0] not in labels:
            raise SurveyError(best_missing(task, labels))
        response = given[0]
    else:
        if sorted(given) != sorted(labels):
            raise SurveyError(f"Please give every {in_sentence(noun)} ({', '.join(labels)}) its own place in the "
                              "ranking.")
        response = ">".join(given)
    ranking = [question.source_of(label) for label in given]
    detail = with_media(question, {"ranking": ranking} if task.response == "ranking" else {}, media,
                        full_play=task.source.require_full_play, noun=noun, input_label=task.input_label)
    return save_answer(store, session, question, response, review_source=ranking[0], time_spent_ms=time_spent_ms,
                       detail=detail)


KIND = RankKind()
