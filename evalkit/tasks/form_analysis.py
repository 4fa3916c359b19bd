"""The answers of background forms (kind ``form``): simple summaries per field for the results page, and the forms
CSV (one row per session and field).

Only sessions the statistics count are summarised (``active`` and ``completed``; with ``completed_only`` the
completed ones); the CSV holds every stored answer with the session's status beside it.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..text import csv_safe

if TYPE_CHECKING:
    from ..store import FormAnswer, Session, Store

__all__ = ["FORMS_CSV_COLUMNS", "FieldSummary", "FormSummary", "form_descriptions", "forms_csv", "forms_frame",
           "summarise"]

#: Columns of forms.csv, in order: one row per (session, form, field).
FORMS_CSV_COLUMNS = ["evaluatorName", "sessionId", "externalId", "sessionStatus", "task", "field", "fieldType",
                     "value", "timeSpentMs", "createdAt"]
COUNTED = ("active", "completed")


@dataclass
class FieldSummary:
    """One field's summary: how many answered / left it empty, and a small table (counts per option or level,
    min / median / max of a number, or the texts)."""

    id: str
    label: str
    type: str
    answered: int
    skipped: int
    table: pd.DataFrame
    note: str = ""


@dataclass
class FormSummary:
    """Every field of one form task, and how many sessions submitted it."""

    id: str
    title: str
    submitted: int
    fields: list[FieldSummary] = field(default_factory=list)


def form_descriptions(studies: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Form task id -> its stored description (``Store.studies()``; the newest registration wins)."""
    out: dict[str, dict[str, Any]] = {}
    for summary in studies.values():
        for task in summary.get("tasks", []):
            if task.get("kind") == "form":
                out[task["id"]] = dict(task)
    return out


def forms_frame(answers: Sequence[FormAnswer], sessions: Sequence[Session]) -> pd.DataFrame:
    """One row per stored form answer, with the session's name, external id and status."""
    by_id = {s.session_id: s for s in sessions}
    rows = [{"session_id": a.session_id, "task": a.task, "field": a.field, "value": a.value,
             "time_spent_ms": a.time_spent_ms, "created_at": a.created_at,
             "evaluator_name": by_id[a.session_id].evaluator_name if a.session_id in by_id else "",
             "external_id": by_id[a.session_id].external_id if a.session_id in by_id else "",
             "status": by_id[a.session_id].status if a.session_id in by_id else ""} for a in answers]
    return pd.DataFrame(rows, columns=["session_id", "task", "field", "value", "time_spent_ms", "created_at",
                                       "evaluator_name", "external_id", "status"])


def forms_csv(store: Store) -> str:
    """Every stored form answer as CSV (:data:`FORMS_CSV_COLUMNS`), long format: one row per session and field.

    ``value`` is as stored: text as typed, a number as a decimal, a choice's option, a Likert level as an
    integer, and a multiple choice as a JSON list of the chosen options (``["Travel sites", "Maps, e.g. Google
    Maps"]``, unambiguous even when an option holds a comma); empty for an optional field left empty.
    ``fieldType`` comes from the study's description stored in the database. Text cells are made safe for
    spreadsheets as in the other exports (:func:`evalkit.text.csv_safe`).
    """
    frame = forms_frame(store.form_answers(), store.sessions())
    described = form_descriptions(store.studies())
    types = {(task, f["id"]): f["type"] for task, d in described.items() for f in d.get("fields", [])}
    position = {key: k for k, key in enumerate(types)}  # fields in the form's order (unknown ones last)
    frame["position"] = [position.get(key, len(position)) for key in zip(frame["task"], frame["field"], strict=True)]
    frame = frame.sort_values(["created_at", "session_id", "task", "position", "field"], kind="stable")
    out = pd.DataFrame({
        "evaluatorName": frame["evaluator_name"], "sessionId": frame["session_id"],
        "externalId": frame["external_id"], "sessionStatus": frame["status"], "task": frame["task"],
        "field": frame["field"],
        "fieldType": [types.get((t, f), "") for t, f in zip(frame["task"], frame["field"], strict=True)],
        "value": frame["value"], "timeSpentMs": frame["time_spent_ms"].astype("Int64"),
        "createdAt": frame["created_at"]}, columns=FORMS_CSV_COLUMNS)
    return csv_safe(out).to_csv(index=False)


def _share(count: int, n: int) -> float | None:
    return count / n if n else None


def _summary(desc: Mapping[str, Any], values: pd.Series) -> FieldSummary:
    given = values.dropna()
    kind = desc.get("type", "text")
    label = desc.get("label", desc["id"])
    answered, skipped = len(given), len(values) - len(given)
    note = ""
    if kind in ("choice", "multichoice"):
        options = list(desc.get("options", []))
        chosen = [json.loads(v) for v in given] if kind == "multichoice" else [[v] for v in given]
        counts = {o: sum(o in c for c in chosen) for o in options}
        table = pd.DataFrame({"option": options, "count": [counts[o] for o in options],
                              "share": [_share(counts[o], answered) for o in options]})
        if kind == "multichoice":
            note = "Each evaluator may choose several options: shares are of the evaluators who answered."
    elif kind == "likert":
        levels = [int(v) for v in desc.get("levels", [])]
        labels = list(desc.get("labels", [str(v) for v in levels]))
        numbers = pd.to_numeric(given, errors="coerce").dropna().astype(int)
        table = pd.DataFrame({"level": labels, "count": [int((numbers == v).sum()) for v in levels],
                              "share": [_share(int((numbers == v).sum()), answered) for v in levels]})
        if len(numbers):
            note = f"Median level {numbers.median():g}."
    elif kind == "number":
        numbers = pd.to_numeric(given, errors="coerce").dropna()
        table = pd.DataFrame([{"n": len(numbers), "min": numbers.min() if len(numbers) else None,
                               "median": numbers.median() if len(numbers) else None,
                               "max": numbers.max() if len(numbers) else None,
                               "mean": numbers.mean() if len(numbers) else None}])
    else:
        table = pd.DataFrame({"text": list(given)})
    return FieldSummary(id=desc["id"], label=label, type=kind, answered=answered, skipped=skipped, table=table,
                        note=note)


def summarise(frame: pd.DataFrame, descriptions: Mapping[str, Mapping[str, Any]], *,
              completed_only: bool = False, leave_out: Collection[str] = ()) -> list[FormSummary]:
    """Per form task (in ``descriptions``' order), per field (in the form's order): the summary of the answers of
    the sessions the statistics count (``frame`` from :func:`forms_frame`), less the sessions in ``leave_out``
    (those that failed their attention checks, when the statistics leave them out: the same evaluators as every
    other table, see :func:`evalkit.analysis.included_sessions`)."""
    counted = ("completed",) if completed_only else COUNTED
    keep = frame["status"].isin(counted)
    if len(leave_out):
        keep &= ~frame["session_id"].isin(list(leave_out))
    rows = frame[keep]
    out = []
    for task_id, desc in descriptions.items():
        mine = rows[rows["task"] == task_id]
        summary = FormSummary(id=task_id, title=str(desc.get("title", task_id)),
                              submitted=int(mine["session_id"].nunique()))
        for f in desc.get("fields", []):
            summary.fields.append(_summary(f, mine.loc[mine["field"] == f["id"], "value"]))
        out.append(summary)
    return out
