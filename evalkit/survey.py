"""The evaluator's flow, independent of any UI: where a session stands and how answers are stored.

Pages call these functions and render the result; nothing here imports
Streamlit. Progress always comes from the store (the source of truth), the
plan from :func:`evalkit.sampling.plan`, so a refresh, a second tab or a
restarted server resume at the first unanswered question.
"""

from __future__ import annotations

import hmac
import math
import textwrap
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .config import Metric, RatingTask, Study, Task
from .datasets import RatingItem
from .sampling import Question
from .store import Answer, Progress, Rating, Session, Store

__all__ = [
    "EXTERNAL_ID_PARAMS",
    "SLIDER_BUTTONS",
    "Step",
    "SurveyError",
    "completion_link",
    "current_step",
    "dot_graph",
    "finish_rating",
    "missing_scores",
    "participant_resume",
    "progress_label",
    "record_choice",
    "record_item_rating",
    "record_slider",
]

#: Crowdsourcing query parameters captured on the consent page (Prolific's names).
EXTERNAL_ID_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
SLIDER_BUTTONS = ("accept", "reject")

StepKind = Literal["triplet", "pairwise", "rating", "done"]


class SurveyError(ValueError):
    """An answer cannot be stored as given (the message is meant for the evaluator)."""


@dataclass(frozen=True)
class Step:
    """The screen a session should see now.

    ``index`` is the question index within the task (for a rating block: the
    index the next rating gets). ``answered`` / ``total`` give overall progress:
    a rating block counts its ``min_items`` plus one step for finishing it, so
    the study reaches ``total`` only when nothing is left to do.
    """

    kind: StepKind
    task: Task | None
    task_number: int
    n_tasks: int
    index: int
    question: Question | None
    n_questions: int
    answered: int
    total: int
    rated: Mapping[int, str]


def current_step(study: Study, questions: Sequence[Question], progress: Progress) -> Step:
    """The first unanswered question of the first unfinished task, or ``done``."""
    by_task: dict[str, list[Question]] = {}
    for q in questions:
        by_task.setdefault(q.task, []).append(q)
    total = answered = 0
    for task in study.tasks:
        if isinstance(task, RatingTask):
            total += task.min_items + 1  # the required items, then "finish"
            done_here = task.id in progress.finished
            answered += (task.min_items + 1 if done_here
                         else min(len(progress.rated.get(task.id, {})), task.min_items))
        else:
            qs = by_task.get(task.id, [])
            total += len(qs)
            answered += sum(1 for q in qs if q.index in progress.answered.get(task.id, set()))
    n_tasks = len(study.tasks)
    for number, task in enumerate(study.tasks, start=1):
        if isinstance(task, RatingTask):
            if task.id in progress.finished:
                continue
            rated = progress.rated.get(task.id, {})
            index = max(rated, default=-1) + 1
            return Step("rating", task, number, n_tasks, index, None, task.min_items, answered, total, rated)
        done = progress.answered.get(task.id, set())
        for q in by_task.get(task.id, []):
            if q.index not in done:
                return Step(task.kind, task, number, n_tasks, q.index, q, len(by_task[task.id]), answered, total,
                            {})
    return Step("done", None, n_tasks, n_tasks, 0, None, 0, answered, total, {})


def progress_label(step: Step, what: str = "Question") -> tuple[float, str]:
    """The overall fraction done (1.0 only on the ``done`` step) and the progress bar's text.

    For a rating block the text says how many items are still required, or
    that the next one is optional once ``min_items`` are rated. The percentage
    is rounded down, so "100%" appears only when nothing is left.
    """
    fraction = step.answered / step.total if step.total else 1.0
    fraction = 1.0 if step.kind == "done" else min(fraction, 1.0)
    if step.kind == "rating":
        assert isinstance(step.task, RatingTask)
        need = step.task.min_items
        if len(step.rated) < need:
            label = f"{what} {step.index + 1} of at least {need}"
        else:
            label = f"{what} {step.index + 1} (optional: the {need} required {'is' if need == 1 else 'are'} done)"
    elif step.kind == "done":
        label = "Finished"
    else:
        label = f"{what} {step.index + 1} of {step.n_questions}"
    percent = 100 if step.kind == "done" else min(math.floor(100 * fraction), 99)
    return fraction, f"{label} · {percent}% of the study done"


def _common(question: Question) -> dict:
    return {"kind": question.kind, "slot": question.slot, "domain": question.domain,
            "sources": list(question.sources), "item_ids": list(question.review_ids), "matched": question.matched}


def _sides(question: Question) -> dict:
    if question.kind != "pairwise":
        return {}
    return {"left_source": question.sources[0], "right_source": question.sources[1]}


def record_choice(store: Store, session: Session, question: Question, label: str | None,
                  time_spent_ms: int | None) -> Answer:
    """Store a triplet or forced-choice pairwise answer: the chosen display label (A, B, C...).

    The chosen text's source is looked up here, server-side, and stored as
    ``review_source``; for pairs the left/right sources are stored too.
    """
    if label is None or label not in question.labels:
        raise SurveyError("Please choose one of the reviews before continuing.")
    return store.record_answer(
        session.session_id, question.task, question.index, label, review_source=question.source_of(label),
        time_spent_ms=time_spent_ms, **_common(question), **_sides(question))


def record_slider(store: Store, session: Session, question: Question, value: int, button: str,
                  time_spent_ms: int | None) -> Answer:
    """Store a HELP-protocol slider answer for a pair.

    ``value`` runs from -100 (left text entirely better) to +100 (right text
    entirely better). ``button`` is ``accept`` (both texts are suitable) or
    ``reject`` (both are unsuitable); at 0 they make a positive or a negative
    draw. ``response`` is the signed value; ``detail`` holds the button and the
    outcome (``left`` / ``right`` / ``positive_draw`` / ``negative_draw``);
    ``review_source`` is the preferred text's source (None for a draw).
    """
    if question.kind != "pairwise":
        raise SurveyError("The slider is only for pairs.")
    if button not in SLIDER_BUTTONS:
        raise SurveyError(f"Unknown button {button!r}.")
    if isinstance(value, bool) or not isinstance(value, int) or not -100 <= value <= 100:
        raise SurveyError("The slider value must be a whole number from -100 to 100.")
    if value < 0:
        outcome, preferred = "left", question.sources[0]
    elif value > 0:
        outcome, preferred = "right", question.sources[1]
    else:
        outcome, preferred = ("positive_draw" if button == "accept" else "negative_draw"), None
    return store.record_answer(
        session.session_id, question.task, question.index, str(value), review_source=preferred,
        time_spent_ms=time_spent_ms, detail={"button": button, "outcome": outcome},
        **_common(question), **_sides(question))


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


ResumeDecision = Literal["start", "resume", "refuse"]


def participant_resume(earlier: Session | None, external: Mapping[str, str]) -> ResumeDecision:
    """What to do when a link without a session token carries a participant id (``PROLIFIC_PID``).

    A participant id is not a secret (it shows up in exports, messages, screenshots), so it alone never
    hands a session to a browser: ``resume`` only when the link's Prolific ``SESSION_ID`` equals the one
    stored when that session started (Prolific puts the same ``SESSION_ID`` in the link every time the
    participant opens this study from their dashboard). ``start`` when no session has this participant
    id; ``refuse`` otherwise (one participant, one session): the page tells them to use their own link.
    """
    if earlier is None:
        return "start"
    given = external.get("SESSION_ID", "")
    stored = str(earlier.meta.get("session_id", ""))
    if given and stored and hmac.compare_digest(given.encode(), stored.encode()):
        return "resume"
    return "refuse"


def completion_link(study: Study, code: str) -> str | None:
    """The configured completion URL with ``{code}`` filled in (URL-encoded), or None."""
    if not study.completion_url:
        return None
    return study.completion_url.replace("{code}", urllib.parse.quote(code, safe=""))


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
