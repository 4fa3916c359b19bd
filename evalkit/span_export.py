"""The error-span exports (kind ``spans``): one CSV row per stored span, and the answers as Pearmut's annotation log.

:func:`spans_csv` writes the ``spans`` table with the session's columns, text cells made safe for spreadsheets as in
the other exports. :func:`pearmut_jsonl` writes one JSON line per answer in the shape of Pearmut's annotation logs
(``annotation``, ``actions``, ``item``, ``user_id``, ``item_i``), so WMT-style tooling written for Pearmut reads
evalkit's annotations; with the items given, its offsets are Pearmut's character indexes (UTF-16 units, line
breaks left out: Pearmut draws them as ``<br>``).

Both hold every session, whatever its status, as the evaluations CSV does (``sessionStatus`` in the CSV,
``evalkit.session_status`` in the JSONL): drop the trashed or excluded ones where you read them.

Floor: app services (``survey | invite | charts | export | span_export`` in ``.importlinter``); what it may import:
the task kinds, the items, the store and the core (pandas for the CSV).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from .datasets import DatasetError
from .items import Item, ItemSet
from .spans import Span, SpanError, marked_text, to_pearmut, to_pearmut_index
from .store import Answer, Store
from .tasks.spans import segments_of
from .text import csv_safe

__all__ = ["PEARMUT_ACTIONS", "SPANS_CSV_COLUMNS", "pearmut_jsonl", "spans_csv"]

#: Columns of the spans CSV, in order
SPANS_CSV_COLUMNS = ("evaluatorName", "sessionId", "externalId", "sessionStatus", "task", "questionIndex", "itemId",
                     "segment", "system", "n", "start", "end", "severity", "category", "text", "origin", "createdAt",
                     "check")
#: evalkit's logged actions (``detail["actions"]``) by the names the Pearmut JSONL gives them: Pearmut's own where it
#: has one (``create_span``, ``delete_span``, ``score``), Pearmut-style names for the two it does not log
PEARMUT_ACTIONS: Mapping[str, str] = {"create": "create_span", "delete": "delete_span", "score": "score",
                                      "change": "change_span", "keep": "keep_span"}

Items = ItemSet | Mapping[str, ItemSet] | Mapping[str, Item]


def spans_csv(store: Store) -> str:
    """Every stored span as CSV (:data:`SPANS_CSV_COLUMNS`), one row per span in the order answered: the spans each
    answer ended with and each suggestion the evaluator deleted (``origin`` ``suggested-deleted``, with the
    offsets it was suggested at).

    ``start`` and ``end`` are code points of the output as stored (Python's string indices), ``end`` exclusive; the
    [missing] token after an output is ``start`` = its length, ``end`` = its length + 1, ``text`` ``[missing]``.
    ``segment`` counts a document's segments from 0 (0 for a single segment), ``n`` the spans of one output
    segment. ``check`` is ``tutorial`` or ``attention`` for the spans of a check question. Every session is
    included, whatever its status, as in the evaluations CSV. Text cells are made safe for spreadsheets as in the
    other exports (:func:`evalkit.text.csv_safe`): a marked text starting with ``=``, ``+``, ``-`` or ``@`` gets
    a leading ``'``.
    """
    import pandas as pd

    rows = store.spans()
    sessions = {s.session_id: s for s in store.sessions()}
    checks = {(a.session_id, a.task, a.question_index): a.check
              for task in dict.fromkeys(r["task"] for r in rows) for a in store.answers(task=task)}
    out = []
    for r in rows:
        session = sessions.get(r["session_id"])
        out.append({
            "evaluatorName": session.evaluator_name if session else "", "sessionId": r["session_id"],
            "externalId": session.external_id if session else "", "sessionStatus": session.status if session else "",
            "task": r["task"], "questionIndex": r["question_index"], "itemId": r["item_id"], "segment": r["segment"],
            "system": r["system"], "n": r["n"], "start": r["start_char"], "end": r["end_char"],
            "severity": r["severity"], "category": r["category"], "text": r["text"], "origin": r["origin"],
            "createdAt": r["created_at"], "check": checks.get((r["session_id"], r["task"], r["question_index"]))})
    return csv_safe(pd.DataFrame(out, columns=list(SPANS_CSV_COLUMNS))).to_csv(index=False)


def _finder(items: Items | None) -> Callable[[str, str], Item | None]:
    """(task, item id) -> the item, from one ItemSet, ItemSets by task id, or Items by item id; None without items.
    DatasetError when items are given but this one is not among them."""
    if items is None:
        return lambda task, item_id: None

    def find(task: str, item_id: str) -> Item:
        source = items if isinstance(items, ItemSet) else items.get(task)
        found = (source.items[source.index[item_id]] if item_id in source.index else None) \
            if isinstance(source, ItemSet) else items.get(item_id)
        if not isinstance(found, Item):
            raise DatasetError(f"task {task!r}: item {item_id!r} is not among the items given (was the task or "
                               "its items file changed? Export without the items to write code points)")
        return found
    return find


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def _pearmut_span(span: Span, text: str | None) -> dict[str, Any]:
    """``span`` in Pearmut's shape: Pearmut's character indexes of ``text`` (:func:`evalkit.spans.to_pearmut_index`;
    code points without it), ``end_i`` inclusive."""
    if text is not None:
        span = Span(to_pearmut_index(text, span.start), to_pearmut_index(text, span.end), span.severity,
                    span.category)
    out = to_pearmut(span)
    return {"start_i": out["start_i"], "end_i": out["end_i"], "category": out["category"],
            "severity": out["severity"]}  # (Pearmut's key order)


def _score(detail: Mapping[str, Any], scale: str, k: int, s: int) -> Any:
    """Output ``k``'s score on ``scale`` for segment ``s``: its own with ``segment_scores``, else the document's."""
    try:
        per_segment = detail.get("segment_scores") or {}
        return per_segment[scale][k][s] if scale in per_segment else detail["scores"][scale][k]
    except (KeyError, IndexError, TypeError):
        return None


def _segment_id(item_id: str, s: int) -> str:
    return item_id if s == 0 else f"{item_id}#{s}"


def _scale_orders(store: Store) -> dict[str, list[str]]:
    """The scales of each task in the config's order, as the newest registered study describes them (an answer's
    ``detail`` holds them by name, sorted)."""
    orders: dict[str, list[str]] = {}
    for summary in store.studies().values():  # oldest first: the newest description wins
        for task in summary.get("tasks", []):
            if task.get("scales") is not None:
                orders[task["id"]] = [scale["id"] for scale in task["scales"]]
    return orders


def _entry(answer: Answer, rows: list[dict[str, Any]], session: Any, item: Item | None,
           order: list[str] | None) -> dict[str, Any]:
    """One answer as a line of Pearmut's annotation log (see :func:`pearmut_jsonl`); ``order``: the task's scales."""
    detail, systems = answer.detail, answer.sources
    item_id = answer.item_ids[0] if answer.item_ids else ""
    segments = segments_of(item) if item is not None else None
    if segments is not None:
        n_segments = len(segments)
    else:  # without the items: as many segments as the answer shows (a document's trailing unmarked ones may lack)
        seen = [r["segment"] + 1 for r in rows] + [a.get("segment", 0) + 1 for a in detail.get("actions", [])]
        seen += [len(per_output) for by_output in (detail.get("segment_scores") or {}).values()
                 for per_output in by_output]
        n_segments = max([1, *seen])

    def text_of(system: str, s: int) -> str | None:
        if segments is None:
            return None
        if s >= len(segments) or system not in segments[s].outputs:
            raise DatasetError(f"task {answer.task!r}: item {item_id!r} has no output of {system!r} in segment "
                               f"{s + 1}: were the items changed since the answers were stored?")
        return segments[s].outputs[system]

    def convert(span: Span, system: str, s: int, stored: str | None = None) -> dict[str, Any]:
        text = text_of(system, s)
        try:
            if text is not None and stored is not None and marked_text(text, span) != stored:
                raise SpanError("the marked text differs")
            return _pearmut_span(span, text)
        except SpanError:
            raise DatasetError(f"task {answer.task!r}: item {item_id!r}, {system!r}, segment {s + 1}: a stored span "
                               "does not fit the item's text: were the items changed since the answers were "
                               "stored? Export without the items to write code points") from None

    given = list(detail.get("scores") or {})
    scales = [scale for scale in order or () if scale in given] + [scale for scale in given
                                                                   if scale not in (order or ())]
    annotation = []
    for s in range(n_segments):
        entry = {}
        for k, system in enumerate(systems):
            kept = [r for r in rows if r["system"] == system and r["segment"] == s
                    and r["origin"] != "suggested-deleted"]
            texts = detail.get("texts") or []
            value: dict[str, Any] = {
                "score": _score(detail, scales[0], k, s) if scales else None,
                "error_spans": [convert(Span(r["start_char"], r["end_char"], r["severity"], r["category"]), system, s,
                                        r["text"]) for r in kept],
                "textfield": texts[k] if k < len(texts) and isinstance(texts[k], str) else None}
            if len(scales) > 1:
                value["sliders"] = {scale: _score(detail, scale, k, s) for scale in scales[1:]}
            entry[system] = value
        annotation.append(entry)

    logged = [a for a in detail.get("actions", []) if a.get("action") in PEARMUT_ACTIONS]
    submitted = _epoch(answer.created_at)
    spent = answer.time_spent_ms if answer.time_spent_ms is not None else max([0, *(a["t"] for a in logged)])
    shown = submitted - spent / 1000
    actions: list[dict[str, Any]] = [{"time": round(shown, 3), "action": "load"}]
    for a in logged:
        k, s = a.get("output", 0), a.get("segment", 0)
        system = systems[k] if 0 <= k < len(systems) else None
        out: dict[str, Any] = {"time": round(min(shown + a["t"] / 1000, submitted), 3),
                               "action": PEARMUT_ACTIONS[a["action"]], "index": s, "model": system}
        if a["action"] == "score":
            out["value"] = a.get("value")
            if "scale" in a:
                out["scale"] = a["scale"]
        elif system is not None and "start" in a and "end" in a:
            span = convert(Span(a["start"], a["end"], a.get("severity", ""), a.get("category")), system, s)
            out.update(start_i=span["start_i"], end_i=span["end_i"])
            out.update({key: a[key] for key in ("severity", "category") if key in a})
        actions.append(out)
    actions.append({"time": round(submitted, 3), "action": "submit"})

    pearmut_items: list[dict[str, Any]] = []
    original = (item.meta.get("pearmut") or {}).get("item_id") if item is not None else None  # (an imported campaign's)
    for s in range(n_segments):
        one: dict[str, Any] = {"item_id": original[s] if isinstance(original, list) and s < len(original)
                               and original[s] is not None else _segment_id(item_id, s)}
        if segments is not None:
            segment = segments[s]
            one.update(src=segment.input, tgt={system: text_of(system, s) for system in systems})
            if segment.reference is not None:
                one["ref"] = segment.reference
            suggested = {system: [_pearmut_span(span, segment.outputs[system])
                                  for span in segment.error_spans.get(system, ())] for system in systems}
            if any(suggested.values()):
                one["error_spans"] = suggested
        pearmut_items.append(one)

    user = (session.external_id or session.evaluator_name) if session is not None else ""
    return {"annotation": annotation, "actions": actions, "item": pearmut_items,
            "user_id": user or answer.session_id,
            "item_i": f"welcome_{answer.question_index}" if answer.check == "tutorial" else
            (answer.slot if answer.slot is not None else answer.question_index),
            "evalkit": {"session_id": answer.session_id, "session_status": session.status if session else None,
                        "task": answer.task, "question_index": answer.question_index, "item_id": item_id,
                        "item_ids": [item_id] * n_segments,
                        "check": answer.check, "offsets": "code points" if segments is None else "pearmut"}}


def pearmut_jsonl(store: Store, items: Items | None = None) -> str:
    """Every answer of a ``spans`` or ``score`` task as a line of Pearmut's annotation log (JSON Lines), in the
    order answered; the parts of a Pearmut document that an imported campaign asks part by part (DA, see
    :mod:`evalkit.pearmut_import`) as one line again, with ``evalkit.item_ids`` / ``question_indexes`` per part.

    Each line: ``annotation``, one entry per segment of the item (one for a single segment), each
    ``{system: {"score", "error_spans", "textfield": null}}`` for the systems shown in display order;
    ``score`` is the first scale's (the segment's own with ``score_per = "segment"``, else the document's
    score on every segment; null without scales), the other scales' under ``sliders`` beside it (Pearmut's name
    for its custom sliders; the scales in
    the config's order, as the database's registered study describes the task; by name without one);
    ``error_spans`` the spans the evaluator ended with (``start_i``, ``end_i`` inclusive, ``category``,
    ``severity``; deleted suggestions are left out: they are in the spans CSV). ``actions``: ``load`` when the
    question was shown (the answer's time minus its ``time_spent_ms``), then the logged actions at that time plus
    their ``t`` (at most the submit's), then ``submit`` when it was stored; ``time`` in seconds since the epoch;
    ``textfield`` the score kind's comment or post-edit. ``create`` → ``create_span``, ``delete`` →
    ``delete_span``, ``score`` → ``score`` (its ``value`` null when the log does not hold it), and the two
    Pearmut does not log, ``change`` → ``change_span``, ``keep`` → ``keep_span``; ``index`` the segment,
    ``model`` the system. ``item``: one Pearmut item per segment, ``item_id`` the item's id (a document's later
    segments ``<id>#1``, ``<id>#2``...; an imported campaign's item its original ``item_id``) and, with the items,
    ``src``, ``tgt`` (the systems shown), ``ref`` and the suggested ``error_spans``. ``user_id``: the session's
    external id (Prolific id, invited participant), else the evaluator's name, else the session id. ``item_i``:
    the question's slot, i.e. the item's position in its items file (``welcome_<question>`` for a tutorial
    question, as Pearmut names its tutorial items, which its results leave out). ``evalkit`` adds the session id
    and status, task, question index, item id, check and the offsets' unit. Every session is included, as in the
    spans CSV.

    ``items``: an :class:`~evalkit.items.ItemSet` for every task, ItemSets by task id (as
    :func:`evalkit.analysis.items_of` gives them) or Items by item id. With them, offsets are Pearmut's character
    indexes of the output (UTF-16 units, line breaks left out; :func:`evalkit.spans.from_pearmut` with the text
    reads them back); without, they are code points (``"offsets": "code points"``), and a document's trailing
    segments with no span and no score of their own may be left out. An answer whose item is not among the items
    given, or no longer fits its stored spans (the items file changed), is written in code points with the reason
    under ``evalkit.note``; the other lines are not affected.
    """
    find, orders = _finder(items), _scale_orders(store)
    sessions = {s.session_id: s for s in store.sessions()}
    spans: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in store.spans():
        spans[(row["session_id"], row["task"], row["question_index"])].append(row)
    lines: list[dict[str, Any]] = []
    parts: dict[tuple[str, str, str], dict[str, Any]] = {}  # (session, task, document) -> its line so far
    for answer in store.answers():
        if answer.kind not in ("spans", "score"):
            continue
        rows = sorted(spans.get((answer.session_id, answer.task, answer.question_index), []),
                      key=lambda r: (r["segment"], r["n"]))
        session, order = sessions.get(answer.session_id), orders.get(answer.task)
        try:
            item = find(answer.task, answer.item_ids[0]) if answer.item_ids else None
            entry = _entry(answer, rows, session, item, order)
        except DatasetError as exc:  # this answer's item is gone or changed: its line in code points, said why
            item = None
            entry = _entry(answer, rows, session, None, order)
            entry["evalkit"]["note"] = str(exc)
        part = (item.meta.get("pearmut") or {}) if item is not None else {}
        if "document" in part:  # one part of an imported Pearmut document asked part by part: one line again
            key = (answer.session_id, answer.task, str(part["document"]))
            if key in parts:
                _join(parts[key], entry)
                continue
            parts[key] = entry
        lines.append(entry)
    return "".join(json.dumps(entry) + "\n" for entry in lines)


def _join(line: dict[str, Any], entry: Mapping[str, Any]) -> None:
    """Add the next part's ``entry`` to the ``line`` of its document (annotation, item, actions between the first
    load and the last submit, the evalkit ids)."""
    line["annotation"] += entry["annotation"]
    line["item"] += entry["item"]
    line["actions"] = [*line["actions"][:-1], *entry["actions"][1:]]
    line["evalkit"]["item_ids"] += entry["evalkit"]["item_ids"]
    line["evalkit"].setdefault("question_indexes", [line["evalkit"]["question_index"]]).append(
        entry["evalkit"]["question_index"])
