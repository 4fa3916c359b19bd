"""Stored responses -> result tables. Shared by the results page and ``python -m evalkit report``.

Every function here is pure: DataFrames in, DataFrames out. :func:`load_frames`
reads the store once; :func:`analyse` computes everything the results page
shows into a :class:`Report`.

Which sessions count: only *included* ones (status ``active`` or
``completed``; ``excluded`` and ``trashed`` never count). ``completed_only``
narrows that to sessions that reached the end.

Speed: a large study has millions of answers, so the analysis never loops over
rows in Python and never groups by strings. :func:`load_frames` reads the
columns it needs into Arrow with the text columns dictionary-encoded
(categoricals), and each result is counted with ``np.bincount`` over integer
codes. The functions also take plain DataFrames with string columns (they are
coded with ``pd.factorize`` first), which is what the tests build by hand.

Floor: study services (``.importlinter``). May import the config, the checks, the task kinds (:mod:`evalkit.tasks`),
:mod:`evalkit.resultkit` and the core; never the survey flow, the exports or the command line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import stats, tasks
from .checks import OUTCOMES, passes
from .resultkit import (
    BT_ONE_EVALUATOR,
    EVALUATION_COLUMNS,
    RATING_COLUMNS,
    SESSION_COLUMNS,
    Block,
    Frames,
    Options,
    ResultDefaults,
    TaskContext,
    TaskResult,
    bradley_terry_intervals,
    bt_chart,
    bt_evaluators,
    bt_frame,
    bt_note,
    bt_table,
    column_codes,
    item_codes,
    json_int,
    json_values,
    rated_item_keys,
    recode_column,
    score_values,
    strongest_first,
    tasks_of,
)
from .store import COLUMNS as STORE_COLUMNS
from .store import ColumnSpec, ForKinds, JsonField, Sampled, Store
from .tasks import KINDS
from .text import csv_safe

if TYPE_CHECKING:
    import pyarrow as pa

    from .config import LoadedStudy
    from .items import ItemSet
    from .tasks.base import TaskKind

__all__ = [
    "BT_ONE_EVALUATOR",
    "CERA_COLUMNS",
    "EVALUATION_COLUMNS",
    "RATING_COLUMNS",
    "SESSION_COLUMNS",
    "AllPairsResult",
    "Block",
    "Frames",
    "Options",
    "Report",
    "ResultDefaults",
    "TaskContext",
    "TaskResult",
    "all_pairs",
    "analyse",
    "answer_time_bins",
    "bradley_terry_intervals",
    "bt_evaluators",
    "evaluation_read",
    "evaluations_csv",
    "included_sessions",
    "item_codes",
    "items_of",
    "json_int",
    "json_values",
    "load_frames",
    "quality_signals",
    "ratings_csv",
    "score_values",
    "strongest_first",
    "tasks_of",
    "timeline",
]

#: Export names of the original CERA schema (its analysis scripts read these), then ours.
CERA_COLUMNS = {
    "evaluator_name": "evaluatorName", "session_id": "sessionId", "task": "task",
    "question_index": "questionIndex", "response": "response", "review_source": "reviewSource",
    "domain": "domain", "time_spent_ms": "timeSpentMs", "left_source": "leftSource",
    "right_source": "rightSource", "created_at": "createdAt",
}
EXTRA_COLUMNS = {
    "kind": "kind", "slot": "slot", "sources": "sources", "system": "system", "preferred_system": "preferred_system",
    "left_system": "left_system", "right_system": "right_system", "item_ids": "itemIds", "matched": "matched",
    "detail": "detail", "external_id": "externalId", "status": "sessionStatus", "study_version": "studyVersion",
    "item_id": "item_id", "check": "check", "check_passed": "check_passed",
}


#: How many answer timestamps the timeline needs (it draws at most a few hundred points).
TIMELINE_SAMPLES = 4000
#: The kinds whose questions show an item of an items file: their item ids are read (a pool question's are
#: review keys, nearly one distinct value per answer, which the analysis does not need).
ITEM_KINDS = tuple(name for name, kind in KINDS.items() if kind.source == "items")
#: What the analysis reads of the evaluations (not the JSON columns, which only the CSV export needs).
EVALUATION_READ = (
    ("id", "id", "int"), ("session_id", "session_id", "category"), ("task", "task", "category"),
    ("kind", "kind", "category"), ("question_index", "question_index", "int"), ("slot", "slot", "int"),
    ("response", "response", "category"), ("review_source", "review_source", "category"),
    ("domain", "domain", "category"), ("time_spent_ms", "time_spent_ms", "int"),
    ("left_source", "left_source", "category"), ("right_source", "right_source", "category"),
    ("matched", "matched", "int"),
    ("button", JsonField("detail", "button"), "category"),  # the slider's button, read out of the JSON
    ("created_at_sample", Sampled("created_at", TIMELINE_SAMPLES), "text"),
    # the items kinds: the systems shown (JSON list, display order: few distinct values), the item's id (a JSON
    # list of one), a real-or-generated answer's confidence, and a score answer's whole detail (JSON text,
    # parsed in bulk by pyarrow's JSON reader, see score_values: SQLite's json_extract of the scores cost
    # 1 s per million answers, reading the text as it is 0.1 s)
    ("sources", "sources", "category"),
    ("item_ids", ForKinds("item_ids", ITEM_KINDS), "category"),
    ("confidence", JsonField("detail", "confidence"), "int"),
    ("score_detail", ForKinds("detail", ("score", "spans")), "text"),
)
#: What the analysis of every answer reads (the evaluator table, the timeline, the filters); each kind adds the
#: columns its own analysis reads (:attr:`evalkit.tasks.base.TaskKind.analysis_columns`), see :func:`evaluation_read`.
COMMON_READ = ("id", "session_id", "task", "kind", "question_index", "slot", "response", "review_source",
               "time_spent_ms", "created_at_sample")
#: Added to the evaluations after the columnar read, from :meth:`Store.check_answers` (see :func:`load_frames`).
CHECK_COLUMNS = ("check_type", "check_passed")
SESSION_READ = tuple((name, name, "int" if name == "seed" else "text") for name in SESSION_COLUMNS)
RATING_READ = (
    ("id", "id", "int"), ("session_id", "session_id", "category"), ("task", "task", "category"),
    ("question_index", "question_index", "int"), ("item_id", "item_id", "category"),
    ("metric", "metric", "category"), ("score", "score", "real"), ("time_spent_ms", "time_spent_ms", "int"),
)  # (not ``created_at``: the timeline draws the answers' times; the ratings CSV reads every column)


def load_frames(store: Store, *, full: bool = False) -> Frames:
    """Read sessions, evaluations, ratings and the task descriptions from the store.

    By default only what the analysis needs, columnar and dictionary-encoded
    (see :meth:`Store.read_tables`): the slider's button as a ``button`` column
    instead of the ``detail`` JSON (and likewise ``confidence``; a score answer's
    ``detail`` as ``score_detail``), ``item_ids`` of the items kinds only, and instead of ``created_at`` a
    ``created_at_sample`` column holding the timestamp of about
    ``TIMELINE_SAMPLES`` evenly spaced answers (every k-th id, and the newest),
    which is all the timeline draws. ``full=True`` reads every column as stored
    (for the CSV exports).
    """
    studies = store.studies()
    if full:
        sessions = pd.DataFrame(store.table("sessions"), columns=SESSION_COLUMNS)
        evaluations = pd.DataFrame(store.table("evaluations"), columns=EVALUATION_COLUMNS)
        ratings = pd.DataFrame(store.table("ratings"), columns=RATING_COLUMNS)
    else:
        answer_tasks = store.answer_tasks()
        columns = evaluation_read(studies, answer_tasks)
        read = store.read_tables({"sessions": ("sessions", SESSION_READ), "evaluations": ("evaluations", columns),
                                  "ratings": ("ratings", RATING_READ)})
        if columns != EVALUATION_READ and not set(_tasks_in(read["evaluations"])) <= answer_tasks:
            # a task's first answer came after answer_tasks(): its kind's columns may be missing, read them all
            read["evaluations"] = store.read_tables({"e": ("evaluations", EVALUATION_READ)})["e"]
        read["evaluations"] = _with_every_column(read["evaluations"])
        sessions, evaluations, ratings = (read[name].to_pandas() for name in ("sessions", "evaluations", "ratings"))
        _add_check_columns(evaluations, store.check_answers())
    spans = pd.DataFrame(store.spans(), columns=list(STORE_COLUMNS["spans"]))
    return Frames(sessions=sessions, evaluations=evaluations, ratings=ratings, studies=studies, spans=spans)


def evaluation_read(studies: Mapping[str, Mapping[str, Any]], answer_tasks: Collection[str]) -> tuple[ColumnSpec, ...]:
    """The columns of :data:`EVALUATION_READ` the analysis of the stored answers needs: :data:`COMMON_READ` and
    the ``analysis_columns`` of the kinds of the tasks (as the newest registered study describes each, which is
    the kind the analysis uses, see :func:`tasks_of`). Every column when an answer's task is not registered,
    or its kind is not known: the analysis then takes the kind from the rows.

    (Each column of a million answers costs 0.1-0.3 s to read; a study of triplets and pairs does not need the
    columns the items kinds added, nor a study of scores the pools' ``domain`` and ``matched``.) Leaving a
    column out changes no result: :func:`load_frames` adds it back with no values, and no analysis of the
    kinds present reads it.
    """
    kind_of: dict[str, str] = {}
    for summary in studies.values():
        for t in summary.get("tasks", []):
            kind_of[t["id"]] = t.get("kind", "")
    if any(kind_of.get(task) not in KINDS for task in answer_tasks):
        return EVALUATION_READ
    wanted = set(COMMON_READ).union(*(KINDS[kind_of[task]].analysis_columns for task in answer_tasks))
    return tuple(spec for spec in EVALUATION_READ if spec[0] in wanted)


def _tasks_in(table: pa.Table) -> list[str]:
    """The distinct tasks of read evaluations."""
    import pyarrow.compute as pc

    return [t for t in pc.unique(table["task"]).to_pylist() if t is not None]


def _with_every_column(table: pa.Table) -> pa.Table:
    """The read evaluations with the columns of :data:`EVALUATION_READ` that were not read added back, empty
    (NULL on every row, as they were in every row read), in that order."""
    import pyarrow as pa

    types = {"int": pa.int64(), "real": pa.float64(), "text": pa.string()}
    columns = []
    for name, _, kind in EVALUATION_READ:
        if name in table.column_names:
            columns.append(table[name])
        elif kind == "category":
            columns.append(pa.nulls(table.num_rows, pa.string()).dictionary_encode())
        else:
            columns.append(pa.nulls(table.num_rows, types[kind]))
    return pa.table(columns, names=[name for name, _, _ in EVALUATION_READ])


def _add_check_columns(evaluations: pd.DataFrame, checks: Sequence[tuple[int, str, int | None]]) -> None:
    """``check_type`` (category) and ``check_passed`` (float, NaN = none) on the answers to check questions, NaN
    elsewhere: the few rows :meth:`Store.check_answers` returns, placed by id (tutorial and attention checks)."""
    n = len(evaluations)
    kinds = sorted({kind for _, kind, _ in checks})
    codes, passed = np.full(n, -1, dtype=np.int8), np.full(n, np.nan)
    if checks:
        at = pd.Index(evaluations["id"].to_numpy()).get_indexer([i for i, _, _ in checks])
        found = at >= 0  # an answer stored after the columnar read began is left for the next read
        codes[at[found]] = [kinds.index(kind) for (_, kind, _), ok in zip(checks, found, strict=True) if ok]
        passed[at[found]] = [np.nan if p is None else p for (_, _, p), ok in zip(checks, found, strict=True) if ok]
    evaluations["check_type"] = pd.Categorical.from_codes(codes, categories=kinds)
    evaluations["check_passed"] = passed


def included_sessions(sessions: pd.DataFrame, completed_only: bool = False,
                      failed_checks: Collection[str] = ()) -> pd.DataFrame:
    """Sessions that count: not excluded, not trashed, not in ``failed_checks`` (:func:`check_results`); with
    ``completed_only`` also finished."""
    keep = sessions["status"].isin(["active", "completed"])
    if completed_only:
        keep &= sessions["completed_at"].notna()
    if len(failed_checks):
        keep &= ~sessions["session_id"].isin(list(failed_checks))
    return sessions[keep]


def max_failed_checks(frames: Frames) -> int | float:
    """``[study.quality] max_failed_checks`` of the newest registered study version (0 when none says): a count, or
    a proportion (a float strictly between 0 and 1) of a session's attention checks."""
    found = [s.get("max_failed_checks") for s in frames.studies.values() if "max_failed_checks" in s]
    if not found:
        return 0
    value = found[-1]
    return value if isinstance(value, float) and 0 < value < 1 else int(value)


def check_results(sessions: pd.DataFrame, ev: pd.DataFrame, max_failed: int | float) -> pd.DataFrame:
    """Per session (``sessions`` order): attention checks passed and failed (first try), tutorial questions
    answered right the first time, and ``checks_result`` ``passed`` / ``failed`` (by
    :func:`evalkit.checks.passes`: ``max_failed`` a count, or a proportion of the session's attention checks),
    empty for a session without attention checks."""
    out = pd.DataFrame({"session_id": sessions["session_id"].to_numpy()})
    zero = pd.Series(0, index=out.index)
    if "check_type" not in ev.columns or not ev["check_type"].notna().any():
        out["checks_passed"], out["checks_failed"], out["tutorial_first_try"], out["checks_result"] = \
            zero, zero, zero, ""
        return out
    kind = ev["check_type"].astype(object)
    ok = pd.to_numeric(ev["check_passed"], errors="coerce").fillna(0).astype(int)
    sid = ev["session_id"].astype(object)

    def count(mask: pd.Series) -> pd.Series:
        return out["session_id"].map(sid[mask].value_counts()).fillna(0).astype(int)

    out["checks_passed"] = count((kind == "attention") & (ok == 1))
    out["checks_failed"] = count((kind == "attention") & (ok == 0))
    out["tutorial_first_try"] = count((kind == "tutorial") & (ok == 1))
    any_check = (out["checks_passed"] + out["checks_failed"]) > 0
    out["checks_result"] = np.where(~any_check, "", np.where(
        [passes(int(f), max_failed, int(f) + int(p)) for f, p in zip(out["checks_failed"], out["checks_passed"],
                                                                  strict=True)], "passed", "failed"))
    return out


# ----------------------------------------------------------------------------- integer codes


# ----------------------------------------------------------------------------- Bradley–Terry (shared)


# ----------------------------------------------------------------------------- quality signals


def quality_signals(sessions: pd.DataFrame, ev: pd.DataFrame, ratings: pd.DataFrame,
                    fast_ms: int = 2000) -> pd.DataFrame:
    """Per evaluator: completion, time, too-fast answers, straight-lining, agreement with the majority, and
    which ``[study.session]`` limit ended the session (``ended_by``: ``time``, ``questions`` or empty).

    ``longest_same_run`` is the longest run of identical responses within one
    task, in the order answered. Agreement compares the source an evaluator
    picked on a question slot with the majority of the *other* evaluators on
    that slot (leave-one-out), over answers with a picked source; slots where
    the others tie are skipped.
    """
    index = pd.Index(sessions["session_id"])
    n = len(index)
    owner = recode_column(ev["session_id"], index)
    mine = owner >= 0
    times = ev["time_spent_ms"].to_numpy(dtype=float)
    # time per rated item: the first rating row of each (session, task, question) carries it
    r_owner = recode_column(ratings["session_id"], index)
    _, r_first = np.unique(rated_item_keys(ratings, r_owner), return_index=True)
    r_first = r_first[r_owner[r_first] >= 0]
    r_times = ratings["time_spent_ms"].to_numpy(dtype=float)[r_first]
    all_owner = np.concatenate([owner[mine], r_owner[r_first]])
    all_times = np.concatenate([times[mine], r_times])
    timed = ~np.isnan(all_times)
    total_ms = np.bincount(all_owner[timed], weights=all_times[timed], minlength=n)
    total_s = np.where(np.bincount(all_owner[timed], minlength=n) > 0, total_ms / 1000, np.nan)
    median_s = (pd.Series(times[mine]).groupby(owner[mine]).median() / 1000).reindex(range(n)).to_numpy()
    answers = np.bincount(owner[mine], minlength=n)
    fast = np.bincount(owner[mine], weights=(times[mine] < fast_ms), minlength=n).astype(int)
    task, task_names = column_codes(ev["task"])
    # a score answer's response is always "scored" and a real-or-generated answer's review_source is the text
    # shown, not a pick: the kinds say so (TaskKind.choice_in_review_source / .response_varies)
    kind, kind_names = column_codes(ev["kind"]) if "kind" in ev.columns else (np.full(len(ev), -1), np.zeros(0))
    constant = np.isin(kind, [c for c, name in enumerate(kind_names)
                              if name in KINDS and not KINDS[name].response_varies])
    runs = _longest_runs(np.where(constant, -1, owner), task, len(task_names), column_codes(ev["response"])[0],
                         ev["id"].to_numpy(), n)
    shown = np.isin(kind, [c for c, name in enumerate(kind_names)
                           if name in KINDS and not KINDS[name].choice_in_review_source])
    agree = _majority_agreement(ev[~shown] if shown.any() else ev, owner[~shown] if shown.any() else owner, n)
    table = sessions[["session_id", "evaluator_name", "external_id", "status", "started_at",
                      "completed_at"]].copy()
    table["completed"] = table["completed_at"].notna()
    table["answers"] = answers
    table["total_time_s"] = total_s
    table["median_time_s"] = median_s
    table["fast_answers"] = fast
    table["longest_same_run"] = runs
    table["majority_agreement"] = agree
    table["ended_by"] = ended_by_limit(sessions)
    table["outcome"] = session_outcomes(sessions)
    return table.reset_index(drop=True)


def _meta_values(sessions: pd.DataFrame, key: str, allowed: Collection[str]) -> np.ndarray:
    """Per session: ``meta[key]`` when it is one of ``allowed``, else ``""``. Only the metas that mention the key
    are parsed (a study of many sessions has few with it)."""
    out = np.full(len(sessions), "", dtype=object)
    if "meta" not in sessions.columns:
        return out
    meta = sessions["meta"].fillna("").astype(str)
    for at in np.flatnonzero(meta.str.contains(f'"{key}"', regex=False).to_numpy()):
        try:
            value = json.loads(meta.iloc[at]).get(key)
        except (ValueError, AttributeError):
            continue
        out[at] = value if value in allowed else ""
    return out


def ended_by_limit(sessions: pd.DataFrame) -> np.ndarray:
    """Per session: ``"time"`` or ``"questions"`` when a ``[study.session]`` limit ended it (``meta["limit"]``,
    see :func:`evalkit.survey.finish_session`), else ``""``."""
    return _meta_values(sessions, "limit", ("time", "questions"))


def session_outcomes(sessions: pd.DataFrame) -> np.ndarray:
    """Per session: the outcome stored when it completed (``meta["outcome"]``, :data:`evalkit.checks.OUTCOMES`:
    ``full`` marks a session that got no queued judgment, ``incomplete`` one that completed without its attention
    checks or judgments), else ``""`` (not completed yet, or completed before outcomes were stored)."""
    return _meta_values(sessions, "outcome", OUTCOMES)


def _longest_runs(owner: np.ndarray, task: np.ndarray, n_tasks: int, response: np.ndarray, ids: np.ndarray,
                  n: int) -> np.ndarray:
    """Per session: the longest run of identical responses within one task, in id order (0 with no answers)."""
    out = np.zeros(n, dtype=int)
    mine = np.flatnonzero(owner >= 0)
    if not len(mine):
        return out
    if np.any(np.diff(ids[mine]) < 0):
        mine = mine[np.argsort(ids[mine], kind="stable")]
    block = owner[mine] * (n_tasks + 1) + task[mine]
    order = mine[np.argsort(block, kind="stable")]  # by (session, task), id order kept within
    block, resp = owner[order] * (n_tasks + 1) + task[order], response[order]
    starts = np.flatnonzero(np.r_[True, (resp[1:] != resp[:-1]) | (block[1:] != block[:-1])])
    lengths = np.diff(np.r_[starts, len(order)])
    np.maximum.at(out, owner[order][starts], lengths)
    return out


def _majority_agreement(ev: pd.DataFrame, owner: np.ndarray, n: int) -> np.ndarray:
    """Per session: the share of its picks that match the leave-one-out majority of its slot (NaN: none).

    The majority of a (task, slot) is taken over the other evaluators' picks:
    every pick of the evaluator itself on that slot is left out. Vectorised
    over picks, one pass per source (there are few sources and many picks).
    """
    source, source_names = column_codes(ev["review_source"])
    task, _ = column_codes(ev["task"])
    slot, _ = pd.factorize(ev["slot"])
    session, session_names = column_codes(ev["session_id"])
    picks = np.flatnonzero((source >= 0) & (slot >= 0))  # every evaluator's pick counts for the others
    out = np.full(n, np.nan)
    if not len(picks):
        return out
    k = len(source_names)
    src = source[picks]
    group, group_names = pd.factorize(task[picks] * (int(slot.max()) + 1) + slot[picks])
    counts = np.bincount(group * k + src, minlength=len(group_names) * k).reshape(-1, k)
    others = [counts[:, s][group].astype(np.int32) - (src == s) for s in range(k)]  # minus the pick itself
    # An evaluator normally picks once per slot; where one picked more often, leave out the other picks too.
    mine = session[picks].astype(np.int64) * len(group_names) + group
    if len(session_names) * len(group_names) <= 4 * len(picks) + (1 << 20):
        repeated = np.bincount(mine)[mine] > 1
    else:
        _, inverse, times = np.unique(mine, return_inverse=True, return_counts=True)
        repeated = times[inverse] > 1
    if repeated.any():
        rows = np.flatnonzero(repeated)
        own_key, own_names = pd.factorize(mine[rows])
        own = np.bincount(own_key * k + src[rows], minlength=len(own_names) * k).reshape(-1, k)
        for s in range(k):
            others[s][rows] -= own[own_key, s] - (src[rows] == s)
    top = others[0].copy()
    leader = np.zeros(len(picks), dtype=np.int64)
    for s in range(1, k):
        ahead = others[s] > top
        leader[ahead] = s
        np.maximum(top, others[s], out=top)
    n_top = sum((others[s] == top).astype(np.int8) for s in range(k))
    unique_leader = (top > 0) & (n_top == 1)
    who = owner[picks]
    counted = unique_leader & (who >= 0)
    total = np.bincount(who[counted], minlength=n)
    hits = np.bincount(who[counted], weights=(leader == src)[counted], minlength=n)
    np.divide(hits, total, out=out, where=total > 0)
    return out


# ----------------------------------------------------------------------------- what a kind's analysis returns

if TYPE_CHECKING:
    from .tasks.pairwise_analysis import PairwiseResult
    from .tasks.rating_analysis import RatingResult
    from .tasks.triplet_analysis import TripletResult


def items_of(loaded: LoadedStudy) -> dict[str, ItemSet]:
    """The items file of every task that reads one, by task id: what :func:`analyse` correlates the human
    judgments with (the items' ``metrics``); the database's task descriptions do not hold them."""
    out: dict[str, ItemSet] = {}
    for task in loaded.study.tasks:
        files = KINDS[task.kind].items_files(task)
        if files and files[0] in loaded.item_sets:
            out[task.id] = loaded.item_sets[files[0]]
    return out


# ----------------------------------------------------------------------------- across tasks: Bradley–Terry


@dataclass
class AllPairsResult(ResultDefaults):
    """The Bradley–Terry strengths over all pairwise tasks, with bootstrap intervals over evaluators.

    A study-level statistic across tasks (every pairwise task's judgments in one fit, an evaluator's judgments
    in all of them resampled together), so it is computed here by :func:`analyse`, not by the pairwise kind's
    module; it follows the :class:`TaskResult` protocol, and :meth:`Report.sections` shows it after the last
    pairwise task."""

    bradley_terry: pd.DataFrame  # source, log_strength, low, high; strongest first
    options: Options
    after: str  # the id of the last pairwise task
    task: str = ""
    title: str = "Bradley–Terry over all pairwise tasks"
    kind: str = "pairwise"
    n_answers: int = 0
    n_evaluators: int = 0  # evaluators with a pairwise judgment (the bootstrap's units; no interval below 2)

    def describe(self) -> str:
        return "pairwise, all tasks"

    def headings(self) -> tuple[str, str]:
        """(the results page's heading, the Markdown report's)."""
        return "Bradley–Terry strengths over all pairs", self.title

    def blocks(self) -> list[Block]:
        bt, note = self.bradley_terry, bt_note(self.options)
        if self.n_evaluators < 2:
            note += BT_ONE_EVALUATOR
        page = (Block("", None, "No pairwise comparison yet.", shown="page") if bt.empty else
                Block("", bt_table(bt), note, chart="bradley_terry", shown="page"))
        return [page, Block("", bt_table(bt, 2), note, shown="report")]

    def main_rows(self) -> list[dict[str, Any]]:
        interval = f"bootstrap percentile, evaluators resampled {self.options.bootstrap_resamples:,} times"
        return [{"section": "Bradley–Terry log-strength (all pairs)", "label": r.source, "detail": "",
                 "value": r.log_strength, "low": r.low, "high": r.high, "p_value": math.nan, "n": None,
                 "interval": interval, "kind": "num"} for r in self.bradley_terry.itertuples()]

    def charts(self) -> dict[str, Any]:
        return {} if self.bradley_terry.empty else {"bradley_terry": bt_chart(self.bradley_terry)}


def all_pairs(pairwise: Sequence[PairwiseResult], options: Options) -> AllPairsResult:
    """Bradley–Terry over the judgments of every pairwise task (ties as half a win each), with percentile
    bootstrap intervals resampling evaluators (:func:`bradley_terry_intervals`)."""
    bt_all = bt_frame({})
    if any(len(p.records) for p in pairwise):
        total = pd.DataFrame()
        for p in pairwise:
            total = total.add(p.wins, fill_value=0)
        sources = sorted(total.index, key=str)
        bt_all = bt_frame(stats.bradley_terry_matrix(sources, total.reindex(index=sources, columns=sources)
                                                      .fillna(0).to_numpy()),
                           bradley_terry_intervals(list(pairwise), sources, options.bootstrap_resamples,
                                                   options.bootstrap_seed, options.confidence))
    return AllPairsResult(bradley_terry=bt_all, options=options, after=pairwise[-1].task if pairwise else "",
                          n_evaluators=bt_evaluators(pairwise))


# ----------------------------------------------------------------------------- the whole report


@dataclass
class Report:
    """Everything the results page and ``evalkit report`` show."""

    options: Options
    n_sessions: int
    n_completed: int
    n_answers: int
    n_ratings: int  # item ratings: (evaluator, rated item) pairs, all rating tasks
    n_rated_items: int  # distinct items those ratings are of ((task, item) pairs)
    #: every task's results (its kind's ``results``), in study order
    tasks: list[TaskResult]
    #: the statistics across tasks: the Bradley–Terry over all pairwise tasks (when the study has one)
    across: list[AllPairsResult]
    quality: pd.DataFrame  # all sessions, any status (the admin table)
    timeline: pd.DataFrame  # time, count, series: cumulative evaluators started / completed and answers
    answer_times: pd.DataFrame  # start, end, count: histogram of seconds per answer (included answers)
    title: str = ""

    def sections(self) -> list[TaskResult]:
        """What the results page and the Markdown report show, in order: every task in study order, and each
        statistic across tasks right after the last task it draws on."""
        out: list[TaskResult] = []
        for result in self.tasks:
            out += [result, *(a for a in self.across if a.after == result.task)]
        return out

    @property
    def bradley_terry_all(self) -> pd.DataFrame:
        """Bradley–Terry log-strengths over all pairwise tasks, with their bootstrap intervals."""
        return self.across[0].bradley_terry if self.across else bt_frame({})

    @property
    def triplets(self) -> list[TripletResult]:
        """The triplet tasks' results, in study order."""
        return [r for r in self.tasks if r.kind == "triplet"]  # type: ignore[misc]

    @property
    def pairwise(self) -> list[PairwiseResult]:
        """The pairwise tasks' results, in study order."""
        return [r for r in self.tasks if r.kind == "pairwise"]  # type: ignore[misc]

    @property
    def ratings(self) -> list[RatingResult]:
        """The rating tasks' results, in study order."""
        return [r for r in self.tasks if r.kind == "rating"]  # type: ignore[misc]

    @property
    def item_tasks(self) -> list[TaskResult]:
        """The results of the tasks of kinds over items files (compare, score, rank, realfake), in study order."""
        return [r for r in self.tasks if r.kind not in ("triplet", "pairwise", "rating")]


def timeline(sessions: pd.DataFrame, answers: pd.DataFrame, max_points: int = 400) -> pd.DataFrame:
    """Cumulative counts over time of evaluators started, evaluators completed and answers.

    A series longer than ``max_points`` is thinned to that many evenly spaced
    points, so a chart of a million answers stays small. Sessions are sorted by
    time; answers are taken in the order they were stored (their ids), which
    is the order of their timestamps up to clock differences between servers.
    Answers may carry ``created_at_sample`` (see :func:`load_frames`) instead
    of ``created_at``: each point is then an exact (time, count so far) pair at
    one of the sampled answers.
    """
    parts = []
    stamped = "created_at_sample" if "created_at_sample" in answers.columns else "created_at"
    for label, stamps, stored_order in (("evaluators started", sessions["started_at"], False),
                                        ("evaluators completed", sessions["completed_at"], False),
                                        ("answers", answers[stamped], True)):
        counts = np.arange(1, len(stamps) + 1)
        if stored_order:  # counts are positions among all the answers, sampled or not
            known = stamps.notna().to_numpy()
            stamps, counts = stamps[known], counts[known]
        else:
            stamps = stamps.dropna().sort_values(kind="stable")
            counts = counts[: len(stamps)]
        if len(stamps) > max_points:
            pick = np.unique(np.linspace(0, len(stamps) - 1, max_points).round().astype(int))
            stamps, counts = stamps.iloc[pick], counts[pick]
        times = pd.to_datetime(pd.Series(np.asarray(stamps, dtype=object)), utc=True, format="ISO8601")
        parts.append(pd.DataFrame({"time": np.sort(times.to_numpy()), "count": counts, "series": label}))
    return pd.concat(parts, ignore_index=True)


def answer_time_bins(answers: pd.DataFrame, fast_ms: int, bins: int = 40) -> pd.DataFrame:
    """Histogram of seconds per answer (clipped at the 99th percentile, or the fast threshold if larger)."""
    seconds = answers["time_spent_ms"].to_numpy(dtype=float) / 1000
    seconds = seconds[~np.isnan(seconds)]
    if not len(seconds):
        return pd.DataFrame(columns=["start", "end", "count"])
    cap = max(float(np.quantile(seconds, 0.99)), fast_ms / 1000)
    counts, edges = np.histogram(np.minimum(seconds, cap), bins=bins, range=(0.0, cap if cap > 0 else 1.0))
    return pd.DataFrame({"start": edges[:-1], "end": edges[1:], "count": counts})


def analyse(frames: Frames, options: Options | None = None, items: Mapping[str, ItemSet] | None = None) -> Report:
    """Compute every result table from the stored rows.

    ``items``: the items file of each task, by task id (:func:`items_of`), for the correlation of human
    judgments with the items' automatic metrics; without it that section says the files were not given.
    Every task is analysed by its kind, through the registry (:func:`evalkit.tasks.results`);
    the Bradley–Terry over all pairwise tasks (:func:`all_pairs`) is the one statistic across tasks.
    """
    options = options or Options()
    checked = check_results(frames.sessions, frames.evaluations, max_failed_checks(frames))
    failed = checked.loc[checked["checks_result"] == "failed", "session_id"] if options.exclude_failed_checks else ()
    included = included_sessions(frames.sessions, options.completed_only, failed)
    ev, rt = frames.evaluations, frames.ratings
    keep = ev["session_id"].isin(included["session_id"])
    if not options.include_check_questions and "check_type" in ev.columns:
        keep &= ev["check_type"].isna()
    ev = ev if keep.all() else ev[keep.to_numpy()]
    keep = rt["session_id"].isin(included["session_id"])
    rt = rt if keep.all() else rt[keep.to_numpy()]
    spans = included_spans(frames.spans, ev)
    # The tasks' results, the evaluator table and the Bradley-Terry across tasks do not depend on each other (the
    # last only on the pairwise tasks' results): computed on two pool threads and this one, most of each in NumPy,
    # which releases the GIL. The pairwise tasks are submitted first, so this thread fits the bootstrap across
    # tasks (0.3-0.6 s at a million answers) while the pool does the other tasks and the evaluator table.
    with ThreadPoolExecutor(2) as pool:
        jobs = _task_results(frames, ev, rt, options, items, pool, spans)
        quality = pool.submit(quality_signals, frames.sessions, frames.evaluations, frames.ratings, options.fast_ms)
        pairwise = [r for kind, job in jobs if kind == "pairwise" and (r := job.result()) is not None
                    and r.kind == "pairwise"]
        across = [all_pairs(pairwise, options)] if pairwise else []
        results = [r for _, job in jobs if (r := job.result()) is not None]
        quality_table = quality.result().merge(checked, on="session_id", how="left")
    titles = [s.get("title", "") for s in frames.studies.values()]
    return Report(
        options=options, n_sessions=len(included), n_completed=int(included["completed_at"].notna().sum()),
        n_answers=len(ev),
        n_ratings=len(np.unique(rated_item_keys(rt, column_codes(rt["session_id"])[0]))),
        n_rated_items=len(rt[["task", "item_id"]].drop_duplicates()) if len(rt) else 0,
        tasks=results, across=across,  # type: ignore[arg-type]
        quality=quality_table, timeline=timeline(frames.sessions, ev),
        answer_times=answer_time_bins(ev, options.fast_ms),
        title=titles[-1] if titles else "",
    )


def included_spans(spans: pd.DataFrame | None, ev: pd.DataFrame) -> pd.DataFrame | None:
    """The spans of the answers ``ev`` (the included sessions' answers the statistics count): a span belongs to
    the answer of its session, task and question."""
    if spans is None or spans.empty:
        return spans
    keys = ev.loc[ev["kind"].astype(str) == "spans", ["session_id", "task", "question_index"]].astype(
        {"session_id": str, "task": str, "question_index": int}).drop_duplicates()
    return spans.merge(keys, on=["session_id", "task", "question_index"], how="inner")


def _task_results(frames: Frames, ev: pd.DataFrame, rt: pd.DataFrame, options: Options,
                  items: Mapping[str, ItemSet] | None, pool: Executor,
                  spans: pd.DataFrame | None = None) -> list[tuple[str, Future[Any]]]:
    """Every task's results by its kind (the included answers ``ev`` and ratings ``rt``), computed on ``pool``:
    (kind, future of the result or None) in task order; the pairwise tasks are submitted first."""
    jobs: list[tuple[Any, TaskKind, TaskContext]] = []
    for t in tasks_of(frames):
        kind = KINDS.get(t["kind"])
        if kind is None:
            continue
        given = None if items is None else items.get(t["id"])
        note = ("the study's items files were not given to the analysis" if items is None else
                "the task's items file is not in the study's config" if given is None else "")
        jobs.append((t, kind, TaskContext(options, given, note, rt, spans)))
    futures = {id(t): pool.submit(tasks.results, kind, ev, t, context)
               for t, kind, context in sorted(jobs, key=lambda job: job[0]["kind"] != "pairwise")}
    return [(t["kind"], futures[id(t)]) for t, _, _ in jobs]


# ----------------------------------------------------------------------------- exports


def _require_columns(frame: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"the {what} frame lacks {', '.join(missing)}: export needs load_frames(store, full=True)")


def _whole_numbers(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """``columns`` as nullable integers (``Int64``: 20, not 20.0; empty stays empty) where every value is whole."""
    out = frame.copy()
    for column in columns:
        numbers = pd.to_numeric(out[column], errors="coerce")
        known = numbers.dropna()
        if len(known) == int(out[column].notna().sum()) and (known == known.round()).all():
            out[column] = numbers.astype("Int64")
    return out


def evaluations_csv(frames: Frames) -> str:
    """All evaluations as CSV: the CERA column names first, then evalkit's own columns.

    Needs every stored column: frames from ``load_frames(store, full=True)``.
    Counts and indexes are written as integers; text cells are made safe for
    spreadsheets (:func:`evalkit.text.csv_safe`: control characters removed, a
    ``'`` before a leading ``=``, ``+``, ``-``, ``@``, tab or carriage return,
    unless the cell is a plain number such as a slider's ``-40``).
    """
    _require_columns(frames.evaluations, EVALUATION_COLUMNS, "evaluations")
    ev = frames.evaluations.merge(
        frames.sessions[["session_id", "evaluator_name", "external_id", "status", "study_version"]],
        on="session_id", how="left")
    ev["item_id"], ev["check"] = _item_ids(ev), ev["check_type"]
    _plain_system_columns(ev)
    columns = {**CERA_COLUMNS, **EXTRA_COLUMNS}
    out = _whole_numbers(ev[list(columns)].rename(columns=columns),
                         ["questionIndex", "timeSpentMs", "slot", "matched", "check_passed"])
    return csv_safe(out).to_csv(index=False)


#: The kinds of the original CERA study, whose answers keep CERA's columns in the evaluations CSV (``reviewSource``,
#: ``leftSource``, ``rightSource``); an answer of another kind has them empty and says the same in plain names.
CERA_KINDS = ("triplet", "pairwise")


def _plain_system_columns(ev: pd.DataFrame) -> None:
    """The evaluations CSV's system columns, in place: an answer of a CERA kind (or of no stored kind, from before
    kinds were stored) keeps ``review_source`` / ``left_source`` / ``right_source`` (CERA's ``reviewSource``,
    ``leftSource``, ``rightSource``); an answer of a newer kind has them empty and instead ``system`` (the system
    of the one text the question showed: a score of one output, a real-or-generated judgment),
    ``preferred_system`` (the system the evaluator chose: compare, HELP slider, the best of a ranking; empty for a
    tie or a draw) and ``left_system`` / ``right_system`` (the systems of a question showing two outputs, A and B:
    a compare question, a score question of two outputs)."""
    kind = ev["kind"].astype(object)
    cera = (kind.isna() | kind.isin(CERA_KINDS)).to_numpy()
    shown = kind.isin([name for name, k in KINDS.items() if not k.choice_in_review_source]).to_numpy()
    source = ev["review_source"].astype(object)
    ev["system"] = source.where(~cera & shown)
    ev["preferred_system"] = source.where(~cera & ~shown)
    ev["left_system"] = ev["left_source"].astype(object).where(~cera)
    ev["right_system"] = ev["right_source"].astype(object).where(~cera)
    for column in ("review_source", "left_source", "right_source"):
        ev[column] = ev[column].astype(object).where(cera)


def _item_ids(ev: pd.DataFrame) -> pd.Series:
    """The export's ``item_id``: a check question's check id, an items question's item (its one item id); empty
    for a question of review-pool texts (their review keys are in ``itemIds``)."""
    def one(item_ids: Any, kind: Any, detail: Any) -> str:
        if isinstance(detail, str) and '"check_id"' in detail:
            return str(json.loads(detail).get("check_id", ""))
        if kind in ITEM_KINDS and isinstance(item_ids, str):
            ids = json.loads(item_ids or "[]")
            return ids[0] if len(ids) == 1 else ""
        return ""
    return pd.Series([one(i, k, d) for i, k, d in zip(ev["item_ids"], ev["kind"], ev["detail"], strict=True)],
                     index=ev.index, dtype=object)


#: Columns of ratings.csv, in order: one row per metric score of a rated item.
RATINGS_CSV_COLUMNS = ["evaluatorName", "sessionId", "task", "questionIndex", "itemId", "metric", "score",
                       "metricComment", "itemComment", "timeSpentMs", "createdAt", "externalId", "sessionStatus"]


def ratings_csv(frames: Frames) -> str:
    """All rubric scores as CSV: one row per (rated item, metric), with the evaluator's name and session status.

    Comments are columns, never rows: ``metricComment`` is a comment given on
    that metric, ``itemComment`` the general comment on the rated item (the
    store keeps it as a row with metric ``comment`` and no score; here it is
    repeated on every metric row of its item, so no row has an empty score to
    average by mistake). ``score``, ``questionIndex`` and ``timeSpentMs`` are
    integers; text cells pass :func:`evalkit.text.csv_safe`.
    Needs every stored column: frames from ``load_frames(store, full=True)``.
    """
    _require_columns(frames.ratings, RATING_COLUMNS, "ratings")
    rt = frames.ratings
    key = ["session_id", "task", "question_index"]
    is_comment = (rt["metric"] == "comment").to_numpy()
    general = (rt.loc[is_comment, [*key, "comment"]].drop_duplicates(key)
               .rename(columns={"comment": "item_comment"}))
    scores = rt.loc[~is_comment].merge(general, on=key, how="left")
    scores = scores.merge(frames.sessions[["session_id", "evaluator_name", "external_id", "status"]],
                          on="session_id", how="left")
    columns = {"evaluator_name": "evaluatorName", "session_id": "sessionId", "task": "task",
               "question_index": "questionIndex", "item_id": "itemId", "metric": "metric", "score": "score",
               "comment": "metricComment", "item_comment": "itemComment", "time_spent_ms": "timeSpentMs",
               "created_at": "createdAt", "external_id": "externalId", "status": "sessionStatus"}
    out = _whole_numbers(scores[list(columns)].rename(columns=columns), ["questionIndex", "score", "timeSpentMs"])
    return csv_safe(out[RATINGS_CSV_COLUMNS]).to_csv(index=False)
