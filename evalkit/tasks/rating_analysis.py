"""Analysis of ``rating`` tasks (:mod:`evalkit.tasks.rating`): rubric scores of items, per metric.

Mean scores (MOS) with Student t intervals clipped to the metric's scale, optionally familiarity-weighted,
score distributions and ordinal Krippendorff's alpha over items with two or more raters. A rating task is
analysed from the rating rows (:attr:`evalkit.analysis.TaskContext.ratings`), not the evaluations. Imported
only when a report is made (through :func:`evalkit.tasks.results`).

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .. import stats
from ..resultkit import (
    RATING_COLUMNS,
    SCORE_ROW_COLUMNS,
    Block,
    Frames,
    Options,
    ResultDefaults,
    TaskContext,
    alpha_notes,
    alpha_text,
    code_of,
    column_codes,
    fmt_num,
    mos_note,
    mos_table,
    rated_item_keys,
    ratings_text,
    scale_text,
    take_codes,
    tasks_of,
)
from ..text import join_title

__all__ = ["RatingResult", "rating_chart", "rating_results", "results", "score_rows"]


@dataclass
class RatingResult(ResultDefaults):
    """Everything about one rating task."""

    task: str
    title: str
    mos: pd.DataFrame  # metric, label, mean, low, high, sd, n, weighted_mean, scale, clipped
    distribution: pd.DataFrame  # metric, score, count
    agreement: pd.DataFrame  # metric, alpha, items, raters, note (why alpha is undefined; "" when defined)
    n_item_ratings: int  # rated items counted per evaluator: (evaluator, question) pairs
    n_items: int  # distinct items rated by anyone
    options: Options = field(default_factory=Options)
    kind: str = "rating"
    #: the results page shows rating tasks in their own tab
    tab: ClassVar[str] = "Ratings"

    @property
    def n_answers(self) -> int:
        """The rated items counted per evaluator (:attr:`n_item_ratings`)."""
        return self.n_item_ratings

    def describe(self) -> str:
        return "rating"

    def headings(self) -> tuple[str, str]:
        """(the results page's heading, the Markdown report's)."""
        counted = ratings_text(self.n_item_ratings, self.n_items)
        return f"{self.title} · {counted}", f"{self.title} (`{self.task}`, rating): {counted}"

    def blocks(self) -> list[Block]:
        shown = mos_table(self.mos)
        page_columns = (["label", "weighted_mean", "mean", "95% CI", "sd", "n"] if self.options.familiarity_weighted
                        else ["label", "mean", "95% CI", "sd", "n", "weighted_mean"])
        dist = self.distribution.pivot_table(index="label", columns="score", values="count", aggfunc="sum",
                                             sort=False).reset_index() if not self.distribution.empty \
            else self.distribution
        agree = self.agreement
        return [
            Block("", shown[page_columns], mos_note(self.mos), shown="page"),
            Block("Mean scores (MOS)", shown[["label", "mean", "95% CI", "sd", "n", "weighted_mean"]],
                  mos_note(self.mos), shown="report"),
            Block("", None, chart=f"rating:{self.task}", shown="page"),
            Block("Score distribution", dist, shown="report"),
            Block("", agree.assign(alpha=agree["alpha"].map(lambda v: fmt_num(v, 3)))[
                ["label", "alpha", "items", "raters"]], alpha_notes(agree),
                page_heading="**Krippendorff's alpha** (ordinal) over items with two or more raters", shown="page"),
            Block("Krippendorff's alpha (ordinal), items with two or more raters", agree.assign(
                alpha=[alpha_text(a, note) for a, note in zip(agree["alpha"], agree["note"], strict=True)])[
                ["label", "alpha", "items", "raters"]], shown="report")]

    def main_rows(self) -> list[dict[str, Any]]:
        weighted = self.options.familiarity_weighted
        scale = scale_text(self.mos["scale"]) if len(self.mos) else "1–5"
        section = join_title(self.title, f"mean score ({scale})" + (", familiarity-weighted" if weighted else ""))
        return [{"section": section, "label": r.label, "detail": "", "value": r.weighted_mean if weighted else r.mean,
                 "low": r.low, "high": r.high, "p_value": math.nan, "n": r.n,
                 "interval": f"Student t, clipped to 1–{r.scale}" if r.clipped else "Student t", "kind": "num"}
                for r in self.mos.itertuples()]

    def charts(self) -> dict[str, Any]:
        return {f"rating:{self.task}": rating_chart(self)} if not self.distribution.empty else {}


def rating_chart(result: RatingResult) -> Any:
    """Score distribution per metric (counts of 1..5), metrics in rubric order, horizontal tick labels; two
    panels a row, so that a rubric of four metrics fits a phone's screen (390 px) as well as a wide page."""
    import altair as alt

    from ..resultkit import BLUE

    order = list(dict.fromkeys(result.distribution["label"]))  # the rubric's order (``RatingResult.mos``)
    return alt.Chart(result.distribution).mark_bar(color=BLUE).encode(
        x=alt.X("score:O", title="score", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("count:Q", title="ratings", axis=alt.Axis(tickMinStep=1)),
        facet=alt.Facet("label:N", title=None, sort=order, columns=2, header=alt.Header(labelFontSize=13)),
        tooltip=["label:N", "score:O", "count:Q"],
    ).properties(width=130, height=130, title=_lines(join_title(result.title, "score distributions")))


def _lines(title: str, width: int = 40) -> str | list[str]:
    """A chart title as Vega-Lite lines: a long one broken after its last ": ", so that it is no wider than a chart
    of two small panels (a wider title would widen the chart past a phone's screen)."""
    head, sep, tail = title.rpartition(": ")
    return [head + ":", tail] if len(title) > width and sep else title


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> RatingResult:
    """The task's results from the context's rating rows (:func:`rating_results`; the answers ``ev`` hold none)."""
    ratings = context.ratings if context.ratings is not None else pd.DataFrame(columns=RATING_COLUMNS)
    options = context.options
    return replace(rating_results(ratings, task, options.confidence, options.familiarity_weighted), options=options)


def rating_results(ratings: pd.DataFrame, task: Mapping[str, Any], confidence: float = 0.95,
                   familiarity_weighted: bool = False) -> RatingResult:
    """MOS with CI per metric, score distributions, ordinal Krippendorff's alpha, familiarity weighting.

    The familiarity weight of a score is the evaluator's familiarity rating of
    the same item (same session and question). Agreement counts an evaluator's
    first score of an item once, over items scored by at least two evaluators;
    where alpha is undefined, ``agreement.note`` says why. The t interval of a
    mean is clipped to the metric's scale 1..``scale`` (from the task
    description; 5 when unknown, widened to any stored score outside it), and
    ``mos.clipped`` marks the intervals that were cut (see
    :func:`evalkit.stats.mean_ci`). The general comment the store keeps as a
    row with metric ``comment`` is never a metric, even with a score.
    """
    in_task = (ratings["task"] == task["id"]).to_numpy()
    rated = ratings.loc[in_task, ["session_id", "task", "question_index", "item_id"]]
    rows = ratings.loc[in_task & ratings["score"].notna().to_numpy() & (ratings["metric"] != "comment").to_numpy(),
                       ["session_id", "question_index", "item_id", "metric", "score"]]
    labels = {m["id"]: m.get("label", m["id"]) for m in task.get("metrics", [])}
    scales = {m["id"]: int(m["scale"]) for m in task.get("metrics", []) if m.get("scale")}
    metric, metric_names = column_codes(rows["metric"])
    present = {str(x) for x in metric_names[np.unique(metric[metric >= 0])]}
    metrics = list(labels) or sorted(present - {"familiarity"})
    session, _ = column_codes(rows["session_id"])
    item, item_names = column_codes(rows["item_id"])
    question = rows["question_index"].to_numpy(dtype=np.int64)
    score = rows["score"].to_numpy(dtype=float)
    span = int(question.max()) + 1 if len(question) else 1
    asked = session * span + question  # one key per (session, question)
    fam = metric == code_of(metric_names, "familiarity")
    fam_keys, fam_first = np.unique(asked[fam], return_index=True)
    fam_index, fam_scores = pd.Index(fam_keys), score[fam][fam_first]
    mos_rows, dist_rows, agree_rows = [], [], []
    for name in metrics:
        here = metric == code_of(metric_names, name)
        scores = score[here]
        scale = scales.get(name, 5)
        low_end = min(1.0, float(scores.min())) if len(scores) else 1.0
        high_end = max(float(scale), float(scores.max())) if len(scores) else float(scale)
        m = stats.mean_ci(scores, confidence, bounds=(low_end, high_end))
        weighted = math.nan
        if len(scores) and len(fam_keys):
            w = take_codes(fam_scores, fam_index.get_indexer(asked[here]).astype(np.int64), np.nan)
            ok = ~np.isnan(w)
            if ok.any() and w[ok].sum() > 0:
                weighted = float(np.average(scores[ok], weights=w[ok]))
        label = labels.get(name, name)
        mos_rows.append({"metric": name, "label": label, "mean": m.mean, "low": m.low, "high": m.high, "sd": m.sd,
                         "n": m.n, "weighted_mean": weighted, "scale": scale, "clipped": m.clipped})
        counts = pd.Series(scores.astype(int)).value_counts()
        top = max([5, *counts.index.tolist()]) if len(counts) else 5
        for value in range(1, top + 1):
            dist_rows.append({"metric": name, "label": label, "score": value, "count": int(counts.get(value, 0))})
        alpha, n_items, n_raters = _ordinal_alpha(session[here], item[here], scores, len(item_names))
        agree_rows.append({"metric": name, "label": label, "alpha": alpha, "items": n_items, "raters": n_raters,
                           "note": _alpha_note(alpha, n_items, len(scores))})
    mos = pd.DataFrame(mos_rows, columns=["metric", "label", "mean", "low", "high", "sd", "n", "weighted_mean",
                                          "scale", "clipped"])
    if familiarity_weighted:
        mos = mos.assign(shown_mean=mos["weighted_mean"])
    return RatingResult(
        task=task["id"], title=task.get("title", task["id"]), mos=mos,
        distribution=pd.DataFrame(dist_rows, columns=["metric", "label", "score", "count"]),
        agreement=pd.DataFrame(agree_rows, columns=["metric", "label", "alpha", "items", "raters", "note"]),
        n_item_ratings=len(np.unique(rated_item_keys(rated, column_codes(rated["session_id"])[0]))),
        n_items=int(rated["item_id"].nunique()),
    )


def _alpha_note(alpha: float, items: int, scores: int) -> str:
    """Why Krippendorff's alpha is undefined ("" when it is defined)."""
    if not math.isnan(alpha):
        return ""
    if scores == 0:
        return "no scores yet"
    if items == 0:
        return "needs items rated by two or more evaluators"
    return "undefined: every score on the items rated twice or more is the same (no variation)"


def _ordinal_alpha(session: np.ndarray, item: np.ndarray, score: np.ndarray, n_items: int
                   ) -> tuple[float, int, int]:
    """Ordinal Krippendorff's alpha over items with >= 2 evaluators: (alpha, items, evaluators).

    An evaluator's first score of an item counts, once. Alpha depends only on
    the values each item received, not on who gave them, so the matrix handed
    to ``krippendorff`` stacks each item's values in one column (rows = the
    most values any item has) instead of evaluators x items, which for 20,000
    evaluators would be mostly empty.
    """
    key = session * max(n_items, 1) + item
    _, first = np.unique(key, return_index=True)  # first score per (evaluator, item)
    first = np.sort(first)
    per_item = np.bincount(item[first], minlength=n_items)
    multi = per_item >= 2
    if not multi.any():
        return math.nan, 0, 0
    chosen = first[multi[item[first]]]
    raters = len(np.unique(session[chosen]))
    column = np.cumsum(multi) - 1  # item code -> column among the chosen items
    order = chosen[np.argsort(item[chosen], kind="stable")]
    cols = column[item[order]]
    starts = np.searchsorted(cols, np.arange(int(multi.sum())))
    rows = np.arange(len(order)) - starts[cols]
    matrix = np.full((int(per_item[multi].max()), int(multi.sum())), np.nan)
    matrix[rows, cols] = score[order]
    return stats.krippendorff_alpha(matrix, "ordinal"), int(multi.sum()), raters


def score_rows(frames: Frames) -> pd.DataFrame:
    """Every rubric score, one row per (rated item, metric), in the columns of
    :data:`evalkit.export.SCORE_ROW_COLUMNS` (what :func:`evalkit.export.scores_csv` writes): the metric as the
    ``scale`` (the evaluator's ``familiarity`` with the item too), its range 1..n as described (empty where the
    description does not say it, as for familiarity), no system or position (a rating task rates one system's
    output per item). The general comment (metric ``comment``) is not a score and is left out, as is a metric
    left without a score. Every stored rating, every session (the caller picks)."""
    rt = frames.ratings
    rows = rt.loc[(rt["metric"].astype(object) != "comment").to_numpy() & rt["score"].notna().to_numpy()]
    if not len(rows):
        return pd.DataFrame(columns=SCORE_ROW_COLUMNS)
    tops = {(t["id"], m["id"]): float(m["scale"]) for t in tasks_of(frames) if t.get("kind") == "rating"
            for m in t.get("metrics", []) if m.get("scale")}
    task, metric = rows["task"].astype(object), rows["metric"].astype(object)
    scale_max = [tops.get((t, m), float("nan")) for t, m in zip(task, metric, strict=True)]
    out = pd.DataFrame({
        "session_id": rows["session_id"].astype(object).to_numpy(), "task": task.to_numpy(), "kind": "rating",
        "question_index": rows["question_index"].to_numpy(), "item_id": rows["item_id"].astype(object).to_numpy(),
        "system": None, "position": None, "scale": metric.to_numpy(), "score": rows["score"].to_numpy(dtype=float),
        "scale_min": [1.0 if not math.isnan(top) else float("nan") for top in scale_max], "scale_max": scale_max,
        "time_spent_ms": rows["time_spent_ms"].to_numpy(),
        "created_at": rows["created_at"].astype(object).to_numpy() if "created_at" in rows.columns else None,
        "check": None})
    return out[SCORE_ROW_COLUMNS]
