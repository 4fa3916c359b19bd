"""Analysis of ``score`` tasks (:mod:`evalkit.tasks.score`): absolute scores of systems' outputs on Likert or
slider scales.

Each answer stores ``{"scores": {scale: [value per output, display order]}}`` and the systems shown in
display order (``sources``), so one score is (answer, position): its system is ``sources[position]``, its
item the answer's item, its evaluator the answer's session. Everything below works on those columns as
integer codes (``np.bincount``), never row by row; the score JSON is parsed in bulk
(:func:`evalkit.analysis.score_values`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..analysis import Block, ResultDefaults, TaskContext, _codes, item_codes, json_values, score_values
from ..export import fmt_ci, fmt_num, fmt_p
from ..text import join_title
from .items_analysis import (
    CORRELATION_NOTE,
    correlate,
    correlation_display,
    correlation_rows,
    count_text,
    judged_pairs,
    rows_of,
)

__all__ = ["ScoreResult", "results"]

MEANS_NOTE = (
    "Mean with a Student (1908) t interval, clipped to the scale († where it was cut); median with the "
    "distribution-free interval between two order statistics (Conover 1999, §3.2; scipy's quantile_test), "
    "'–' where n is too small for it.")
Z_NOTE = (
    "Slider scales, WMT convention (Graham et al. 2013, 2017): each evaluator's scores on the scale are "
    "standardised by that evaluator's own mean and SD in this task, then averaged per system (Student t "
    "interval). This takes out how each evaluator uses the slider. An evaluator with one score or no spread "
    "gets z = 0.")
WILCOXON_NOTE = (
    "Wilcoxon (1945) signed-rank test of two systems on the items both were scored on (each item's mean score "
    "per system), two-sided, zero differences dropped; difference = first − second; Hodges–Lehmann (1963) "
    "estimate of the shift; W+ = the sum of the ranks of the positive differences. p-values are not adjusted "
    "for the number of pairs. Pairs needed: a paired test at alpha .05 with power .8 at the observed "
    "standardised difference (normal approximation with Guenther's 1981 correction; the Wilcoxon test needs "
    "about 5% more); '–' where the difference is 0 or the same on every item.")
ALPHA_NOTE = (
    "Krippendorff's (2011) alpha over units = (item, system) judged by two or more evaluators (an evaluator's "
    "first score of a unit), interval metric for sliders, ordinal for Likert scales.")
DIST_NOTE = "Counts per level (Likert) or per tenth of the range (sliders)."


@dataclass
class ScoreResult(ResultDefaults):
    """Everything about one score task."""

    task: str
    title: str
    scales: list[dict[str, Any]]  # id, label, type, min, max
    means: pd.DataFrame  # scale, label, system, mean, low, high, sd, n, clipped, median, median_low, median_high
    zscores: pd.DataFrame  # scale, label, system, mean, low, high, sd, n (slider scales)
    distribution: pd.DataFrame  # scale, label, system, bin (level or range start), bin_label, count
    wilcoxon: pd.DataFrame  # scale, label, pair, first, second, n, mean_diff, median_diff, hodges_lehmann, w_plus,
    #                         p_value, needed, further
    agreement: pd.DataFrame  # scale, label, level, alpha, units, raters, note
    correlations: pd.DataFrame
    correlation_note: str
    outputs_per_question: int
    options: Any
    n_answers: int
    kind: str = "score"

    def describe(self) -> str:
        n = self.outputs_per_question
        return f"score, {'one output' if n == 1 else f'{n} outputs'} per question"

    def blocks(self) -> list[Block]:
        m = self.means
        means = m.assign(mean=m["mean"].map(fmt_num), sd=m["sd"].map(fmt_num), median=m["median"].map(
            lambda v: fmt_num(v, 1)), **{
            "95% CI": [fmt_ci(a, b, pct=False) + (" †" if cut else "")
                       for a, b, cut in zip(m["low"], m["high"], m["clipped"], strict=True)],
            "median 95% CI": [fmt_ci(a, b, pct=False, digits=1) for a, b in zip(m["median_low"], m["median_high"],
                                                                                strict=True)]})
        out = [Block("Mean and median score per system", means[["label", "system", "mean", "95% CI", "sd", "n",
                                                                 "median", "median 95% CI"]].rename(
            columns={"label": "scale"}), MEANS_NOTE, f"score_means:{self.task}" if len(m) else "")]
        if len(self.zscores):
            z = self.zscores
            out.append(Block("Slider scales: mean z-score per system", z.assign(
                mean=z["mean"].map(lambda v: fmt_num(v, 3)), sd=z["sd"].map(lambda v: fmt_num(v, 3)),
                **{"95% CI": [fmt_ci(a, b, pct=False, digits=3) for a, b in zip(z["low"], z["high"], strict=True)]})[
                ["label", "system", "mean", "95% CI", "sd", "n"]].rename(columns={"label": "scale"}), Z_NOTE))
        for scale, d in self.distribution.groupby("scale", sort=False):
            wide = d.pivot_table(index="system", columns="bin_label", values="count", aggfunc="sum",
                                 sort=False).reset_index()
            wide.columns = [str(c) for c in wide.columns]
            first = scale == self.distribution["scale"].iloc[0]
            out.append(Block(f"Score distribution: {d['label'].iloc[0]}", wide, DIST_NOTE if first else "",
                             f"score_dist:{self.task}" if first else ""))
        w = self.wilcoxon
        if len(w):
            out.append(Block("Paired comparisons on the same items (Wilcoxon signed-rank)", w.assign(
                mean_diff=w["mean_diff"].map(fmt_num), median_diff=w["median_diff"].map(fmt_num),
                hodges_lehmann=w["hodges_lehmann"].map(fmt_num), w_plus=w["w_plus"].map(lambda v: fmt_num(v, 1)),
                p=w["p_value"].map(fmt_p), needed=w["needed"].map(count_text), further=w["further"].map(count_text))[
                ["label", "pair", "n", "mean_diff", "median_diff", "hodges_lehmann", "w_plus", "p", "needed",
                 "further"]].rename(columns={"label": "scale", "n": "items", "mean_diff": "mean difference",
                                             "median_diff": "median difference", "hodges_lehmann": "Hodges–Lehmann",
                                             "w_plus": "W+", "needed": "pairs needed", "further": "still needed"}),
                WILCOXON_NOTE))
        a = self.agreement
        notes = " ".join(f"{label}: {note}." for label, note in zip(a["label"], a["note"], strict=True) if note)
        out.append(Block("Krippendorff's alpha per scale", a.assign(alpha=a["alpha"].map(lambda v: fmt_num(v, 3)))[
            ["label", "level", "alpha", "units", "raters"]].rename(columns={"label": "scale"}),
            ALPHA_NOTE + (" " + notes if notes else "")))
        out.append(Block("Correlation with automatic metrics",
                         correlation_display(self.correlations) if len(self.correlations) else None,
                         CORRELATION_NOTE if len(self.correlations) else self.correlation_note))
        return out

    def main_rows(self) -> list[dict[str, Any]]:
        rows = []
        ranges = {s["id"]: (s["min"], s["max"]) for s in self.scales}
        for r in self.means.itertuples():
            low, high = ranges.get(r.scale, (math.nan, math.nan))
            rows.append({"section": join_title(self.title, f"{r.label} mean ({low:g}–{high:g})"), "label": r.system,
                         "detail": "", "value": r.mean, "low": r.low, "high": r.high, "p_value": math.nan,
                         "n": r.n, "interval": f"Student t, clipped to {low:g}–{high:g}" if r.clipped else "Student t",
                         "kind": "num"})
        for r in self.zscores.itertuples():
            rows.append({"section": join_title(self.title, f"{r.label} mean z-score"), "label": r.system,
                         "detail": "", "value": r.mean, "low": r.low, "high": r.high, "p_value": math.nan,
                         "n": r.n, "interval": "Student t", "kind": "num"})
        return rows + correlation_rows(self.correlations, self.title)

    def charts(self) -> dict[str, Any]:
        import altair as alt

        from ..charts import BLUE

        out: dict[str, Any] = {}
        if len(self.means):
            frame = self.means[["label", "system", "mean", "low", "high", "n"]].copy()
            frame["low"] = frame["low"].fillna(frame["mean"])
            frame["high"] = frame["high"].fillna(frame["mean"])
            base = alt.Chart(frame).encode(y=alt.Y("system:N", sort=None, title=None))
            points = base.mark_point(filled=True, size=80, color=BLUE).encode(
                x=alt.X("mean:Q", title="mean score", scale=alt.Scale(zero=False)),
                tooltip=["label:N", "system:N", alt.Tooltip("mean:Q", format=".2f"),
                         alt.Tooltip("low:Q", format=".2f"), alt.Tooltip("high:Q", format=".2f"), "n:Q"])
            bars = base.mark_rule(color="#111827", strokeWidth=2).encode(x="low:Q", x2="high:Q")
            order = list(dict.fromkeys(frame["label"]))
            out[f"score_means:{self.task}"] = alt.layer(bars, points, data=frame).facet(
                row=alt.Row("label:N", title=None, sort=order)).resolve_scale(x="independent").properties(
                title=join_title(self.title, "mean scores"))
        if len(self.distribution):
            d = self.distribution
            order = list(dict.fromkeys(d["label"]))
            out[f"score_dist:{self.task}"] = alt.Chart(d).mark_bar(color=BLUE).encode(
                x=alt.X("bin_label:N", sort=None, title="score", axis=alt.Axis(labelAngle=0)),
                y=alt.Y("count:Q", title="scores"), row=alt.Row("label:N", title=None, sort=order),
                column=alt.Column("system:N", title=None),
                tooltip=["label:N", "system:N", "bin_label:N", "count:Q"],
            ).resolve_scale(x="independent").properties(width=140, height=110,
                                                        title=join_title(self.title, "score distributions"))
        return out


def _scales(task: Mapping[str, Any], rows: pd.DataFrame) -> list[dict[str, Any]]:
    """The task's scales as described; for a task known only from the data, the scale ids found in it (sliders
    when their values run past 10, else Likert levels, with the range seen)."""
    described = [dict(s) for s in task.get("scales") or []]
    if described or not len(rows):
        return described
    import pyarrow as pa
    import pyarrow.json as pj

    from ..analysis import _ndjson

    column = rows["score_detail"] if "score_detail" in rows.columns else rows["detail"]
    table = pj.read_json(pa.BufferReader(_ndjson(column)))
    if "scores" not in table.column_names:
        return []
    table = pa.Table.from_struct_array(table.column("scores").combine_chunks())
    found = []
    for name in table.column_names:
        values = score_values(rows, [name])[name][2]
        if len(values):
            slider = values.max() > 10
            found.append({"id": name, "label": name, "type": "slider" if slider else "likert",
                          "min": float(values.min()) if slider else 1.0, "max": float(values.max())})
    return found


def results(ev: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> ScoreResult:
    """Means and medians per system and scale, z-scores of slider scales, distributions, paired Wilcoxon tests
    between systems with sample sizes, Krippendorff's alpha per scale and the correlation with the items'
    metrics."""
    options = context.options
    confidence = options.confidence
    rows = rows_of(ev, task["id"], ["session_id", "sources", "item_ids", "score_detail", "detail"])
    scales = _scales(task, rows)
    # systems: the order of the task's description, then any other shown, sorted
    source_code, shown = json_values(rows["sources"]) if "sources" in rows.columns else (
        np.full(len(rows), -1), [])
    seen = sorted({str(s) for lst in shown if isinstance(lst, list) for s in lst})
    systems = list(dict.fromkeys([*(task.get("systems") or []), *seen]))
    systems = [s for s in systems if s in set(seen)] or systems
    sys_index = pd.Index(systems, dtype=object)
    width = max([len(lst) for lst in shown if isinstance(lst, list)] + [1])
    lookup = np.full((len(shown) + 1, width), -1, dtype=np.int64)  # (sources value, position) -> system; last: none
    for code, lst in enumerate(shown):
        if isinstance(lst, list):
            lookup[code, : len(lst)] = sys_index.get_indexer([str(s) for s in lst])
    session, _ = _codes(rows["session_id"])
    item, item_names = item_codes(rows) if "item_ids" in rows.columns else (np.full(len(rows), -1),
                                                                             np.zeros(0, dtype=object))
    k = len(systems)
    values = score_values(rows, [s["id"] for s in scales])
    means, zrows, dist, wil, agree, item_level, sys_level = [], [], [], [], [], [], []
    judged_parts: list[tuple[np.ndarray, np.ndarray]] = []
    for scale in scales:
        row, position, value = values[scale["id"]]
        inside = position < width
        row, position, value = row[inside], position[inside], value[inside]
        system = lookup[np.where(source_code[row] >= 0, source_code[row], len(shown)), position]
        keep = system >= 0
        row, system, value = row[keep], system[keep], value[keep]
        who, what = session[row], item[row]
        judged_parts.append((what, system))
        label, kind = scale.get("label", scale["id"]), scale.get("type", "likert")
        low_end, high_end = float(scale.get("min", 1)), float(scale.get("max", 5))
        if len(value):
            low_end, high_end = min(low_end, float(value.min())), max(high_end, float(value.max()))
        bounds = (low_end, high_end) if low_end < high_end else None
        z = stats.zscores_by_evaluator(value, who) if kind == "slider" and len(value) else None
        for s in range(k):
            mine = system == s
            if not mine.any():
                continue
            v = value[mine]
            m = stats.mean_ci(v, confidence, bounds=bounds)
            med = stats.median_ci(v, confidence)
            means.append({"scale": scale["id"], "label": label, "system": systems[s], "mean": m.mean, "low": m.low,
                          "high": m.high, "sd": m.sd, "n": m.n, "clipped": m.clipped, "median": med.median,
                          "median_low": med.low, "median_high": med.high})
            if z is not None:
                mz = stats.mean_ci(z[mine], confidence)
                zrows.append({"scale": scale["id"], "label": label, "system": systems[s], "mean": mz.mean,
                              "low": mz.low, "high": mz.high, "sd": mz.sd, "n": mz.n})
        dist += _distribution(scale, label, kind, value, system, systems, low_end, high_end)
        # per (item, system) mean: the items x systems matrix the paired tests and the correlations use
        known = what >= 0
        n_items = len(item_names)
        cell = what[known] * max(k, 1) + system[known]
        total = np.bincount(cell, weights=value[known], minlength=n_items * k)
        count = np.bincount(cell, minlength=n_items * k)
        unit_mean = np.divide(total, count, out=np.full(n_items * k, np.nan), where=count > 0).reshape(n_items, k)
        wil += _paired(scale, label, unit_mean, systems)
        agree.append(_alpha(scale, label, kind, what, system, who, value, k))
        judged_cells = np.flatnonzero(count)
        item_level.append(pd.DataFrame({"item_id": item_names[judged_cells // k] if k else [],
                                        "system": np.asarray(systems, dtype=object)[judged_cells % k] if k else [],
                                        "measure": label, "human": unit_mean.ravel()[judged_cells]}))
        sys_level += [{"system": r["system"], "measure": label, "human": r["mean"]} for r in means
                      if r["scale"] == scale["id"]]
    judged = judged_pairs(np.concatenate([p[0] for p in judged_parts] or [np.zeros(0, dtype=np.int64)]),
                          item_names,
                          np.concatenate([p[1] for p in judged_parts] or [np.zeros(0, dtype=np.int64)]), systems)
    table, note = correlate(context, judged, pd.DataFrame(sys_level, columns=["system", "measure", "human"]),
                            pd.concat(item_level, ignore_index=True) if item_level else None)
    return ScoreResult(
        task=task["id"], title=task.get("title", task["id"]), scales=scales,
        means=pd.DataFrame(means, columns=["scale", "label", "system", "mean", "low", "high", "sd", "n", "clipped",
                                           "median", "median_low", "median_high"]),
        zscores=pd.DataFrame(zrows, columns=["scale", "label", "system", "mean", "low", "high", "sd", "n"]),
        distribution=pd.DataFrame(dist, columns=["scale", "label", "system", "bin", "bin_label", "count"]),
        wilcoxon=pd.DataFrame(wil, columns=["scale", "label", "pair", "first", "second", "n", "mean_diff",
                                            "median_diff", "hodges_lehmann", "w_plus", "p_value", "needed",
                                            "further"]),
        agreement=pd.DataFrame(agree, columns=["scale", "label", "level", "alpha", "units", "raters", "note"]),
        correlations=table, correlation_note=note, outputs_per_question=int(task.get("outputs_per_question", 1)),
        options=options, n_answers=len(rows))


def _distribution(scale: Mapping[str, Any], label: str, kind: str, value: np.ndarray, system: np.ndarray,
                  systems: list[str], low: float, high: float) -> list[dict[str, Any]]:
    """Counts per Likert level, or per tenth of a slider's range, for every system."""
    k = len(systems)
    if kind == "likert":
        levels = np.arange(int(low), int(high) + 1)
        bins = np.clip(np.round(value).astype(np.int64) - int(low), 0, len(levels) - 1)
        names = [str(v) for v in levels]
        starts = levels.astype(float)
    else:
        width = (high - low) / 10 if high > low else 1.0
        bins = np.clip(((value - low) // width).astype(np.int64), 0, 9)
        starts = low + width * np.arange(10)
        names = [f"{a:g}–{a + width:g}" for a in starts]
    counts = np.bincount(system * len(names) + bins, minlength=k * len(names)).reshape(k, len(names))
    return [{"scale": scale["id"], "label": label, "system": systems[s], "bin": float(starts[b]),
             "bin_label": names[b], "count": int(counts[s, b])}
            for s in range(k) if counts[s].sum() for b in range(len(names))]


def _paired(scale: Mapping[str, Any], label: str, unit_mean: np.ndarray, systems: list[str]) -> list[dict[str, Any]]:
    """A Wilcoxon signed-rank test for every pair of systems on their common items, and the pairs needed."""
    out = []
    for a, b in itertools.combinations(range(len(systems)), 2):
        x, y = unit_mean[:, a], unit_mean[:, b]
        both = ~(np.isnan(x) | np.isnan(y))
        if not both.any():
            continue
        d = x[both] - y[both]
        test = stats.paired_wilcoxon(x[both], y[both])
        needed: int | None = None
        sd = float(d.std(ddof=1)) if len(d) > 1 else math.nan
        if len(d) > 1 and sd > 0 and float(d.mean()) != 0:
            needed = stats.sample_size_paired(float(d.mean()) / sd)
        out.append({"scale": scale["id"], "label": label, "pair": f"{systems[a]} vs {systems[b]}",
                    "first": systems[a], "second": systems[b], "n": test.n, "mean_diff": float(d.mean()),
                    "median_diff": test.median_difference, "hodges_lehmann": test.hodges_lehmann,
                    "w_plus": test.statistic, "p_value": test.p_value, "needed": needed,
                    "further": None if needed is None else max(0, needed - test.n)})
    return out


def _alpha(scale: Mapping[str, Any], label: str, kind: str, item: np.ndarray, system: np.ndarray,
           evaluator: np.ndarray, value: np.ndarray, k: int) -> dict[str, Any]:
    """Krippendorff's alpha of one scale over (item, system) units: an evaluator's first score of a unit counts."""
    level = "interval" if kind == "slider" else "ordinal"
    known = (item >= 0) & (evaluator >= 0)
    n_units = (int(item.max()) + 1) * max(k, 1) if len(item) else 0
    unit = item[known] * max(k, 1) + system[known]
    who, v = evaluator[known], value[known]
    raters = int(evaluator.max()) + 1 if len(evaluator) else 1
    first = ~pd.Series(unit * raters + who).duplicated().to_numpy()  # an evaluator's first score of a unit
    unit, who, v = unit[first], who[first], v[first]
    per_unit = np.bincount(unit, minlength=n_units)
    units = int((per_unit >= 2).sum())
    multi = per_unit[unit] >= 2  # only units judged twice or more are pairable
    alpha = stats.alpha_from_long(unit[multi], who[multi], v[multi], level) if units >= 2 else math.nan
    n_raters = int((np.bincount(who[multi], minlength=raters) > 0).sum())
    note = ("" if not math.isnan(alpha) else "no scores yet" if not len(value) else
            "needs two or more (item, system) units scored by two or more evaluators" if units < 2 else
            "undefined: every score of the units scored twice or more is the same (no variation)")
    return {"scale": scale["id"], "label": label, "level": level, "alpha": alpha, "units": units,
            "raters": n_raters, "note": note}
