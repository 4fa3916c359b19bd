"""The store's tables as DataFrames (:class:`Frames`) with their column lists, and what every analysis reads off
them: the task descriptions (:func:`tasks_of`) and one key per rated item (:func:`rated_item_keys`).

:func:`evalkit.analysis.load_frames` fills a :class:`Frames` from the store; the tests build them by hand. May import
numpy, pandas and :mod:`evalkit.resultkit.codes`; nothing above the task kinds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .codes import column_codes

__all__ = ["EVALUATION_COLUMNS", "RATING_COLUMNS", "SESSION_COLUMNS", "Frames", "rated_item_keys", "tasks_of"]


SESSION_COLUMNS = ["session_id", "evaluator_name", "external_id", "seed", "study_version", "started_at",
                   "completed_at", "user_agent", "status", "completion_code", "meta"]


EVALUATION_COLUMNS = ["id", "session_id", "task", "kind", "question_index", "slot", "response", "review_source",
                      "domain", "time_spent_ms", "left_source", "right_source", "sources", "item_ids", "matched",
                      "detail", "created_at", "check_type", "check_passed"]


RATING_COLUMNS = ["id", "session_id", "task", "question_index", "item_id", "metric", "score", "comment",
                  "time_spent_ms", "created_at"]



@dataclass
class Frames:
    """The store's tables as DataFrames, plus the registered task descriptions."""

    sessions: pd.DataFrame
    evaluations: pd.DataFrame
    ratings: pd.DataFrame
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the ``spans`` table (kind ``spans``), None when not read
    spans: pd.DataFrame | None = None



def tasks_of(frames: Frames) -> list[dict[str, Any]]:
    """Task descriptions: the newest registered study's, plus any task seen only in the data."""
    tasks: dict[str, dict[str, Any]] = {}
    for summary in frames.studies.values():
        for t in summary.get("tasks", []):
            tasks[t["id"]] = t
    ev = frames.evaluations
    if len(ev):
        task_codes, task_names = column_codes(ev["task"])
        kind_codes, kind_names = column_codes(ev["kind"])
        combined = (task_codes * (len(kind_names) + 1) + kind_codes + 1)[task_codes >= 0]
        seen = np.flatnonzero(np.bincount(combined))
        for code in seen:
            task, kind = task_names[code // (len(kind_names) + 1)], code % (len(kind_names) + 1) - 1
            if task not in tasks:
                tasks[task] = {"id": task, "kind": kind_names[kind] if kind >= 0 else "triplet", "title": task}
    if len(frames.ratings):
        codes, names = column_codes(frames.ratings["task"])
        for task in names[np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(names)))]:
            if task not in tasks:
                tasks[task] = {"id": task, "kind": "rating", "title": task, "metrics": []}
    return list(tasks.values())



def rated_item_keys(ratings: pd.DataFrame, session: np.ndarray) -> np.ndarray:
    """One integer per rated item, (session, task, question): the rating rows of one item share it.

    ``session`` holds the rows' session codes (the caller's coding: own or recoded to a session list).
    """
    task, task_names = column_codes(ratings["task"])
    question = ratings["question_index"].to_numpy(dtype=np.int64)
    span = int(question.max()) + 1 if len(question) else 1
    return (session * (len(task_names) + 1) + task) * span + question
