"""Kind ``spans``: error-span annotation of systems' outputs (ESA, MQM, ESA-AI), on single segments or documents.

The evaluator marks the erroneous parts of each output shown, gives each a severity (and, with ``protocol =
"mqm"``, a category of the task's taxonomy), then scores the output on the task's scales (ESA: one 0-100
slider). With ``prefill`` an item's ``error_spans`` are shown as suggestions to keep, change or delete (ESA-AI).

The page sends one answer per question (the widget keeps every span in the browser until "Next"); nothing it
sends is trusted: :func:`parse_answer` checks every span against the output it belongs to (UTF-16 offsets
converted to code points, bounds, overlaps, severity, category, a suggestion's origin against the item's
suggestions), every score and the action log, and :func:`record_spans` stores the answer and its ``spans`` rows
in one transaction (:meth:`evalkit.store.Store.record_answer`). Tutorials and attention checks expect spans as
Pearmut's ``validation`` writes them (see :mod:`evalkit.checks`).

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``), the core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..items import Segment
from ..spans import FREE, Span, SpanError, Utf16Offsets, check_spans, marked_text
from .base import Common, ConfigError, SurveyError, Table
from .itemsource import (
    ItemsSource,
    OutputsKind,
    card_labels,
    items_source,
    outline,
)
from .media_log import with_media
from .responses import save_answer
from .score import Scale, parse_scales

if TYPE_CHECKING:
    from ..items import Item, ItemSet
    from ..question import Question
    from ..store import Answer, Session, Store

__all__ = ["ACTIONS", "DEFAULT_WEIGHTS", "KIND", "MQM_CORE", "ORIGINS", "SpansAnswer", "SpansTask", "parse_answer",
           "record_spans", "segments_of", "suggestions"]

#: The MQM typology of Freitag et al. (2021, "Experts, Errors, and Context", table 10), which WMT's MQM
#: campaigns use: ``categories = "mqm-core"``. A top-level category alone ([]) has no subcategories.
MQM_CORE: Mapping[str, tuple[str, ...]] = {
    "Accuracy": ("Addition", "Omission", "Mistranslation", "Untranslated text"),
    "Fluency": ("Punctuation", "Spelling", "Grammar", "Register", "Inconsistency", "Character encoding"),
    "Terminology": ("Inappropriate for context", "Inconsistent use"),
    "Style": ("Awkward",),
    "Locale convention": ("Address format", "Currency format", "Date format", "Name format", "Telephone format",
                          "Time format"),
    "Source error": (),
    "Non-translation": (),
    "Other": (),
}
#: MQM weights (Freitag et al. 2021, table 11: a minor punctuation error 0.1, a major non-translation 25): per
#: severity, and ``"severity:Category"`` for one category (its subcategories too); ``mqm_weights`` in the config
#: overrides any of them
DEFAULT_WEIGHTS: Mapping[str, float] = {"neutral": 0.0, "minor": 1.0, "major": 5.0, "critical": 25.0,
                                        "minor:Fluency/Punctuation": 0.1, "major:Non-translation": 25.0}
#: How a stored span came to be: made by the evaluator, or a suggestion kept as it was (confirmed), changed, deleted,
#: or left as suggested without a decision (unreviewed: it counts as an error, as a kept one does)
ORIGINS = ("added", "suggested-kept", "suggested-changed", "suggested-deleted", "suggested-unreviewed")
#: What the widget logs (``detail["actions"]``)
ACTIONS = ("create", "change", "delete", "keep", "score")
#: the most actions one answer's log keeps (a longer log is cut, the newest kept: it is a record, not the answer)
MAX_ACTIONS = 2000
#: the most spans one output segment may have (the page is refused beyond it)
MAX_SPANS = 1000
#: the keys 1..9 set the severities, so a task has at most nine
MAX_SEVERITIES = 9
_ESA_SCALE = [{"id": "quality", "label": "Quality", "type": "slider", "min": 0, "max": 100}]


@dataclass(frozen=True)
class SpansTask:
    """Error spans on ``outputs_per_question`` outputs of one item per question, then the scales."""

    id: str
    title: str
    instructions: str
    question: str
    source: ItemsSource
    protocol: Literal["esa", "mqm"]
    severities: tuple[str, ...]
    categories: str | Mapping[str, tuple[str, ...]] | None  # None (ESA), FREE, or {top: (subcategories)}
    scales: tuple[Scale, ...]
    missing_token: bool = False
    word_level: bool = False
    prefill: bool = False
    outputs_per_question: int = 1
    min_score_without_spans: int | None = None
    score_per: Literal["document", "segment"] = "document"
    mqm_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    input_label: str = "Source"
    output_label: str = "Translation"
    #: an ESA task given ``categories`` (the issue's own example does): read, checked, not used; said by check
    categories_ignored: bool = False
    kind: Literal["spans"] = "spans"


def _categories(t: Table, protocol: str) -> str | dict[str, tuple[str, ...]] | None:
    raw = t.get("categories", "mqm-core" if protocol == "mqm" else None)
    if raw is None:
        return None
    if raw == "mqm-core":
        return dict(MQM_CORE)
    if raw == FREE:
        return FREE
    if not isinstance(raw, dict) or not raw:
        t.fail("categories", f'must be "mqm-core", "free" or a table {{Accuracy = ["Omission"], Fluency = []}}, '
                             f"got {raw!r}"[:300])
    out: dict[str, tuple[str, ...]] = {}
    for top, subs in raw.items():
        # a subcategory may hold '/' (Pearmut's "Truncation/text expansion"): a span's category is split at its first
        if not top.strip() or "/" in top or not isinstance(subs, list) or not all(
                isinstance(s, str) and s.strip() for s in subs):
            t.fail("categories", f"category {top!r}: a name without '/' and a list of subcategory names, e.g. "
                                 "Accuracy = [\"Omission\"]")
        out[top] = tuple(subs)
    return out


def _weights(t: Table, severities: Sequence[str]) -> dict[str, float]:
    raw = t.get("mqm_weights", {})
    if not isinstance(raw, dict):
        t.fail("mqm_weights", f"must be a table of severity (or \"severity:Category\") = weight, got {raw!r}")
    out = dict(DEFAULT_WEIGHTS)
    for key, value in raw.items():
        severity = key.partition(":")[0]
        if severity not in severities:
            t.fail("mqm_weights", f"{key!r}: {severity!r} is not one of the task's severities "
                                  f"({', '.join(severities)})")
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            t.fail("mqm_weights", f"{key!r}: a weight is a number >= 0, got {value!r}")
        out[key] = float(value)
    unweighted = [severity for severity in severities if severity not in out]
    if unweighted and t.get("protocol", "esa") == "mqm":  # (ESA: such spans count 0 in the MQM score, said there)
        t.fail("mqm_weights", f"severity {unweighted[0]!r} has no MQM weight: give it one, e.g. mqm_weights = "
                              f"{{ {unweighted[0]} = 1 }} (the defaults weigh {', '.join(DEFAULT_WEIGHTS)})")
    return out


class SpansKind(OutputsKind):
    """Error-span annotation (ESA, MQM, ESA-AI) of systems' outputs; systems balanced within an evaluator's
    questions."""

    name = "spans"
    analysis = "spans_analysis"
    analysis_columns = ("sources", "item_ids", "score_detail")
    choice_in_review_source = False
    response_varies = False
    summary_line = ("error spans (ESA, MQM with a taxonomy, ESA-AI suggestions) marked on systems' outputs, with "
                    "a severity (and category), then scores; single segments or documents")

    def parse(self, t: Table, common: Common) -> SpansTask:
        source = items_source(t, common, fixed=True)
        per_question = self.outputs_per_question(t, source)
        protocol = t.choice("protocol", ("esa", "mqm"), "esa")
        severities = t.strs("severities", ["minor", "major"])
        if len(set(severities)) != len(severities) or len(severities) > MAX_SEVERITIES:
            t.fail("severities", f"must be 1 to {MAX_SEVERITIES} distinct names (keys 1-9 set them), "
                                 f"got {list(severities)}")
        categories = _categories(t, protocol)
        ignored = protocol != "mqm" and categories is not None
        categories = None if ignored else categories  # (ESA spans have a severity only)
        scales = parse_scales(t, common, _ESA_SCALE if protocol == "esa" else None) \
            if protocol == "esa" or t.get("scales", None) is not None else ()
        minimum = t.get("min_score_without_spans", None)
        if minimum is not None:
            if not scales:
                t.fail("min_score_without_spans", "needs a scale to compare with (this task has none)")
            minimum = t.int("min_score_without_spans")
        input_label, output_label = card_labels(t, "Translation")
        if "input_label" not in t.data:
            input_label = "Source"
        score_per = t.choice("score_per", ("document", "segment"), "document")
        return SpansTask(
            id=common.id, title=common.title, instructions=common.instructions, source=source, protocol=protocol,
            severities=severities, categories=categories, scales=scales,
            missing_token=bool(t.get("missing_token", False)), word_level=bool(t.get("word_level", False)),
            prefill=bool(t.get("prefill", False)), outputs_per_question=per_question,
            min_score_without_spans=minimum, score_per=score_per, mqm_weights=_weights(t, severities),
            input_label=input_label, output_label=output_label, categories_ignored=ignored,
            question=t.str("question", "Mark the errors, then score the translation." if per_question == 1 else
                           "Mark the errors of each translation, then score each one."))

    def describe(self, task: SpansTask) -> dict[str, Any]:
        categories = task.categories if not isinstance(task.categories, Mapping) else {
            top: list(subs) for top, subs in task.categories.items()}
        return {"systems": list(task.source.systems), "questions": task.source.questions,
                "assignment": "fixed" if task.source.fixed is not None else "balanced",
                "outputs_per_question": task.outputs_per_question, "protocol": task.protocol,
                "severities": list(task.severities), "categories": categories, "prefill": task.prefill,
                "score_per": task.score_per, "mqm_weights": dict(task.mqm_weights),
                "missing_token": task.missing_token,
                "scales": [{"id": s.id, "label": s.label, "type": s.type, "min": s.low, "max": s.high}
                           for s in task.scales]}

    def warnings(self, task: SpansTask, file: Path, items: Mapping[Path, ItemSet]) -> list[str]:
        said = super().warnings(task, file, items)
        if task.categories_ignored:
            said.append(f"{file.name}: [[tasks]] id {task.id!r}: key 'categories' applies to protocol = \"mqm\" "
                        "only: this ESA task's spans have a severity and no category (the key is ignored)")
        return said

    def outline(self, task: SpansTask, items: Mapping[Path, ItemSet]) -> str:
        n = task.outputs_per_question
        what = "one output" if n == 1 else f"{n} outputs side by side" if n else "every output of its item"
        scales = f", scales {', '.join(s.id for s in task.scales)}" if task.scales else ""
        return outline(task.source, items[task.source.items],
                       f"{task.protocol.upper()} spans on {what}{', suggestions shown' if task.prefill else ''}"
                       f"{scales}")

    def check(self, task: SpansTask, file: Path, items: Mapping[Path, ItemSet]) -> None:
        super().check(task, file, items)
        its = items[task.source.items]
        if task.score_per == "segment" and not any(item.segments for item in its):
            raise ConfigError(f"{file.name}: [[tasks]] id {task.id!r}: key 'score_per': \"segment\" needs documents "
                              f"(items with 'segments'); {its.path.name} has none")
        if task.prefill:  # the suggestions must be spans this task could have made
            for item in its:
                for k, segment in enumerate(segments_of(item)):
                    for system, spans in segment.error_spans.items():
                        try:
                            check_spans(segment.outputs[system], spans, severities=task.severities,
                                        categories=task.categories, missing_token=task.missing_token)
                        except SpanError as exc:
                            where = f"item {item.id!r} (line {item.line})" + (f", segment {k + 1}" if item.segments
                                                                              else "")
                            raise ConfigError(f"{file.name}: [[tasks]] id {task.id!r}: {its.path.name}: {where}: "
                                              f"a suggested span of {system!r} does not fit this task: {exc}") from None


def segments_of(item: Item) -> tuple[Segment, ...]:
    """An item's segments: a document's, or the item as its one segment."""
    return item.segments or (Segment(item.input, item.outputs, item.reference, item.error_spans),)


def suggestions(task: SpansTask, segment: Segment, system: str) -> tuple[Span, ...]:
    """The spans suggested on ``system``'s output of ``segment`` (none unless the task has ``prefill``)."""
    return tuple(segment.error_spans.get(system, ())) if task.prefill else ()


@dataclass(frozen=True)
class SpansAnswer:
    """A checked answer: the span rows to store, the scores, the action log (code points), the confirmation."""

    rows: list[dict[str, Any]]
    scores: dict[str, list[float]]
    segment_scores: dict[str, list[list[int]]] | None
    actions: list[dict[str, Any]]
    confirmed_no_spans: bool

    def kept(self, output: int, segment: int = 0) -> list[Span]:
        """The spans an output segment ended with (deleted suggestions left out)."""
        return [Span(r["start_char"], r["end_char"], r["severity"], r["category"]) for r in self.rows
                if r["output"] == output and r["segment"] == segment and r["origin"] != "suggested-deleted"]


def _refuse(message: str) -> SurveyError:
    return SurveyError(f"{message} Nothing has been saved; please reload the page if this persists.")


def _list(value: Any, n: int | None, what: str) -> list[Any]:
    if not isinstance(value, list) or (n is not None and len(value) != n):
        raise _refuse(f"This answer's {what} do not match the question.")
    return value


def _score(scale: Scale, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not scale.low <= value <= scale.high:
        raise SurveyError(f"'{scale.label}' takes whole numbers from {scale.low} to {scale.high}.")
    return value


def _scores(task: SpansTask, value: Any, n: int, n_segments: int, per_segment: bool
            ) -> tuple[dict[str, list[float]], dict[str, list[list[int]]] | None]:
    raw = value if isinstance(value, Mapping) else {}
    if set(raw) != {s.id for s in task.scales}:
        missing = [s.label for s in task.scales if s.id not in raw]
        raise SurveyError(f"Please give every score ({', '.join(missing) or 'unknown scales were sent'}) before "
                          "continuing.")
    scores: dict[str, list[float]] = {}
    segment_scores: dict[str, list[list[int]]] = {}
    for scale in task.scales:
        values = _list(raw[scale.id], n, "scores")
        if per_segment:
            rows = [[_score(scale, v) for v in _list(row, n_segments, "segment scores")] for row in values]
            segment_scores[scale.id] = rows
            scores[scale.id] = [sum(row) / len(row) for row in rows]  # a document's score: its segments' mean
        else:
            scores[scale.id] = [_score(scale, v) for v in values]
    return scores, (segment_scores if per_segment else None)


def _span_of(task: SpansTask, offsets: Utf16Offsets, raw: Any) -> tuple[Span, str, Any]:
    """(span in code points, origin, suggestion index) of one span as the page sent it (UTF-16 offsets)."""
    if not isinstance(raw, Mapping):
        raise SpanError(f"not a span: {raw!r}"[:200])
    start = offsets.code_point(raw.get("start"), missing_token=task.missing_token)
    end = offsets.code_point(raw.get("end"), missing_token=task.missing_token)
    severity, category = raw.get("severity"), raw.get("category")
    if not isinstance(severity, str) or (category is not None and not isinstance(category, str)):
        raise SpanError("a span's severity and category must be text")
    origin = raw.get("origin", "added")
    if origin not in ORIGINS:
        raise SpanError(f"unknown origin {origin!r}"[:100])
    return Span(start, end, severity, category or None), origin, raw.get("suggestion")


def _segment_rows(task: SpansTask, item: Item, system: str, k: int, s: int, segment: Segment,
                  sent: Any) -> list[dict[str, Any]]:
    """The rows of one output segment's spans, every one checked (SpanError on the first problem)."""
    text = segment.outputs[system]
    offered = suggestions(task, segment, system)
    kept: list[Span] = []
    rows: list[dict[str, Any]] = []
    used: set[int] = set()
    sent = _list(sent, None, "spans")
    if sent and system in item.output_media:  # (an image, audio clip or video: shown and scored, never marked)
        raise SpanError("it is an image, audio clip or video, which cannot be marked")
    if len(sent) > MAX_SPANS + len(offered):  # (refused before any is read: each costs a little)
        raise SpanError(f"more than {MAX_SPANS} spans on one output")
    offsets = Utf16Offsets(text)
    for raw in sent:
        span, origin, index = _span_of(task, offsets, raw)
        if origin != "added":
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(offered) or index in used:
                raise SpanError(f"{span.describe()} says it is suggestion {repr(index)[:20]}, which this output "
                                "does not have")
            used.add(index)
            if origin == "suggested-deleted":
                span = offered[index]  # stored as it was suggested
            elif span != offered[index]:  # changed: decided here, not by the page (kept is what was suggested)
                origin = "suggested-changed"
            elif origin == "suggested-changed":
                origin = "suggested-kept"  # (said changed, sent unchanged: kept, as the evaluator saw it)
        if origin != "suggested-deleted":
            kept.append(span)
        rows.append({"item_id": item.id, "segment": s, "system": system, "output": k, "start_char": span.start,
                     "end_char": span.end, "severity": span.severity, "category": span.category,
                     "text": marked_text(text, span), "origin": origin})
    for index in set(range(len(offered))) - used:  # a suggestion the page did not mention: not reviewed
        span = offered[index]
        kept.append(span)
        rows.append({"item_id": item.id, "segment": s, "system": system, "output": k, "start_char": span.start,
                     "end_char": span.end, "severity": span.severity, "category": span.category,
                     "text": marked_text(text, span), "origin": "suggested-unreviewed"})
    check_spans(text, kept, severities=task.severities, categories=task.categories, missing_token=task.missing_token)
    deleted = [r for r in rows if r["origin"] == "suggested-deleted"]
    rows = sorted((r for r in rows if r["origin"] != "suggested-deleted"), key=lambda r: (r["start_char"],
                                                                                          r["end_char"])) + deleted
    for n, row in enumerate(rows):
        row["n"] = n
    return rows


def _actions(task: SpansTask, item: Item, systems: Sequence[str], value: Any) -> list[dict[str, Any]]:
    """The action log, each entry checked and its offsets in code points; entries that do not fit are dropped
    (the log times the work; it is not the answer)."""
    out: list[dict[str, Any]] = []
    segments = segments_of(item)
    scales = {scale.id: scale for scale in task.scales}
    offsets: dict[tuple[int, int], Utf16Offsets] = {}
    for raw in (value if isinstance(value, list) else [])[-MAX_ACTIONS:]:
        if not isinstance(raw, Mapping) or raw.get("action") not in ACTIONS:
            continue
        t, k, s = raw.get("t"), raw.get("output", 0), raw.get("segment", 0)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (t, k, s)) or t < 0 \
                or not 0 <= k < len(systems) or not 0 <= s < len(segments):
            continue
        entry: dict[str, Any] = {"t": t, "action": raw["action"], "output": k, "segment": s}
        if raw["action"] == "score":  # the scale and the value it was moved to (not the answer: that is "scores")
            scale, moved = raw.get("scale"), raw.get("value")
            if isinstance(scale, str) and scale in scales and isinstance(moved, int | float) \
                    and not isinstance(moved, bool) and scales[scale].low <= moved <= scales[scale].high:
                entry.update(scale=scale, value=moved)  # (NaN fails the comparison; a huge int is refused by it)
        elif systems[k] in item.output_media:  # (a media output has no characters to mark)
            continue
        else:
            if (k, s) not in offsets:
                offsets[(k, s)] = Utf16Offsets(segments[s].outputs[systems[k]])
            try:
                entry["start"] = offsets[(k, s)].code_point(raw.get("start"), missing_token=True)
                entry["end"] = offsets[(k, s)].code_point(raw.get("end"), missing_token=True)
            except SpanError:
                continue
            for key in ("severity", "category"):
                if isinstance(raw.get(key), str):
                    entry[key] = raw[key][:100]
        out.append(entry)
    return out


def parse_answer(task: SpansTask, question: Question, item: Item, value: Any) -> SpansAnswer:
    """Check everything the page sent for ``question`` (shape, spans per output and segment, scores, the action
    log) against the item as stored; SurveyError naming the first problem."""
    if not isinstance(value, Mapping):
        raise _refuse("This answer could not be read.")
    systems = question.sources
    segments = segments_of(item)
    sent = _list(value.get("spans"), len(systems), "spans")
    rows: list[dict[str, Any]] = []
    for k, system in enumerate(systems):
        per_segment = _list(sent[k], len(segments), "segments")
        for s, segment in enumerate(segments):
            try:
                rows.extend(_segment_rows(task, item, system, k, s, segment, per_segment[s]))
            except SpanError as exc:
                where = f"{task.output_label} {question.labels[k]}" if len(systems) > 1 else f"the {task.output_label}"
                where += f", segment {s + 1}" if len(segments) > 1 else ""
                raise SurveyError(f"A marked error on {where.replace('the the', 'the')} cannot be saved: {exc}.") \
                    from None
    # (a single-segment item of a score_per = "segment" task, e.g. a practice question, is scored once)
    scores, segment_scores = _scores(task, value.get("scores"), len(systems), len(segments),
                                     task.score_per == "segment" and bool(item.segments))
    confirmed = value.get("confirmedNoSpans") is True
    answer = SpansAnswer(rows, scores, segment_scores, _actions(task, item, systems, value.get("actions")), confirmed)
    if task.min_score_without_spans is not None and not confirmed:
        first = task.scales[0].id
        for k in range(len(systems)):
            if not any(r["output"] == k and r["origin"] != "suggested-deleted" for r in rows) \
                    and scores[first][k] < task.min_score_without_spans and systems[k] not in item.output_media:
                raise SurveyError(f"No errors are marked, yet the score is below {task.min_score_without_spans}: "
                                  "are you sure? Mark the errors, or press Next again to confirm.")
    return answer


def record_spans(store: Store, session: Session, task: SpansTask, question: Question, item: Item, value: Any,
                 time_spent_ms: int | None, *, media: Any = None) -> Answer:
    """Check the page's answer (:func:`parse_answer`) and store it with its spans, exactly once, in one
    transaction. ``detail``: ``scores`` (per scale, one value per output shown), ``segment_scores`` with
    ``score_per = "segment"``, ``actions`` (the widget's log, code points) and ``confirmed_no_spans``; a check
    question's also ``spans`` (``{system: [[start, end, severity, category], ...]}`` of its first segment, what
    the check is decided on); ``media``: the play log of the question's clips (:mod:`evalkit.tasks.media_log`; a
    media output is shown and scored, never marked)."""
    answer = parse_answer(task, question, item, value)
    detail: dict[str, Any] = {"scores": answer.scores, "actions": answer.actions,
                              "confirmed_no_spans": answer.confirmed_no_spans}
    if answer.segment_scores is not None:
        detail["segment_scores"] = answer.segment_scores
    if question.check is not None:
        detail["spans"] = {system: [[s.start, s.end, s.severity, s.category] for s in answer.kept(k)]
                           for k, system in enumerate(question.sources)}
    rows = [{key: v for key, v in row.items() if key != "output"} for row in answer.rows]
    detail = with_media(question, detail, media, full_play=task.source.require_full_play, noun=task.output_label,
                        input_label=task.input_label) or detail
    return save_answer(store, session, question, "annotated",
                       review_source=question.sources[0] if len(question.sources) == 1 else None,
                       time_spent_ms=time_spent_ms, detail=detail, spans=rows)


KIND = SpansKind()
