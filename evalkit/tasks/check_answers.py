"""Answering a tutorial or attention-check question: :func:`record_check` stores every try and decides on the
server whether it was right (the expectation is the plan's :class:`~evalkit.question.CheckSpec`, never on a
page), :func:`pending_feedback` and :func:`skip_tutorial` serve the page; a wrong try that shows feedback raises
:class:`CheckFeedback`.

Part of the task-kind framework: every kind's answer goes through :func:`evalkit.tasks.responses.save_answer`,
which hands check questions to this module. May import :mod:`evalkit.question`, :mod:`evalkit.spans` (a span
check's expectations), :mod:`evalkit.store` and :mod:`evalkit.tasks.base`. (:mod:`evalkit.checks` re-exports these
names.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..question import CheckSpec, Question, question_columns
from ..spans import Span, expected_spans, marked_text, unmet
from .base import SurveyError

if TYPE_CHECKING:
    from ..store import Answer, Session, Store

__all__ = ["CheckFeedback", "check_problems", "correct", "pending_feedback", "record_check", "skip_tutorial",
           "span_problems"]


class CheckFeedback(SurveyError):
    """A wrong answer to a check question that shows feedback: nothing is recorded in ``evaluations`` yet.
    ``problems``: what exactly is wrong, one line each (a per-system check: the spans not marked, a score out of
    range, an order of scores not met), ``(label, line)`` with the label of the output it concerns ("" for the
    question)."""

    def __init__(self, feedback: str, *, skippable: bool = False,
                 problems: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(feedback)
        self.feedback = feedback
        self.skippable = skippable
        self.problems = problems


def check_problems(spec: CheckSpec, question: Question, detail: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What an answer to a per-system check (rule ``spans`` or ``systems``: Pearmut's ``validation``) misses, as
    ``(output label, line)`` (the label "" when the question shows one output); empty: it meets the check. Other
    rules have no lines (empty).

    Per output: each expected span not marked (Pearmut's rule: an expected span is met by any marked span within
    its bounds; extra spans are allowed unless the expectation says ``"extra_spans": false``, then each span that
    meets no expectation is named), each score outside its range, and a ``score_greaterthan`` not met (its line
    goes with the output that must score higher and names both by their labels, never by their systems)."""
    if spec.rule not in ("spans", "systems"):
        return []
    want = json.loads(spec.want)
    given = detail.get("spans", {})
    scores = detail.get("scores", {})
    n = len(question.sources)
    out: list[tuple[str, str]] = []

    def score(scale: str, k: int) -> Any:
        values = scores.get(scale) or []
        return values[k] if k < len(values) else None

    for k, system in enumerate(question.sources):
        label = question.labels[k] if n > 1 else ""
        if system not in want:
            continue
        expect = want[system]
        before = len(out)
        marked = [Span(int(a), int(b), str(sev), cat) for a, b, sev, cat in given.get(system, [])]
        expected = expected_spans(expect.get("error_spans", []))
        for miss in unmet(expected, marked):
            said = miss.describe(question.texts[k])
            near = next((m for m in marked if replace(miss, severity=None, category=None).matches(m)), None)
            if near is not None and miss.severity is not None and near.severity != miss.severity:
                line = f"{said} is marked, but as {near.severity}: change its severity to {miss.severity}."
            elif near is not None and miss.category is not None:
                line = f"{said} is marked, but as {near.category or 'no category'}: change its category."
            else:
                line = f"{said} is not marked yet."
            out.append((label, line[0].upper() + line[1:]))
        if not expect.get("extra_spans", True):  # evalkit's addition: only the expected spans may be marked
            for span in marked:
                if not any(e.matches(span) for e in expected):
                    out.append((label, f"\"{marked_text(question.texts[k], span)}\" is marked, but is not an "
                                       "error here."))
        for scale, bounds in (expect.get("score") or {}).items():
            value = score(scale, k)
            lo, hi = bounds
            if value is None or not lo <= value <= hi:
                out.append((label, f"The score should be between {lo:g} and {hi:g}" +
                            (f" (yours: {value:g})." if value is not None else ".")))
        order = expect.get("greater_than")
        if order and order["than"] in question.sources:
            j = question.sources.index(order["than"])
            mine, theirs = score(order["scale"], k), score(order["scale"], j)
            if mine is None or theirs is None or not mine > theirs:  # (Pearmut: strictly; a missing score fails)
                noun, on = order["noun"], f" on '{order['scale_label']}'" if order["scale_label"] else ""
                yours = f" (yours: {mine:g} and {theirs:g})" if mine is not None and theirs is not None else ""
                out.append((label, f"{noun} {question.labels[k]} should score higher than {noun} "
                                   f"{question.labels[j]}{on}{yours}."))
        if len(out) > before and expect.get("feedback"):  # the check's own words for this output, first
            out.insert(before, (label, expect["feedback"]))
    return out


#: The previous name of :func:`check_problems` (it decided span checks only).
span_problems = check_problems


def correct(spec: CheckSpec, response: str, review_source: str | None, detail: Mapping[str, Any],
            question: Question | None = None) -> bool:
    """Whether an answer meets a check (server-side, from the plan; a per-system check needs its ``question``)."""
    if spec.rule in ("spans", "systems"):
        return question is not None and not check_problems(spec, question, detail)
    if spec.rule == "source":
        return review_source is not None and review_source == spec.want
    if spec.rule == "response":
        return response == spec.want
    ranges = json.loads(spec.want)
    scores = detail.get("scores", {})
    return all(scale in scores and scores[scale] and all(lo <= v <= hi for v in scores[scale])
               for scale, (lo, hi) in ranges.items())


def record_check(store: Store, session: Session, question: Question, response: str, *, review_source: str | None,
                 time_spent_ms: int | None, detail: Mapping[str, Any], columns: Mapping[str, Any],
                 spans: Sequence[Mapping[str, Any]] = ()) -> Answer:
    """Store an answer to a check question: every try in ``check_tries``, the evaluations row (with the check
    type and whether the first try was right) once the question is over.

    A tutorial question is over when answered right (a wrong try raises :class:`CheckFeedback` with the
    feedback); an attention check at once (silent), or with ``attention_feedback`` after a wrong first try
    and one more answer, right or wrong."""
    spec = question.check
    assert spec is not None
    ok = correct(spec, response, review_source, detail, question)
    detail = {**detail, "check_id": spec.id}
    answered = store.answered(session.session_id, question.task)
    if question.index not in answered:
        stored = store.record_check_try(session.session_id, question.task, question.index, response, correct=ok,
                                        detail=detail, time_spent_ms=time_spent_ms)
        attempt = int(stored["attempt"])
        if not ok and (spec.type == "tutorial" or (spec.retry and attempt == 1)):
            raise _feedback(spec, question, detail)
    tries = store.check_tries(session.session_id, question.task, question.index)
    first = bool(tries[0]["correct"]) if tries else ok
    return store.record_answer(session.session_id, question.task, question.index, response,
                               review_source=review_source, time_spent_ms=time_spent_ms, detail=detail,
                               check=spec.type, check_passed=first, spans=spans, **columns)


def _feedback(spec: CheckSpec, question: Question, detail: Mapping[str, Any]) -> CheckFeedback:
    problems = tuple(check_problems(spec, question, detail))
    return CheckFeedback(spec.feedback, skippable=spec.skippable, problems=problems)


def skip_tutorial(store: Store, session: Session, question: Question) -> Answer:
    """Go on from a skippable tutorial question after a wrong try: its last try becomes the answer (not passed).
    SurveyError when the question is not a skippable tutorial question or has no wrong try."""
    spec = question.check
    if spec is None or spec.type != "tutorial" or not spec.skippable:
        raise SurveyError("This question cannot be skipped.")
    tries = store.check_tries(session.session_id, question.task, question.index)
    if not tries:
        raise SurveyError("Please answer the question first; you can skip it after a wrong answer.")
    last = tries[-1]
    detail = json.loads(last["detail"] or "{}")
    review = None
    if spec.rule == "source":  # the stored try's response is a label (or a slider value): look the source up
        resp = last["response"]
        review = question.source_of(resp) if resp in question.labels else None
    return store.record_answer(session.session_id, question.task, question.index, last["response"],
                               review_source=review, time_spent_ms=last["time_spent_ms"],
                               detail={**detail, "check_id": spec.id, "skipped": True}, check="tutorial",
                               check_passed=False,
                               **question_columns(question))


def pending_feedback(store: Store, session: Session, question: Question) -> CheckFeedback | None:
    """The feedback a check question shows now (its last try was wrong and it is not over), else None."""
    if question.check is None:
        return None
    tries = store.check_tries(session.session_id, question.task, question.index)
    if not tries or tries[-1]["correct"]:
        return None
    spec = question.check
    if spec.type == "attention" and not spec.retry:
        return None
    return _feedback(spec, question, json.loads(tries[-1]["detail"] or "{}"))
