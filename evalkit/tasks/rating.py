"""Kind ``rating``: rubric ratings of items the evaluator picks from a list (e.g. a system's novelty
assessment of papers they know), each item scored on every metric (1..n) with an optional comment."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..datasets import RatingItem
from ..store import Rating, Session, Store
from .base import Common, SurveyError, Table, TaskKind

if TYPE_CHECKING:
    from ..sampling import Question
    from ..store import Progress

__all__ = ["KIND", "Metric", "RatingTask", "dot_graph", "finish_rating", "missing_scores", "record_item_rating"]


@dataclass(frozen=True)
class Metric:
    """One rubric question scored 1..len(anchors); ``anchors[k]`` describes score k+1."""

    id: str
    label: str
    question: str
    anchors: tuple[str, ...]

    @property
    def scale(self) -> tuple[int, ...]:
        """The allowed scores, 1..n."""
        return tuple(range(1, len(self.anchors) + 1))


@dataclass(frozen=True)
class RatingTask:
    """Rubric ratings of items (e.g. a system's novelty assessment of a paper)."""

    id: str
    title: str
    instructions: str
    items: Path
    metrics: tuple[Metric, ...]
    familiarity: Metric | None = None
    min_items: int = 1
    suggested_items: int = 3
    kind: Literal["rating"] = "rating"

    @property
    def questions(self) -> tuple[Metric, ...]:
        """Every question an evaluator answers per item, in order: familiarity (if asked), then the metrics."""
        return ((self.familiarity,) if self.familiarity else ()) + self.metrics


def _metric(data: Any, file: Path, where: str) -> Metric:
    t = Table(data, file, where)
    metric_id = t.ident("id")
    metric = Metric(
        id=metric_id,
        label=t.str("label", metric_id.replace("_", " ").capitalize()),
        question=t.str("question"),
        anchors=t.strs("anchors"),
    )
    if len(metric.anchors) < 2:
        t.fail("anchors", "needs at least two levels (one description per score)")
    t.done()
    return metric


class RatingKind(TaskKind):
    """Rubric ratings of items the evaluator picks; a block counts ``min_items`` steps plus one to finish."""

    name = "rating"
    source = "picked"
    summary_line = "rubric ratings (1..n per metric) of items the evaluator picks from an items file"

    def parse(self, t: Table, common: Common) -> RatingTask:
        rel = t.str("items")
        items = (common.base / rel).resolve()
        if not items.is_file():
            t.fail("items", f"rating items file {rel!r} not found (looked for {items})")
        raw_metrics = t.get("metrics")
        if not isinstance(raw_metrics, list) or not raw_metrics:
            t.fail("metrics", "needs at least one [[tasks.metrics]] table (id, question, anchors)")
        metrics = tuple(_metric(m, common.file, f"{common.label} metric #{k}")
                        for k, m in enumerate(raw_metrics, start=1))
        ids = [m.id for m in metrics]
        if len(set(ids)) != len(ids):
            t.fail("metrics", f"metric ids must be unique, got {ids}")
        fam = t.get("familiarity", None)
        familiarity = None
        if fam is not None:
            fam = {"id": "familiarity", **fam} if isinstance(fam, dict) else fam
            familiarity = _metric(fam, common.file, f"{common.label} familiarity")
            if familiarity.id in ids:
                t.fail("familiarity", f"its id {familiarity.id!r} is also a metric id")
        min_items = t.int("min_items", 1, minimum=1)
        suggested = t.int("suggested_items", max(min_items, 3), minimum=1)
        if suggested < min_items:
            t.fail("suggested_items", f"({suggested}) is less than min_items ({min_items})")
        return RatingTask(id=common.id, title=common.title, instructions=common.instructions, items=items,
                          metrics=metrics, familiarity=familiarity, min_items=min_items, suggested_items=suggested)

    def describe(self, task: RatingTask) -> dict[str, Any]:
        return {"metrics": [{"id": m.id, "label": m.label, "scale": len(m.anchors)} for m in task.metrics],
                "familiarity": task.familiarity is not None, "min_items": task.min_items}

    def step_label(self, task: RatingTask, index: int, n_questions: int, rated: int, what: str) -> str:
        """How many items are still required, or that the next one is optional once ``min_items`` are rated."""
        need = task.min_items
        if rated < need:
            return f"{what} {index + 1} of at least {need}"
        return f"{what} {index + 1} (optional: the {need} required {'is' if need == 1 else 'are'} done)"

    def progress(self, task: RatingTask, questions: Sequence[Question], progress: Progress) -> tuple[int, int]:
        """The required items, then "finish"."""
        if task.id in progress.finished:
            return task.min_items + 1, task.min_items + 1
        return task.min_items + 1, min(len(progress.rated.get(task.id, {})), task.min_items)

    def next_question(self, task: RatingTask, questions: Sequence[Question],
                      progress: Progress) -> tuple[int, Question | None, int, Mapping[int, str]] | None:
        """The index the next rating gets, until the evaluator finishes the block."""
        if task.id in progress.finished:
            return None
        rated = progress.rated.get(task.id, {})
        return max(rated, default=-1) + 1, None, task.min_items, rated


KIND = RatingKind()


def missing_scores(task: RatingTask, scores: Mapping[str, int | None]) -> list[Metric]:
    """The questions of a rating (familiarity first, then the metrics) that have no score in ``scores``."""
    return [m for m in task.questions if scores.get(m.id) is None]


def record_item_rating(store: Store, session: Session, task: RatingTask, index: int, item_id: str | None,
                       scores: Mapping[str, int | None], comment: str, time_spent_ms: int | None,
                       items: Sequence[RatingItem], *, finish: bool = False) -> list[Rating]:
    """Store one rated item: familiarity (if configured) and every metric, all required, 1..n each.

    With ``finish`` ("Save and finish") the block is closed in the same transaction as the rating, which is
    refused while this rating would still leave fewer than ``min_items`` rated.
    """
    if item_id is None or item_id not in {i.id for i in items}:
        raise SurveyError("Please choose a paper first.")
    if finish:
        _require_min_items(store, session, task, also_rating=index)
    missing = [m.label for m in missing_scores(task, scores)]
    if missing:
        raise SurveyError("Please answer every question before saving: " + ", ".join(missing) + ".")
    clean: dict[str, int] = {}
    for m in task.questions:
        score = scores[m.id]
        if score not in m.scale:
            raise SurveyError(f"{m.label}: the score must be one of {list(m.scale)}.")
        clean[m.id] = int(score)  # type: ignore[arg-type]
    return store.record_rating(session.session_id, task.id, index, item_id, clean, comment=comment[:5000],
                               time_spent_ms=time_spent_ms, finish=finish)


def _require_min_items(store: Store, session: Session, task: RatingTask, also_rating: int | None = None) -> None:
    """SurveyError unless ``min_items`` are rated (counting the rating ``also_rating`` being saved now)."""
    rated = set(store.rated_items(session.session_id, task.id))
    if also_rating is not None:
        rated.add(also_rating)
    need = task.min_items - len(rated)
    if need > 0:
        raise SurveyError(f"Please rate {need} more {'paper' if need == 1 else 'papers'} before finishing.")


def finish_rating(store: Store, session: Session, task: RatingTask) -> None:
    """Close a rating block; refused until ``min_items`` items are rated."""
    _require_min_items(store, session, task)
    store.finish_task(session.session_id, task.id)


def _dot_string(text: str) -> str:
    """A DOT double-quoted string. Backslashes and quotes are escaped, so no DOT escape (\\N, \\G, \\l)
    in the text applies; real newlines become DOT's ``\\n`` line breaks."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return '"' + escaped.replace("\n", "\\n") + '"'


_NODE_STYLE = {
    "title": 'style="rounded,filled,bold", fillcolor="#dbe7fb", color="#2457a6"',
    "claim": 'style="rounded,filled", fillcolor="#e8f4ea", color="#2f7d3b"',
    "method": 'style="rounded,filled", fillcolor="#fdf3dc", color="#a66f00"',
    "experiment": 'style="rounded,filled", fillcolor="#f4e8f7", color="#7b3f8c"',
}


def dot_graph(item: RatingItem, *, width: int = 30, excerpt: int = 110) -> str:
    """A Graphviz DOT digraph of an item's graph, top-down (title -> claims -> methods -> experiments).

    Each node shows its kind, its label and an excerpt of its text, wrapped to
    ``width`` characters. All text is escaped for DOT's quoted strings and no
    HTML-like labels are used, so node text cannot inject markup; node ids are
    positional (n0, n1, ...), never taken from the item.
    """
    def wrap(text: str) -> str:
        return "\n".join(textwrap.wrap(text, width=width)) or " "

    lines = ["digraph G {", '  rankdir=TB; nodesep=0.25; ranksep=0.45; bgcolor="transparent";',
             '  node [shape=box, fontname="Helvetica", fontsize=10, margin="0.12,0.06"];',
             '  edge [color="#6b7280", arrowsize=0.7];']
    ids = {}
    for k, node in enumerate(item.nodes):
        ids[node.id] = f"n{k}"
        body = " ".join(node.text.split())
        if len(body) > excerpt:
            body = body[: excerpt - 1].rsplit(" ", 1)[0] + "…"
        if body.startswith(node.label):  # the text repeats the label: show it once
            label = f"{node.kind.upper()}\n{wrap(body)}"
        else:
            label = f"{node.kind.upper()}\n{wrap(node.label)}" + (f"\n\n{wrap(body)}" if body else "")
        style = _NODE_STYLE.get(node.kind, 'style="rounded"')
        lines.append(f"  n{k} [label={_dot_string(label)}, {style}];")
    for a, b in item.edges:
        lines.append(f"  {ids[a]} -> {ids[b]};")
    lines.append("}")
    return "\n".join(lines)
