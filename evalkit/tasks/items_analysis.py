"""What the analyses of the items kinds (compare, score, rank, realfake) share: the task's rows, the
correlation of human judgments with the items' automatic metrics, Bradley–Terry with bootstrap intervals
from (evaluator, winner, loser) columns, a proportion with ties counted as half, and table formatting.

Imported only when a report is made (through :func:`evalkit.tasks.results`), like the kinds'
``<kind>_analysis`` modules: it needs scipy, which the survey does not load.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats as _st

from .. import stats
from ..resultkit import Options, TaskContext, bt_frame, fmt_ci, fmt_num, fmt_p, fmt_pct
from ..text import join_title

if TYPE_CHECKING:
    from ..items import ItemSet

__all__ = ["CORRELATION_COLUMNS", "bt_with_intervals", "correlate", "in_order", "judged_pairs", "metrics_table",
           "rate_columns", "rows_of", "system_order", "wilson_fractional"]

#: Columns of a correlation table.
CORRELATION_COLUMNS = ["level", "measure", "metric", "method", "r", "low", "high", "p_value", "p_method", "n"]
METHODS = ("pearson", "spearman", "kendall")
CORRELATION_NOTE = (
    "Pearson's r, Spearman's rho and Kendall's tau-b (scipy), two-sided p-values, each with its method (p "
    "method): Pearson's from Student's t; Spearman's exact up to n = 10 (its permutation distribution over all "
    "n! pairings of the ranks; few systems make the t approximation poor), beyond that the t approximation; "
    "Kendall's exact without ties up to n = 33, else the normal approximation. 95% intervals by Fisher's z "
    "(Fisher 1921) with the standard error of Bonett & Wright (2000) for Spearman and of Fieller, Hartley & "
    "Pearson (1957) for Kendall. Item level: one point per judged (item, system), the human mean against the "
    "item's metric; system level: one point per system, the metric averaged over the items the system was "
    "judged on. With few systems the system-level intervals are wide; below n = 4 neither the interval nor the "
    "p-value is given.")
BT_NOTE = (
    "Bradley–Terry log-strengths (Bradley & Terry 1952), maximum likelihood by minorise–maximise (Hunter 2004), "
    "ties as half a win each; 95% percentile bootstrap intervals resampling evaluators (all of an evaluator's "
    "judgments together; Efron & Tibshirani 1993), {resamples:,} resamples, seed {seed}. -inf / inf: the "
    "system never won / never lost (in enough resamples).")


def rows_of(ev: pd.DataFrame, task_id: str, columns: Sequence[str]) -> pd.DataFrame:
    """The task's answers, only the columns asked for that exist (a copy of those alone)."""
    present = [c for c in columns if c in ev.columns]
    return ev.loc[(ev["task"] == task_id).to_numpy(), present]


def system_order(task: Mapping[str, Any], context: TaskContext | None, seen: Collection[str]) -> list[str]:
    """The systems of a task in the one order every table and chart of its section uses: the task's ``systems``
    as the config lists them, else (a task that takes every system of its items file) the items file's order
    (:meth:`evalkit.items.ItemSet.regular_systems`, when the analysis has the file), then any other system seen
    in the answers, sorted; only the systems in ``seen`` (those the answers show)."""
    given = [str(s) for s in task.get("systems") or []]
    if not given and context is not None and context.items is not None:
        given = [str(s) for s in context.items.regular_systems()]
    seen = {str(s) for s in seen}
    return [s for s in dict.fromkeys([*given, *sorted(seen)]) if s in seen]


def in_order(frame: pd.DataFrame, order: Sequence[str], column: str = "system") -> pd.DataFrame:
    """The rows of ``frame`` with ``column`` in ``order`` (:func:`system_order`; rows of other values last, in
    their order), index reset: e.g. strengths listed in the config's order, not strongest first."""
    if frame.empty:
        return frame
    rank = {name: k for k, name in enumerate(order)}
    key = frame[column].map(lambda v: rank.get(v, len(rank)))
    return frame.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)


def wilson_fractional(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson (1927) score interval of successes / n for a fractional count (ties as half a success).

    The textbook formula with p̂ = successes / n; for whole counts it is :func:`evalkit.stats.wilson_interval`.
    With ties it is conservative: a tie scores ½ every time, so the judgments vary less than the binomial
    variance p̂(1 − p̂) assumes. (nan, nan) for n = 0.
    """
    if n == 0:
        return (math.nan, math.nan)
    z = float(_st.norm.ppf((1 + confidence) / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bt_with_intervals(systems: Sequence[str], evaluator: np.ndarray, winner: np.ndarray, loser: np.ndarray,
                      weight: np.ndarray, options: Options) -> pd.DataFrame:
    """Bradley–Terry log-strengths of ``systems`` and their bootstrap intervals over evaluators, from one row per
    (evaluator, winner, loser) with its number of wins (a tie: two rows of ½): ``system, log_strength, low,
    high``, strongest first (see :func:`evalkit.stats.bradley_terry_bootstrap`)."""
    k = len(systems)
    if not len(winner) or k < 2:
        return bt_frame({}).rename(columns={"source": "system"})
    w = np.bincount(winner * k + loser, weights=weight, minlength=k * k).reshape(k, k)
    _, evaluators = np.unique(evaluator, return_inverse=True)
    intervals = stats.bradley_terry_bootstrap(list(systems), evaluators, winner, loser, weight,
                                              resamples=options.bootstrap_resamples, confidence=options.confidence,
                                              seed=options.bootstrap_seed)
    return bt_frame(stats.bradley_terry_matrix(list(systems), w), intervals).rename(columns={"source": "system"})


def judged_pairs(item: np.ndarray, item_names: np.ndarray, system: np.ndarray, systems: Sequence[str]
                 ) -> pd.DataFrame:
    """The distinct (item, system) pairs judged, ``item_id, system``, from parallel codes (-1: unknown, left out)
    of the items (``item_names``) and the systems (``systems``)."""
    k = max(len(systems), 1)
    ok = (item >= 0) & (system >= 0)
    cells = np.flatnonzero(np.bincount(item[ok] * k + system[ok], minlength=len(item_names) * k))
    return pd.DataFrame({"item_id": np.asarray(item_names, dtype=object)[cells // k],
                         "system": np.asarray(list(systems), dtype=object)[cells % k]})


# ----------------------------------------------------------------------------- automatic metrics

_METRICS: dict[int, tuple[Any, pd.DataFrame]] = {}


def metrics_table(items: ItemSet) -> pd.DataFrame:
    """The metrics of an items file in long form: ``item_id, system, metric, value`` (one pass over the items,
    kept for the file's lifetime in the process: the analysis reruns on every new answer, the file does not
    change)."""
    held = _METRICS.get(id(items))
    if held is not None and held[0] is items:
        return held[1]
    ids, systems, names, values = [], [], [], []
    for item in items:
        for system, metrics in (item.metrics or {}).items():
            for name, value in metrics.items():
                ids.append(item.id)
                systems.append(system)
                names.append(name)
                values.append(float(value))
    table = pd.DataFrame({"item_id": ids, "system": systems, "metric": names, "value": values})
    if len(_METRICS) >= 8:
        _METRICS.clear()
    _METRICS[id(items)] = (items, table)
    return table


def correlate(context: TaskContext, judged: pd.DataFrame, system_level: pd.DataFrame,
              item_level: pd.DataFrame | None = None) -> tuple[pd.DataFrame, str]:
    """Human judgments against the items' automatic metrics: (table, note; the note says why there is no table).

    ``judged``: ``item_id, system``, the (item, system) pairs the humans judged (what a system's metric is
    averaged over at system level). ``system_level``: ``system, measure, human`` (one human value per system
    and measure, e.g. a mean score or a win share). ``item_level``: ``item_id, system, measure, human`` or None
    (the kind has no item-level human value). Every (level, measure, metric) gets Pearson, Spearman and Kendall
    rows (:func:`evalkit.stats.correlation`).
    """
    empty = pd.DataFrame(columns=CORRELATION_COLUMNS)
    if context.items is None:
        return empty, f"No correlation with automatic metrics: {context.items_note}."
    metrics = metrics_table(context.items)
    if metrics.empty:
        return empty, f"No correlation with automatic metrics: {context.items.path.name} has no metrics."
    if judged.empty:
        return empty, "No correlation with automatic metrics: nothing judged yet."
    units = judged.drop_duplicates().merge(metrics, on=["item_id", "system"])
    if units.empty:
        return empty, "No correlation with automatic metrics: none of the judged outputs has metrics."
    rows: list[dict[str, Any]] = []
    confidence = context.options.confidence
    system_metric = units.groupby(["system", "metric"], sort=False)["value"].mean().rename("metric_value")
    points = system_level.merge(system_metric.reset_index(), on="system")
    levels = [("system", points, ["measure", "metric"])]
    if item_level is not None:
        levels.insert(0, ("item", item_level.merge(metrics.rename(columns={"value": "metric_value"}),
                                                   on=["item_id", "system"]), ["measure", "metric"]))
    for level, frame, keys in levels:
        for (measure, metric), group in frame.groupby(keys, sort=False):
            x, y = group["human"].to_numpy(dtype=float), group["metric_value"].to_numpy(dtype=float)
            for method in METHODS:
                c = stats.correlation(x, y, method, confidence)
                given = c.n >= 4  # 3 points: Pearson's r = ±1 gets p = 0 from scipy; an r, not a test
                rows.append({"level": level, "measure": measure, "metric": metric, "method": method, "r": c.r,
                             "low": c.low, "high": c.high, "p_value": c.p_value if given else math.nan,
                             "p_method": c.p_method if given else "", "n": c.n})
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS), ""


def correlation_display(table: pd.DataFrame) -> pd.DataFrame:
    """A correlation table for display."""
    out = table[["level", "measure", "metric", "method"]].copy()
    out["r"] = table["r"].map(lambda v: fmt_num(v, 3))
    out["95% CI"] = [fmt_ci(lo, hi, pct=False, digits=3) for lo, hi in zip(table["low"], table["high"],
                                                                           strict=True)]
    out["p"] = table["p_value"].map(fmt_p)
    out["p method"] = table["p_method"]
    out["n"] = table["n"]
    return out


def correlation_rows(table: pd.DataFrame, title: str) -> list[dict[str, Any]]:
    """Headline rows of a correlation table (Pearson and Kendall at each level; Spearman is in the page's
    table); the detail names the method and, where there is a p-value, how it was obtained."""
    rows = []
    for r in table[table["method"] != "spearman"].itertuples():
        detail = f"{r.method}, p: {r.p_method}" if r.p_method else r.method
        rows.append({"section": join_title(title, f"correlation with {r.metric} ({r.level} level)"),
                     "label": r.measure, "detail": detail, "value": r.r, "low": r.low, "high": r.high,
                     "p_value": r.p_value, "n": r.n, "interval": "Fisher z", "kind": "num"})
    return rows


# ----------------------------------------------------------------------------- formatting


def rate_columns(frame: pd.DataFrame, prefix: str = "", p: bool = True) -> dict[str, Any]:
    """Formatted ``{prefix}rate``, ``{prefix}low``, ``{prefix}high`` (and ``p_value``) of a frame, to ``assign``
    to a display table: ``rate %``, ``95% CI``, ``p`` (names prefixed by ``prefix`` too)."""
    out: dict[str, Any] = {
        f"{prefix}rate %": frame[f"{prefix}rate"].map(fmt_pct),
        f"{prefix}95% CI": [fmt_ci(a, b) for a, b in zip(frame[f"{prefix}low"], frame[f"{prefix}high"],
                                                         strict=True)]}
    if p:
        out[f"{prefix}p"] = frame[f"{prefix}p_value"].map(fmt_p)
    return out


def count_text(v: object) -> str:
    """A count for display; an en dash when there is none (None or NaN)."""
    return "–" if v is None or v != v else f"{int(v):,}"  # v != v: NaN
