"""Statistics for human evaluation: agreement, tests, intervals, Bradley–Terry, MOS, sample size.

scipy and ``krippendorff`` do the work wherever they can (binomial tests,
Wilson intervals, t intervals, Wilcoxon / Mann–Whitney, Krippendorff's alpha).
Written here by hand, because neither offers them: Fleiss' and Cohen's kappa
(a few lines of arithmetic on count tables; statsmodels has them but is a heavy
dependency for two formulas), Bradley–Terry (no maintained scipy routine; a
vectorised minorise–maximise fit on the win matrix) and Cohen's h / the
two-proportion sample size (closed forms).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import krippendorff as _krippendorff
import numpy as np
import pandas as pd
from scipy import stats as _st

__all__ = [
    "MeanCI",
    "WinRate",
    "binomial_test",
    "bradley_terry",
    "bradley_terry_matrix",
    "cohen_kappa",
    "cohens_h",
    "fleiss_kappa",
    "krippendorff_alpha",
    "mann_whitney_u",
    "mean_ci",
    "sample_size_two_proportions",
    "wilcoxon_signed_rank",
    "wilson_interval",
    "win_matrix",
    "win_rate",
]

NAN = float("nan")


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def _check_counts(successes: int, n: int) -> None:
    if isinstance(successes, bool) or isinstance(n, bool):
        raise TypeError("successes and n must be integers")
    if int(successes) != successes or int(n) != n:
        raise ValueError("successes and n must be whole numbers")
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")


# ----------------------------------------------------------------------------- agreement


def fleiss_kappa(counts: Any) -> float:
    """Fleiss' kappa of a subjects x categories table of rating counts.

    ``counts[i][j]`` is how many raters put subject i in category j. Chance
    agreement comes from the category marginals. Subjects with fewer than two
    ratings carry no agreement information and are skipped; subjects may have
    different numbers of raters (each subject's agreement uses its own n_i).
    Returns NaN when undefined (no subject with two ratings, or every rating in
    one category: 0/0).
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError("counts must be a 2-D subjects x categories table")
    if (table < 0).any() or not np.isfinite(table).all():
        raise ValueError("counts must be non-negative finite numbers")
    n_i = table.sum(axis=1)
    table, n_i = table[n_i >= 2], n_i[n_i >= 2]
    if table.shape[0] == 0:
        return NAN
    p_j = table.sum(axis=0) / n_i.sum()
    p_i = ((table * table).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = p_i.mean()
    p_e = float((p_j * p_j).sum())
    if math.isclose(p_e, 1.0):
        return NAN
    return float((p_bar - p_e) / (1 - p_e))


def cohen_kappa(rater_a: Sequence[Any], rater_b: Sequence[Any]) -> float:
    """Cohen's kappa of two raters' labels for the same units (any hashable labels).

    NaN when undefined: no units, or both raters always used one and the same label.
    """
    a, b = list(rater_a), list(rater_b)
    if len(a) != len(b):
        raise ValueError(f"the two raters label different numbers of units ({len(a)} and {len(b)})")
    n = len(a)
    if n == 0:
        return NAN
    labels = sorted(set(a) | set(b), key=repr)
    index = {label: k for k, label in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    np.add.at(table, ([index[x] for x in a], [index[y] for y in b]), 1)
    p_o = np.trace(table) / n
    p_e = float((table.sum(axis=1) / n) @ (table.sum(axis=0) / n))
    if math.isclose(p_e, 1.0):
        return NAN
    return float((p_o - p_e) / (1 - p_e))


def _alpha_matrix(data: Any, level: str) -> np.ndarray:
    """A raters x units float matrix (NaN = missing) from nested sequences; text labels coded in sorted order."""
    rows = [list(r) for r in data]
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError("data must be a non-empty raters x units table with equal row lengths")

    def missing(v: Any) -> bool:
        return v is None or (isinstance(v, float) and math.isnan(v))

    values = [v for r in rows for v in r if not missing(v)]
    if any(isinstance(v, str) for v in values):
        if level != "nominal":
            raise ValueError(f"{level} alpha needs numbers, got text labels")
        codes = {v: k for k, v in enumerate(sorted(set(values), key=str))}
        return np.array([[np.nan if missing(v) else codes[v] for v in r] for r in rows], dtype=float)
    return np.array([[np.nan if missing(v) else float(v) for v in r] for r in rows], dtype=float)


def krippendorff_alpha(data: Any, level: str = "nominal") -> float:
    """Krippendorff's alpha of a raters x units table; None or NaN marks a missing rating.

    ``level`` is ``nominal``, ``ordinal``, ``interval`` or ``ratio``. Nominal
    labels may be strings (they are coded as integers first). Returns NaN when
    alpha is undefined: fewer than two pairable values, or no variation at all.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    if isinstance(data, np.ndarray) and data.ndim == 2 and data.size and np.issubdtype(data.dtype, np.number):
        matrix = data.astype(float)  # already numeric (the analysis passes a float matrix): no per-cell loop
    else:
        matrix = _alpha_matrix(data, level)
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    domain = np.unique(matrix[:, pairable][~np.isnan(matrix[:, pairable])])
    if pairable.sum() == 0 or len(domain) < 2:
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = _krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    return float(value)


# ----------------------------------------------------------------------------- proportions


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (no continuity correction); (nan, nan) for n = 0."""
    _check_counts(successes, n)
    _check_confidence(confidence)
    if n == 0:
        return (NAN, NAN)
    ci = _st.binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def binomial_test(successes: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial p-value (scipy's rule: outcomes no more likely than the observed one).

    With n = 0 there is no evidence either way: the p-value is 1.
    """
    _check_counts(successes, n)
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if n == 0:
        return 1.0
    return float(_st.binomtest(int(successes), int(n), p).pvalue)


@dataclass(frozen=True)
class WinRate:
    """A proportion with its Wilson interval and an exact test against ``p0``."""

    successes: int
    n: int
    rate: float
    low: float
    high: float
    p_value: float
    p0: float


def win_rate(successes: int, n: int, p0: float = 0.5, confidence: float = 0.95) -> WinRate:
    """Rate, Wilson interval and exact two-sided binomial p-value against ``p0``; rate is NaN for n = 0."""
    low, high = wilson_interval(successes, n, confidence)
    return WinRate(successes=int(successes), n=int(n), rate=successes / n if n else NAN, low=low, high=high,
                   p_value=binomial_test(successes, n, p0), p0=p0)


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h effect size between two proportions: 2·asin(√p1) − 2·asin(√p2)."""
    for p in (p1, p2):
        if not 0 <= p <= 1:
            raise ValueError(f"proportions must be in [0, 1], got {p}")
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


def sample_size_two_proportions(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """n per condition to detect p1 vs p2 (two-sided): ceil(2·((z₁₋α/₂ + z_power)/h)²), h = Cohen's h.

    Raises ValueError when p1 == p2 (no effect: no finite n).
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    h = abs(cohens_h(p1, p2))
    if h == 0:
        raise ValueError("p1 equals p2: no sample size detects a zero effect")
    z = _st.norm.ppf(1 - alpha / 2) + _st.norm.ppf(power)
    return math.ceil(2 * (z / h) ** 2 - 1e-9)


# ----------------------------------------------------------------------------- means and rank tests


@dataclass(frozen=True)
class MeanCI:
    """A mean with its Student t interval (the MOS of a rating scale)."""

    mean: float
    low: float
    high: float
    sd: float
    n: int


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> MeanCI:
    """Mean, sample SD and Student t interval; NaN where undefined (n = 0; interval and SD for n = 1)."""
    _check_confidence(confidence)
    if isinstance(values, np.ndarray):
        x = values.astype(float, copy=False)  # no per-value loop for the analysis's arrays
    else:
        x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return MeanCI(NAN, NAN, NAN, NAN, 0)
    mean = float(x.mean())
    if n == 1:
        return MeanCI(mean, NAN, NAN, NAN, 1)
    sd = float(x.std(ddof=1))
    half = float(_st.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n)
    return MeanCI(mean, mean - half, mean + half, sd, n)


def wilcoxon_signed_rank(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of paired samples (exact where scipy gives it).

    NaN when every difference is zero (nothing to rank).
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError("x and y must be paired: same length")
    if a.size == 0 or np.all(a - b == 0):
        return NAN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_st.wilcoxon(a, b, alternative="two-sided", method="auto").pvalue)


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test (exact where scipy gives it); NaN for an empty sample."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size == 0 or b.size == 0:
        return NAN
    return float(_st.mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


# ----------------------------------------------------------------------------- Bradley–Terry


def _columns(records: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(item_a, item_b, outcome) as three arrays, from records or from columns (arrays, Series, a DataFrame)."""
    if hasattr(records, "columns") and hasattr(records, "iloc"):  # a DataFrame: its first three columns
        return tuple(records.iloc[:, k].to_numpy() for k in range(3))  # type: ignore[return-value]
    if isinstance(records, tuple) and len(records) == 3 and all(hasattr(c, "__array__") for c in records):
        a, b, o = (np.asarray(c) for c in records)
        if not len(a) == len(b) == len(o):
            raise ValueError("the three columns must have the same length")
        return a, b, o
    rows = list(records)
    for rec in rows:
        if len(rec) != 3:
            raise ValueError(f"a record is (item_a, item_b, outcome), got {rec!r}")
        break
    if not rows:
        empty = np.array([], dtype=object)
        return empty, empty, empty
    a, b, o = zip(*rows, strict=True)
    return np.array(a, dtype=object), np.array(b, dtype=object), np.array(o, dtype=object)


def win_matrix(records: Any, ties: str = "half") -> tuple[list[str], np.ndarray]:
    """Items and the matrix W with W[i, j] = wins of item i over item j (ties as configured).

    ``records`` is an iterable of ``(item_a, item_b, outcome)`` or, for speed on
    millions of comparisons, three columns (arrays or a DataFrame). Vectorised:
    the cost is a few passes over the columns in NumPy.
    """
    if ties not in ("half", "drop"):
        raise ValueError(f"ties must be 'half' or 'drop', got {ties!r}")
    a, b, out = _columns(records)
    outcome_codes, outcome_names = pd.factorize(out)  # hash-based: linear in the number of records
    bad = [o for o in outcome_names if o not in ("a", "b", "tie")]
    if bad:
        raise ValueError(f"outcome must be 'a', 'b' or 'tie', got {bad[0]!r}")
    if len(a) == 0:
        return [], np.zeros((0, 0))
    codes, uniques = pd.factorize(np.concatenate([a, b]))
    names = np.array([str(u) for u in uniques])
    order = np.argsort(names, kind="stable")  # items in sorted order, as before
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    codes = rank[codes]
    items_arr = names[order]
    ia, ib = codes[: len(a)], codes[len(a):]
    same = ia == ib
    if same.any():
        raise ValueError(f"an item cannot be compared with itself: {a[same][0]!r}")
    k = len(items_arr)
    w = np.zeros(k * k)
    code_of = {str(name): c for c, name in enumerate(outcome_names)}
    win_a, win_b = outcome_codes == code_of.get("a", -2), outcome_codes == code_of.get("b", -2)
    w += np.bincount(ia[win_a] * k + ib[win_a], minlength=k * k)
    w += np.bincount(ib[win_b] * k + ia[win_b], minlength=k * k)
    if ties == "half":
        tie = outcome_codes == code_of.get("tie", -2)
        w += 0.5 * np.bincount(ia[tie] * k + ib[tie], minlength=k * k)
        w += 0.5 * np.bincount(ib[tie] * k + ia[tie], minlength=k * k)
    return [str(x) for x in items_arr], w.reshape(k, k)


def _fit_bt(w: np.ndarray, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """Minorise–maximise (Hunter 2004) on a win matrix whose items all win and lose something."""
    n_ij = w + w.T
    wins = w.sum(axis=1)
    p = np.ones(len(w))
    for _ in range(max_iter):
        denom = (n_ij / (p[:, None] + p[None, :])).sum(axis=1)
        new = wins / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            return new
        p = new
    return p


def bradley_terry(records: Any, ties: str = "half") -> dict[str, float]:
    """Maximum-likelihood Bradley–Terry log-strengths, centred to mean 0 over the finite ones.

    ``records`` are ``(item_a, item_b, outcome)`` with outcome ``"a"``, ``"b"``
    or ``"tie"``. ``ties="half"`` counts a tie as half a win for each side,
    ``"drop"`` ignores ties. An item that never wins (nor ties) has strength 0:
    log-strength ``-inf``; an item that never loses has ``+inf``; either is set
    aside and the rest are fitted among themselves (repeatedly, as setting one
    aside can leave another without a win). The fit works on the aggregated win
    matrix, so its cost does not depend on the number of records. ``records``
    may also be three columns (arrays or a DataFrame), see :func:`win_matrix`.
    """
    return bradley_terry_matrix(*win_matrix(records, ties))


def bradley_terry_matrix(items: Sequence[str], w: Any) -> dict[str, float]:
    """:func:`bradley_terry` from an aggregated win matrix (``w[i, j]`` = wins of ``items[i]`` over ``items[j]``).

    For callers that count wins themselves (the analysis does, on integer codes);
    :func:`win_matrix` builds the same matrix from records.
    """
    w = np.asarray(w, dtype=float)
    if w.shape != (len(items), len(items)):
        raise ValueError(f"the win matrix must be {len(items)} x {len(items)}, got {w.shape}")
    out: dict[str, float] = {}
    active = np.ones(len(items), dtype=bool)
    while True:
        sub = w[np.ix_(active, active)]
        idx = np.flatnonzero(active)
        compared = (sub + sub.T).sum(axis=1) > 0
        wins, losses = sub.sum(axis=1), sub.sum(axis=0)
        never_win = compared & (wins == 0)
        never_lose = compared & (losses == 0) & ~never_win
        if not never_win.any() and not never_lose.any():
            break
        for k in idx[never_win]:
            out[items[k]] = -math.inf
        for k in idx[never_lose]:
            out[items[k]] = math.inf
        active[idx[never_win | never_lose]] = False
    idx = np.flatnonzero(active)
    if len(idx):
        sub = w[np.ix_(idx, idx)]
        compared = (sub + sub.T).sum(axis=1) > 0
        fit_idx = idx[compared]
        if len(fit_idx):
            strengths = _fit_bt(w[np.ix_(fit_idx, fit_idx)])
            logs = np.log(strengths)
            logs -= logs.mean()
            for k, v in zip(fit_idx, logs, strict=True):
                out[items[k]] = float(v)
        for k in idx[~compared]:  # an item in no comparison at all has no estimate
            out[items[k]] = NAN
    return {item: out[item] for item in items}
