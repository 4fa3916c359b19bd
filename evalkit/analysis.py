"""Stored responses -> result tables. Shared by the results page and ``python -m evalkit report``.

Every function here is pure: DataFrames in, DataFrames out. :func:`load_frames`
reads the store once; :func:`analyse` computes everything the results page
shows into a :class:`Report`.

Which sessions count: only *included* ones (status ``active`` or
``completed``; ``excluded`` and ``trashed`` never count). ``completed_only``
narrows that to sessions that reached the end.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import stats
from .storage import Store

__all__ = [
    "CERA_COLUMNS",
    "Frames",
    "Options",
    "Report",
    "analyse",
    "evaluations_csv",
    "included_sessions",
    "load_frames",
    "pairwise_results",
    "quality_signals",
    "rating_results",
    "ratings_csv",
    "tasks_of",
    "triplet_results",
]

#: Export names of the original CERA schema (its analysis scripts read these), then ours.
CERA_COLUMNS = {
    "evaluator_name": "evaluatorName", "session_id": "sessionId", "task": "task",
    "question_index": "questionIndex", "response": "response", "review_source": "reviewSource",
    "domain": "domain", "time_spent_ms": "timeSpentMs", "left_source": "leftSource",
    "right_source": "rightSource", "created_at": "createdAt",
}
EXTRA_COLUMNS = {
    "kind": "kind", "slot": "slot", "sources": "sources", "item_ids": "itemIds", "matched": "matched",
    "detail": "detail", "external_id": "externalId", "status": "sessionStatus", "study_version": "studyVersion",
}

SESSION_COLUMNS = ["session_id", "evaluator_name", "external_id", "seed", "study_version", "started_at",
                   "completed_at", "user_agent", "status", "completion_code", "meta"]
EVALUATION_COLUMNS = ["id", "session_id", "task", "kind", "question_index", "slot", "response", "review_source",
                      "domain", "time_spent_ms", "left_source", "right_source", "sources", "item_ids", "matched",
                      "detail", "created_at"]
RATING_COLUMNS = ["id", "session_id", "task", "question_index", "item_id", "metric", "score", "comment",
                  "time_spent_ms", "created_at"]


@dataclass(frozen=True)
class Options:
    """Switches of the analysis (the results page's controls and the CLI's flags)."""

    completed_only: bool = False
    fast_ms: int = 2000  # an answer faster than this is flagged as too fast to have read the texts
    familiarity_weighted: bool = False
    confidence: float = 0.95


@dataclass
class Frames:
    """The store's tables as DataFrames, plus the registered task descriptions."""

    sessions: pd.DataFrame
    evaluations: pd.DataFrame
    ratings: pd.DataFrame
    studies: dict[str, dict[str, Any]] = field(default_factory=dict)


def load_frames(store: Store) -> Frames:
    """Read sessions, evaluations, ratings and the task descriptions from the store."""
    return Frames(
        sessions=pd.DataFrame(store.table("sessions"), columns=SESSION_COLUMNS),
        evaluations=pd.DataFrame(store.table("evaluations"), columns=EVALUATION_COLUMNS),
        ratings=pd.DataFrame(store.table("ratings"), columns=RATING_COLUMNS),
        studies=store.studies(),
    )


def included_sessions(sessions: pd.DataFrame, completed_only: bool = False) -> pd.DataFrame:
    """Sessions that count: not excluded, not trashed; with ``completed_only`` also finished."""
    keep = sessions["status"].isin(["active", "completed"])
    if completed_only:
        keep &= sessions["completed_at"].notna()
    return sessions[keep]


def tasks_of(frames: Frames) -> list[dict[str, Any]]:
    """Task descriptions: the newest registered study's, plus any task seen only in the data."""
    tasks: dict[str, dict[str, Any]] = {}
    for summary in frames.studies.values():
        for t in summary.get("tasks", []):
            tasks[t["id"]] = t
    ev = frames.evaluations
    for task, kind in ev[["task", "kind"]].drop_duplicates().itertuples(index=False):
        if task not in tasks:
            tasks[task] = {"id": task, "kind": kind or "triplet", "title": task}
    for task in frames.ratings["task"].drop_duplicates():
        if task not in tasks:
            tasks[task] = {"id": task, "kind": "rating", "title": task, "metrics": []}
    return list(tasks.values())


def _interval_row(successes: int, n: int, p0: float, confidence: float) -> dict[str, Any]:
    r = stats.win_rate(int(successes), int(n), p0=p0, confidence=confidence)
    return {"n": r.n, "rate": r.rate, "low": r.low, "high": r.high, "p_value": r.p_value}


# ----------------------------------------------------------------------------- triplets


@dataclass
class TripletResult:
    """Everything about one triplet task."""

    task: str
    title: str
    target: str | None
    sources: list[str]
    selection: pd.DataFrame  # source, role, picked, n, rate, low, high, p_value (vs 1/k)
    turing: pd.DataFrame  # generated sources: fooled, n, rate, low, high, p_value
    accuracy: dict[str, Any]  # finding the target: picked, n, rate, low, high, p_value
    kappa: float
    kappa_subjects: int
    kappa_raters: int
    kappa_basis: str  # "identical triplets" (shared) or "question slots" (per-evaluator)
    per_domain: pd.DataFrame  # domain, source, picked, n, rate, low, high
    unmatched: int
    n_answers: int


def triplet_results(ev: pd.DataFrame, task: Mapping[str, Any], confidence: float = 0.95) -> TripletResult:
    """Selection rates, the Turing view, accuracy, Fleiss' kappa (CERA style) and a per-domain breakdown."""
    rows = ev[ev["task"] == task["id"]]
    sources = list(task.get("sources") or sorted(set(rows["review_source"].dropna())))
    target = task.get("target")
    k = max(len(sources), 2)
    n = len(rows)
    picked = rows["review_source"].value_counts()
    selection = pd.DataFrame([
        {"source": s, "role": "target" if s == target else "generated", "picked": int(picked.get(s, 0)),
         **_interval_row(int(picked.get(s, 0)), n, 1 / k, confidence)} for s in sources
    ], columns=["source", "role", "picked", "n", "rate", "low", "high", "p_value"])
    turing = selection[selection["role"] == "generated"].rename(columns={"picked": "fooled"}).drop(columns="role")
    accuracy = {"picked": int(picked.get(target, 0)), **_interval_row(int(picked.get(target, 0)), n, 1 / k,
                                                                      confidence)} if target else {}
    # Fleiss' kappa as CERA computes it: subjects = question slots, categories = the source picked,
    # raters = evaluators. In "shared" selection a slot is the very same triplet for everyone.
    counts = pd.crosstab(rows["slot"], rows["review_source"]) if n else pd.DataFrame()
    kappa = stats.fleiss_kappa(counts.to_numpy()) if n else math.nan
    per_domain = []
    for domain, group in rows.groupby("domain", sort=True):
        dn = len(group)
        dpicked = group["review_source"].value_counts()
        for s in sources:
            per_domain.append({"domain": domain, "source": s, "picked": int(dpicked.get(s, 0)),
                               **_interval_row(int(dpicked.get(s, 0)), dn, 1 / k, confidence)})
    per_domain_df = pd.DataFrame(per_domain, columns=["domain", "source", "picked", "n", "rate", "low", "high",
                                                      "p_value"])
    return TripletResult(
        task=task["id"], title=task.get("title", task["id"]), target=target, sources=sources, selection=selection,
        turing=turing.reset_index(drop=True),
        accuracy=accuracy, kappa=kappa, kappa_subjects=int(counts.shape[0]) if n else 0,
        kappa_raters=int(rows["session_id"].nunique()),
        kappa_basis="identical triplets" if task.get("selection") == "shared" else "question slots",
        per_domain=per_domain_df, unmatched=int((rows["matched"] == 0).sum()), n_answers=n,
    )


# ----------------------------------------------------------------------------- pairwise


def _pair_outcomes(rows: pd.DataFrame) -> pd.DataFrame:
    """left, right, winner side (left / right / tie) and, for sliders, the signed value per answer."""
    slider = rows["detail"].fillna("").str.contains('"button"')
    value = pd.to_numeric(rows["response"].where(slider), errors="coerce")
    side = np.where(slider, np.where(value < 0, "left", np.where(value > 0, "right", "tie")),
                    np.where(rows["response"] == "A", "left", np.where(rows["response"] == "B", "right", "tie")))
    outcome = pd.Series(side, index=rows.index)
    button = rows["detail"].fillna("").str.extract(r'"button":\s*"(\w+)"')[0]
    return pd.DataFrame({"left": rows["left_source"], "right": rows["right_source"], "side": outcome,
                         "slider": slider, "value": value, "button": button, "session_id": rows["session_id"]})


@dataclass
class PairwiseResult:
    """Everything about one pairwise task."""

    task: str
    title: str
    response: str
    win_rates: pd.DataFrame  # pair, source, wins, ties, n, rate, low, high, p_value
    slider: pd.DataFrame  # pair, favoured (positive = this source better), mean, low, high, sd, n, draws
    power: pd.DataFrame  # pair, source, rate, n, needed_total, further
    bradley_terry: pd.DataFrame  # source, log_strength
    records: pd.DataFrame  # a, b, outcome ("a" / "b" / "tie"): the comparisons Bradley–Terry is fitted on
    n_answers: int


def pairwise_results(ev: pd.DataFrame, task: Mapping[str, Any], confidence: float = 0.95,
                     alpha: float = 0.05, power: float = 0.8) -> PairwiseResult:
    """Win rates per pair type (from the stored left/right sources), slider summaries, power and BT."""
    rows = ev[ev["task"] == task["id"]]
    out = _pair_outcomes(rows)
    win_rows, slider_rows, power_rows = [], [], []
    records = pd.DataFrame(columns=["a", "b", "outcome"])
    if len(out):
        a_side = out["left"].where(out["left"] <= out["right"], out["right"])
        b_side = out["right"].where(out["left"] <= out["right"], out["left"])
        winner = np.where(out["side"] == "left", out["left"], np.where(out["side"] == "right", out["right"], None))
        frame = pd.DataFrame({"a": a_side, "b": b_side, "winner": winner, "side": out["side"],
                              "slider": out["slider"], "value": out["value"], "left": out["left"],
                              "right": out["right"], "button": out["button"]})
        for (a, b), group in frame.groupby(["a", "b"], sort=True):
            pair = f"{a} vs {b}"
            decided = group[group["side"] != "tie"]
            ties = int((group["side"] == "tie").sum())
            for source in (a, b):
                wins = int((decided["winner"] == source).sum())
                win_rows.append({"pair": pair, "source": source, "wins": wins, "ties": ties,
                                 **_interval_row(wins, len(decided), 0.5, confidence)})
            wins_a = int((decided["winner"] == a).sum())
            rate = wins_a / len(decided) if len(decided) else math.nan
            needed: float | None = None
            if len(decided) and rate != 0.5:
                needed = stats.sample_size_two_proportions(rate, 0.5, alpha=alpha, power=power)
            power_rows.append({"pair": pair, "source": a, "rate": rate, "n": len(decided),
                               "needed_total": needed,
                               "further": None if needed is None else max(0, needed - len(decided))})
            sl = group[group["slider"]]
            if len(sl):
                # orient: positive = the pair's first source (a) better
                oriented = np.where(sl["left"] == a, -sl["value"], sl["value"])
                m = stats.mean_ci(oriented.astype(float), confidence)
                zero = sl["value"] == 0
                slider_rows.append({"pair": pair, "favoured": a, "mean": m.mean, "low": m.low, "high": m.high,
                                    "sd": m.sd, "n": m.n,
                                    "positive_draws": int((zero & (sl["button"] == "accept")).sum()),
                                    "negative_draws": int((zero & (sl["button"] == "reject")).sum())})
        outcome = np.where(frame["side"] == "left", "a", np.where(frame["side"] == "right", "b", "tie"))
        records = pd.DataFrame({"a": frame["left"].to_numpy(), "b": frame["right"].to_numpy(), "outcome": outcome})
    bt = stats.bradley_terry(records) if len(records) else {}
    return PairwiseResult(
        task=task["id"], title=task.get("title", task["id"]), response=task.get("response", "choice"),
        win_rates=pd.DataFrame(win_rows, columns=["pair", "source", "wins", "ties", "n", "rate", "low", "high",
                                                  "p_value"]),
        slider=pd.DataFrame(slider_rows, columns=["pair", "favoured", "mean", "low", "high", "sd", "n",
                                                  "positive_draws", "negative_draws"]),
        power=pd.DataFrame(power_rows, columns=["pair", "source", "rate", "n", "needed_total", "further"]),
        bradley_terry=_bt_frame(bt), records=records, n_answers=len(rows),
    )


def _bt_frame(bt: Mapping[str, float]) -> pd.DataFrame:
    frame = pd.DataFrame({"source": list(bt), "log_strength": list(bt.values())},
                         columns=["source", "log_strength"])
    return frame.sort_values("log_strength", ascending=False, kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------- ratings


@dataclass
class RatingResult:
    """Everything about one rating task."""

    task: str
    title: str
    mos: pd.DataFrame  # metric, label, mean, low, high, sd, n, weighted_mean
    distribution: pd.DataFrame  # metric, score, count
    agreement: pd.DataFrame  # metric, alpha, items, raters
    n_items_rated: int


def rating_results(ratings: pd.DataFrame, task: Mapping[str, Any], confidence: float = 0.95,
                   familiarity_weighted: bool = False) -> RatingResult:
    """MOS with CI per metric, score distributions, ordinal Krippendorff's alpha, familiarity weighting."""
    rows = ratings[(ratings["task"] == task["id"]) & ratings["score"].notna()]
    labels = {m["id"]: m.get("label", m["id"]) for m in task.get("metrics", [])}
    metrics = list(labels) or sorted(set(rows["metric"]) - {"familiarity"})
    fam = rows[rows["metric"] == "familiarity"][["session_id", "question_index", "score"]].rename(
        columns={"score": "familiarity"})
    mos_rows, dist_rows, agree_rows = [], [], []
    for metric in metrics:
        m_rows = rows[rows["metric"] == metric]
        scores = m_rows["score"].astype(float)
        m = stats.mean_ci(scores.to_numpy(), confidence)
        weighted = math.nan
        if len(m_rows) and len(fam):
            w = m_rows[["session_id", "question_index"]].merge(
                fam, on=["session_id", "question_index"], how="left")["familiarity"].to_numpy(dtype=float)
            ok = ~np.isnan(w)
            if ok.any() and w[ok].sum() > 0:
                weighted = float(np.average(scores.to_numpy()[ok], weights=w[ok]))
        mos_rows.append({"metric": metric, "label": labels.get(metric, metric), "mean": m.mean, "low": m.low,
                         "high": m.high, "sd": m.sd, "n": m.n, "weighted_mean": weighted})
        counts = scores.astype(int).value_counts()
        top = max([5, *counts.index.tolist()]) if len(counts) else 5
        for score in range(1, top + 1):
            dist_rows.append({"metric": metric, "label": labels.get(metric, metric), "score": score,
                              "count": int(counts.get(score, 0))})
        table = m_rows.pivot_table(index="session_id", columns="item_id", values="score", aggfunc="first")
        multi = table.columns[table.notna().sum(axis=0) >= 2]
        alpha = math.nan
        if len(multi):
            alpha = stats.krippendorff_alpha(table[multi].to_numpy(dtype=float), "ordinal")
        agree_rows.append({"metric": metric, "label": labels.get(metric, metric), "alpha": alpha,
                           "items": len(multi), "raters": int(table[multi].notna().any(axis=1).sum())
                           if len(multi) else 0})
    mos = pd.DataFrame(mos_rows, columns=["metric", "label", "mean", "low", "high", "sd", "n", "weighted_mean"])
    if familiarity_weighted:
        mos = mos.assign(shown_mean=mos["weighted_mean"])
    return RatingResult(
        task=task["id"], title=task.get("title", task["id"]), mos=mos,
        distribution=pd.DataFrame(dist_rows, columns=["metric", "label", "score", "count"]),
        agreement=pd.DataFrame(agree_rows, columns=["metric", "label", "alpha", "items", "raters"]),
        n_items_rated=int(rows.drop_duplicates(["session_id", "question_index"]).shape[0]),
    )


# ----------------------------------------------------------------------------- quality signals


def quality_signals(sessions: pd.DataFrame, ev: pd.DataFrame, ratings: pd.DataFrame,
                    fast_ms: int = 2000) -> pd.DataFrame:
    """Per evaluator: completion, time, too-fast answers, straight-lining and agreement with the majority.

    Agreement compares the source an evaluator picked on a question slot with the
    majority of the *other* evaluators on that slot (leave-one-out), over
    forced-choice answers; slots where the others tie are skipped.
    """
    ev = ev.sort_values(["session_id", "task", "id"])
    times = pd.concat([ev[["session_id", "time_spent_ms"]],
                       ratings.drop_duplicates(["session_id", "task", "question_index"])[
                           ["session_id", "time_spent_ms"]]])
    per = times.groupby("session_id")["time_spent_ms"]
    total_s = per.sum(min_count=1) / 1000
    median_s = ev.groupby("session_id")["time_spent_ms"].median() / 1000
    fast = (ev["time_spent_ms"] < fast_ms).groupby(ev["session_id"]).sum()
    answers = ev.groupby("session_id").size()
    # straight-lining: the longest run of identical responses within one task (vectorised run lengths)
    key = ev["session_id"] + "\x1f" + ev["task"]
    run_id = ((ev["response"] != ev["response"].shift()) | (key != key.shift())).cumsum()
    runs = run_id.map(run_id.value_counts()).groupby(ev["session_id"]).max()
    # leave-one-out majority on (task, slot), over answers with a picked source
    picks = ev[ev["review_source"].notna()][["session_id", "task", "slot", "review_source"]]
    agree = pd.Series(dtype=float)
    if len(picks):
        counts = picks.groupby(["task", "slot", "review_source"]).size().rename("count").reset_index()
        merged = picks.merge(counts, on=["task", "slot"], suffixes=("", "_other"))
        merged["count"] -= (merged["review_source"] == merged["review_source_other"]).astype(int)
        slot_key = ["session_id", "task", "slot"]
        top = merged.groupby(slot_key)["count"].transform("max")
        leaders = merged[(merged["count"] == top) & (top > 0)]
        n_leaders = leaders.groupby(slot_key)["review_source_other"].transform("nunique")
        unique = leaders[n_leaders == 1]
        agree = (unique["review_source"] == unique["review_source_other"]).groupby(unique["session_id"]).mean()
    table = sessions[["session_id", "evaluator_name", "external_id", "status", "started_at",
                      "completed_at"]].copy()
    table["completed"] = table["completed_at"].notna()
    table["answers"] = table["session_id"].map(answers).fillna(0).astype(int)
    table["total_time_s"] = table["session_id"].map(total_s)
    table["median_time_s"] = table["session_id"].map(median_s)
    table["fast_answers"] = table["session_id"].map(fast).fillna(0).astype(int)
    table["longest_same_run"] = table["session_id"].map(runs).fillna(0).astype(int)
    table["majority_agreement"] = table["session_id"].map(agree)
    return table.reset_index(drop=True)


# ----------------------------------------------------------------------------- the whole report


@dataclass
class Report:
    """Everything the results page and ``evalkit report`` show."""

    options: Options
    n_sessions: int
    n_completed: int
    n_answers: int
    n_ratings: int
    triplets: list[TripletResult]
    pairwise: list[PairwiseResult]
    bradley_terry_all: pd.DataFrame
    ratings: list[RatingResult]
    quality: pd.DataFrame  # all sessions, any status (the admin table)
    answers: pd.DataFrame  # the included answers (for timelines and histograms)
    title: str = ""


def analyse(frames: Frames, options: Options | None = None) -> Report:
    """Compute every result table from the stored rows."""
    options = options or Options()
    included = included_sessions(frames.sessions, options.completed_only)
    ids = set(included["session_id"])
    ev = frames.evaluations[frames.evaluations["session_id"].isin(ids)]
    rt = frames.ratings[frames.ratings["session_id"].isin(ids)]
    tasks = tasks_of(frames)
    triplets = [triplet_results(ev, t, options.confidence) for t in tasks if t["kind"] == "triplet"]
    pairwise = [pairwise_results(ev, t, options.confidence) for t in tasks if t["kind"] == "pairwise"]
    all_records = pd.concat([p.records for p in pairwise], ignore_index=True) if pairwise else pd.DataFrame()
    rating = [rating_results(rt, t, options.confidence, options.familiarity_weighted)
              for t in tasks if t["kind"] == "rating"]
    titles = [s.get("title", "") for s in frames.studies.values()]
    answers = ev.merge(frames.sessions[["session_id", "started_at"]], on="session_id", how="left")
    return Report(
        options=options, n_sessions=len(included), n_completed=int(included["completed_at"].notna().sum()),
        n_answers=len(ev), n_ratings=int(rt.drop_duplicates(["session_id", "task", "question_index"]).shape[0]),
        triplets=triplets, pairwise=pairwise,
        bradley_terry_all=_bt_frame(stats.bradley_terry(all_records)) if len(all_records) else _bt_frame({}),
        ratings=rating, quality=quality_signals(frames.sessions, frames.evaluations, frames.ratings,
                                                options.fast_ms),
        answers=answers, title=titles[-1] if titles else "",
    )


# ----------------------------------------------------------------------------- exports


def evaluations_csv(frames: Frames) -> str:
    """All evaluations as CSV: the CERA column names first, then evalkit's own columns."""
    ev = frames.evaluations.merge(
        frames.sessions[["session_id", "evaluator_name", "external_id", "status", "study_version"]],
        on="session_id", how="left")
    columns = {**CERA_COLUMNS, **EXTRA_COLUMNS}
    out = ev[list(columns)].rename(columns=columns)
    return out.to_csv(index=False)


def ratings_csv(frames: Frames) -> str:
    """All rubric ratings as CSV (one row per metric), with the evaluator's name and session status."""
    rt = frames.ratings.merge(frames.sessions[["session_id", "evaluator_name", "external_id", "status"]],
                              on="session_id", how="left")
    columns = {"evaluator_name": "evaluatorName", "session_id": "sessionId", "task": "task",
               "question_index": "questionIndex", "item_id": "itemId", "metric": "metric", "score": "score",
               "comment": "comment", "time_spent_ms": "timeSpentMs", "created_at": "createdAt",
               "external_id": "externalId", "status": "sessionStatus"}
    return rt[list(columns)].rename(columns=columns).to_csv(index=False)
