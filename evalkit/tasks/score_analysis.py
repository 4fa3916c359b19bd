"""Analysis of ``score`` tasks (:mod:`evalkit.tasks.score`): absolute scores of systems' outputs on Likert or
slider scales.

Each answer stores ``{"scores": {scale: [value per output, display order]}}`` and the systems shown in
display order (``sources``), so one score is (answer, position): its system is ``sources[position]``, its
item the answer's item, its evaluator the answer's session. Everything below works on those columns as
integer codes (``np.bincount``), never row by row; the score JSON is parsed in bulk
(:func:`evalkit.analysis.score_values`).

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import stats
from ..resultkit import (
    SCORE_ROW_COLUMNS,
    Block,
    Frames,
    ResultDefaults,
    TaskContext,
    column_codes,
    fmt_ci,
    fmt_num,
    fmt_p,
    item_codes,
    json_values,
    score_values,
    tasks_of,
)
from ..text import join_title
from .items_analysis import (
    CORRELATION_NOTE,
    correlate,
    correlation_display,
    correlation_rows,
    count_text,
    judged_pairs,
    rows_of,
    system_order,
)

__all__ = ["ScoreResult", "results", "score_rows"]

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
    #: the task's systems in the one order of every table and chart (the config's, see ``system_order``)
    systems: list[str] = field(default_factory=list)

    def describe(self) -> str:
        n = self.outputs_per_question
        return f"score, {'one output' if n == 1 else f'{n} outputs' if n else 'every output of its item'} per question"

    def blocks(self) -> list[Block]:
        m = self.means
        means = m.assign(mean=m["mean"].map(fmt_num), sd=m["sd"].map(fmt_num), median=m["median"].map(
            lambda v: fmt_num(v, 1)), **{
            "95% CI": [fmt_ci(a, b, pct=False) + (" †" if cut else "")
                       for a, b, cut in zip(m["low"], m["high"], m["clipped"], strict=True)],
            "median 95% CI": [fmt_ci(a, b, pct=False, digits=1) for a, b in zip(m["median_low"], m["median_high"],
                                                                                strict=True)]})
        table = means[["label", "system", "mean", "95% CI", "sd", "n", "median", "median 95% CI"]].rename(
            columns={"label": "scale"})
        keys = [self._chart_key("score_means", scale, k) for k, scale in enumerate(dict.fromkeys(m["scale"]))]
        if len(keys) > 1:  # the page: the heading, a chart per scale (each on its own range), then the table
            out = [Block("Mean and median score per system", None, chart=keys[0], shown="page"),
                   *(Block("", None, chart=key, shown="page") for key in keys[1:]),
                   Block("Mean and median score per system", table, MEANS_NOTE, page_heading="")]
        else:
            out = [Block("Mean and median score per system", table, MEANS_NOTE, keys[0] if keys else "")]
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
            k = list(dict.fromkeys(self.distribution["scale"])).index(scale)
            out.append(Block(f"Score distribution: {d['label'].iloc[0]}", wide, DIST_NOTE if first else "",
                             self._chart_key("score_dist", scale, k)))
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

    def _chart_key(self, name: str, scale: str, k: int) -> str:
        """The key of a per-scale chart: ``name:task`` for the first scale, ``name:task:scale`` for the others."""
        return f"{name}:{self.task}" if k == 0 else f"{name}:{self.task}:{scale}"

    def charts(self) -> dict[str, Any]:
        """Per scale (one chart each, so that each is drawn as wide as the page and on its own range): the mean
        score per system with its interval, the axis over the scale's range (1–5 starts at 1, 0–100 at 0); the
        distribution, bars per level or tenth of the range, one colour per system. Systems in the task's order."""
        import altair as alt

        from ..resultkit import BLUE

        out: dict[str, Any] = {}
        systems = self.systems or list(dict.fromkeys(self.means["system"]))
        ranges = {sc["id"]: (float(sc.get("min", 1)), float(sc.get("max", 5))) for sc in self.scales}
        for k, (scale, part) in enumerate(self.means.groupby("scale", sort=False)):
            frame = part[["label", "system", "mean", "low", "high", "n"]].copy()
            frame["low"] = frame["low"].fillna(frame["mean"])
            frame["high"] = frame["high"].fillna(frame["mean"])
            low, high = ranges.get(scale, (float(frame["low"].min()), float(frame["high"].max())))
            low, high = min(low, float(frame["low"].min())), max(high, float(frame["high"].max()))
            x_scale = alt.Scale(domain=[low, high] if low < high else [low - 1, high + 1], zero=False, nice=False)
            label = frame["label"].iloc[0]
            base = alt.Chart(frame).encode(y=alt.Y("system:N", sort=systems, title=None))
            points = base.mark_point(filled=True, size=80, color=BLUE).encode(
                x=alt.X("mean:Q", title=f"mean score ({low:g}–{high:g})", scale=x_scale),
                tooltip=["label:N", "system:N", alt.Tooltip("mean:Q", format=".2f"),
                         alt.Tooltip("low:Q", format=".2f"), alt.Tooltip("high:Q", format=".2f"), "n:Q"])
            bars = base.mark_rule(color="#111827", strokeWidth=2).encode(x=alt.X("low:Q", scale=x_scale), x2="high:Q")
            out[self._chart_key("score_means", scale, k)] = alt.layer(bars, points).properties(
                title=join_title(self.title, f"mean {label}"), height=alt.Step(28))
        for k, (scale, d) in enumerate(self.distribution.groupby("scale", sort=False)):
            label = d["label"].iloc[0]
            out[self._chart_key("score_dist", scale, k)] = alt.Chart(d).mark_bar().encode(
                x=alt.X("bin_label:N", sort=list(dict.fromkeys(d["bin_label"])), title=f"{label}: score",
                        axis=alt.Axis(labelAngle=0, labelOverlap=True)),
                xOffset=alt.XOffset("system:N", sort=systems),
                y=alt.Y("count:Q", title="scores", axis=alt.Axis(tickMinStep=1)),
                color=alt.Color("system:N", sort=systems, scale=alt.Scale(domain=systems, range=PALETTE),
                                legend=alt.Legend(title=None)),
                tooltip=["label:N", "system:N", "bin_label:N", "count:Q"],
            ).properties(height=200)  # no title: the block's heading above it names the scale (a title and a
            #                           legend on top would take the plot's height as the page fits the chart)
        return out


#: Colours of the systems in a distribution chart, in the task's order (Tableau 10, colour-blind friendly start).
PALETTE = ["#2457a6", "#e07b39", "#2f7d3b", "#b83d5d", "#7a5195", "#8c6d31", "#3e9fb3", "#6b7280"]


def _scales(task: Mapping[str, Any], rows: pd.DataFrame) -> list[dict[str, Any]]:
    """The task's scales as described; for a task known only from the data, the scale ids found in it (sliders
    when their values run past 10, else Likert levels, with the range seen)."""
    described = [dict(s) for s in task.get("scales") or []]
    if described or not len(rows):
        return described
    import pyarrow as pa
    import pyarrow.json as pj

    from ..resultkit import ndjson_buffer

    column = rows["score_detail"] if "score_detail" in rows.columns else rows["detail"]
    table = pj.read_json(pa.BufferReader(ndjson_buffer(column)))
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
    # systems: the one order of every table and chart (the config's, then any other shown, sorted)
    source_code, shown = json_values(rows["sources"]) if "sources" in rows.columns else (
        np.full(len(rows), -1), [])
    seen = {str(s) for lst in shown if isinstance(lst, list) for s in lst}
    systems = system_order(task, context, seen) or list(dict.fromkeys(task.get("systems") or []))
    sys_index = pd.Index(systems, dtype=object)
    width = max([len(lst) for lst in shown if isinstance(lst, list)] + [1])
    lookup = np.full((len(shown) + 1, width), -1, dtype=np.int64)  # (sources value, position) -> system; last: none
    for code, lst in enumerate(shown):
        if isinstance(lst, list):
            lookup[code, : len(lst)] = sys_index.get_indexer([str(s) for s in lst])
    session, _ = column_codes(rows["session_id"])
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
        options=options, n_answers=len(rows), systems=systems)


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


def score_rows(frames: Frames) -> pd.DataFrame:
    """Every score of every score task, one row per (answer, output shown, scale), in the columns of
    :data:`evalkit.export.SCORE_ROW_COLUMNS` (what :func:`evalkit.export.scores_csv` writes): the output's system
    and its place on the screen (``position``, 0 = first), the scale's id and range as described (as found in the
    data for a task known only from it), the answer's time and check type. Every stored answer, check questions
    and every session included (the caller picks). The score JSON is parsed in bulk (:func:`score_values`)."""
    ev = frames.evaluations
    parts = []
    for task in tasks_of(frames):
        if task.get("kind") != "score":
            continue
        rows = ev.loc[(ev["task"] == task["id"]).to_numpy()]
        if not len(rows):
            continue
        scales = _scales(task, rows)
        source_code, shown = json_values(rows["sources"])
        width = max([len(lst) for lst in shown if isinstance(lst, list)] + [1])
        names = np.full((len(shown) + 1, width), None, dtype=object)  # (sources value, position) -> system
        for code, lst in enumerate(shown):
            if isinstance(lst, list):
                names[code, : len(lst)] = [str(x) for x in lst]
        source_code = np.where(source_code >= 0, source_code, len(shown))
        item, item_names = item_codes(rows)
        item_id = np.append(np.asarray(item_names, dtype=object), None)[item]
        check = rows["check_type"].astype(object).to_numpy() if "check_type" in rows.columns else \
            np.full(len(rows), None, dtype=object)
        values = score_values(rows, [sc["id"] for sc in scales])
        for k, scale in enumerate(scales):
            row, position, value = values[scale["id"]]
            system = names[source_code[row], np.minimum(position, width - 1)]
            system = np.where(position < width, system, None)
            parts.append(pd.DataFrame({
                "session_id": rows["session_id"].to_numpy(dtype=object)[row], "task": task["id"], "kind": "score",
                "question_index": rows["question_index"].to_numpy()[row], "item_id": item_id[row],
                "system": system, "position": position, "scale": scale["id"], "score": value,
                "scale_min": scale.get("min"), "scale_max": scale.get("max"),
                "time_spent_ms": rows["time_spent_ms"].to_numpy()[row],
                "created_at": rows["created_at"].to_numpy(dtype=object)[row], "check": check[row],
                "_row": rows["id"].to_numpy()[row] if "id" in rows.columns else row, "_scale": k}))
    if not parts:
        return pd.DataFrame(columns=SCORE_ROW_COLUMNS)
    out = pd.concat(parts, ignore_index=True).sort_values(["_row", "position", "_scale"], kind="stable")
    return out[SCORE_ROW_COLUMNS].reset_index(drop=True)
