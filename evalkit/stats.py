"""Statistics for human evaluation: agreement, tests, intervals, Bradley–Terry, Plackett–Luce, MOS, z-scores,
signal detection, calibration, correlation, sample size.

scipy and ``krippendorff`` do the work wherever they can (binomial tests,
Wilson intervals, t and median intervals, Wilcoxon / Mann–Whitney, Krippendorff's
alpha, correlations and their tests, the BFGS finish of Plackett–Luce).
Written here by hand, because neither offers them: Fleiss' and Cohen's kappa
(a few lines of arithmetic on count tables; statsmodels has them but is a heavy
dependency for two formulas), Bradley–Terry and Plackett–Luce (no maintained
scipy routine; vectorised minorise–maximise fits; ``choix`` loops in Python),
Cohen's h / the two-proportion sample size, d' and the calibration error (closed
forms), the Hodges–Lehmann estimate (a selection, to avoid listing n² averages),
alpha from long-format data (the package's memory grows with units x values²),
the exact chance test of best-of-n shares (scipy's Poisson-binomial builds an
outcomes x trials table) and Spearman's exact permutation p-value for n <= 10
(scipy's permutation test lists the n! pairings: seconds per correlation). Each
function says why where it matters.
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
from scipy import optimize as _optimize
from scipy import stats as _st
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

__all__ = [
    "Calibration",
    "Correlation",
    "DPrime",
    "MeanCI",
    "MedianCI",
    "PairedWilcoxon",
    "WinRate",
    "alpha_from_long",
    "best_of_n_shares",
    "binomial_test",
    "bootstrap_indexes",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "bradley_terry_matrix",
    "cohen_kappa",
    "cohens_h",
    "correlation",
    "d_prime",
    "expected_calibration_error",
    "fleiss_kappa",
    "krippendorff_alpha",
    "mann_whitney_u",
    "mean_ci",
    "median_ci",
    "paired_wilcoxon",
    "plackett_luce",
    "plackett_luce_bootstrap",
    "sample_size_paired",
    "sample_size_two_proportions",
    "wilcoxon_signed_rank",
    "wilson_interval",
    "win_matrix",
    "win_rate",
    "zscores_by_evaluator",
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


def alpha_from_long(item: Any, rater: Any, value: Any, level: str = "nominal") -> float:
    """Krippendorff's alpha (Krippendorff 2011) of judgments in long format: parallel columns item, rater, value.

    One row per judgment; a missing value (None or NaN) drops its row. The same alpha as
    :func:`krippendorff_alpha` on the raters x units table (tested), with the same ``level`` and text
    labels, but computed from the coincidence matrix by hand: the ``krippendorff`` package builds a
    units x values x values array on the way (1.2 GB and 3 s for 5,000 items on a 0–100 slider), while
    here the coincidences are one sparse product of the units x values counts, so the cost grows with the
    judgments and the square of the number of distinct values only. An item judged once is not pairable
    and is left out, as alpha defines. NaN when fewer than two items have two or more judgments, or when
    alpha is undefined (no variation). A rater who judged the same item twice is an error: the reliability
    data have one value per rater and item (keep the first, or the mean, before calling).
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    units, _ = _factorize(item, "item")
    raters, rater_names = _factorize(rater, "rater")
    values = value if isinstance(value, np.ndarray | pd.Series) else np.asarray(value, dtype=object)
    if not len(units) == len(raters) == len(values):
        raise ValueError(f"item, rater and value must have the same length ({len(units)}, {len(raters)}, "
                         f"{len(values)})")
    keep = ~np.asarray(pd.isna(values))
    units, raters, values = units[keep], raters[keep], np.asarray(values)[keep]
    if values.dtype.kind in "OUS" and any(isinstance(v, str) for v in values):
        if level != "nominal":
            raise ValueError(f"{level} alpha needs numbers, got text labels")
        values = np.asarray([str(v) for v in values], dtype=object)
    else:
        values = values.astype(float)
        if np.isinf(values).any():
            raise ValueError("values must be finite (None or NaN marks a missing judgment)")
        if level == "ratio" and (values < 0).any():
            raise ValueError("ratio alpha needs values >= 0")
    cell = np.sort(units * max(len(rater_names), 1) + raters)
    twice = cell[1:][cell[1:] == cell[:-1]]
    if len(twice):
        u, r = divmod(int(twice[0]), max(len(rater_names), 1))
        first = np.flatnonzero((units == u) & (raters == r))[0]
        raise ValueError(f"rater {rater_names[r]!r} judged item {np.asarray(item, dtype=object)[keep][first]!r} "
                         "more than once")
    judgments = np.bincount(units) if len(units) else np.zeros(0, dtype=np.int64)
    pairable = judgments[units] >= 2
    if (judgments >= 2).sum() < 2:
        return NAN
    unit_codes, unit = np.unique(units[pairable], return_inverse=True)
    domain, code = np.unique(values[pairable], return_inverse=True)
    if len(domain) < 2:
        return NAN
    counts = csr_matrix((np.ones(len(code)), (unit, code)), shape=(len(unit_codes), len(domain)))
    per_pair = csr_matrix(counts.multiply(1.0 / (judgments[unit_codes] - 1.0)[:, None]))
    o = (counts.T @ per_pair).toarray()  # o[c, k] = sum over units of n_uc (n_uk - [c == k]) / (m_u - 1)
    o -= np.diag(np.asarray(per_pair.sum(axis=0)).ravel())
    n_v = o.sum(axis=1)
    delta = _alpha_distances(domain, n_v, level)
    expected = (np.outer(n_v, n_v) * delta).sum()
    if expected == 0:
        return NAN
    return float(1 - (n_v.sum() - 1) * (o * delta).sum() / expected)


def _alpha_distances(domain: np.ndarray, n_v: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's (2011) squared difference δ²(c, k) between the values of ``domain`` (sorted), by level."""
    if level == "nominal":
        return 1.0 - np.eye(len(domain))
    if level == "ordinal":  # (n_c + ... + n_k − (n_c + n_k)/2)², over the values' ranks, c <= k
        c, k = np.indices((len(domain), len(domain)))
        low, high = np.minimum(c, k), np.maximum(c, k)
        cum = np.cumsum(n_v)
        return (cum[high] - cum[low] + n_v[low] - (n_v[c] + n_v[k]) / 2) ** 2
    d = domain.astype(float)
    diff, total = d[:, None] - d[None, :], d[:, None] + d[None, :]
    if level == "interval":
        return diff ** 2
    return np.divide(diff, total, out=np.zeros_like(diff), where=total != 0) ** 2  # ratio


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


def sample_size_paired(effect: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Pairs needed by a two-sided paired t test to detect a standardised mean difference ``effect`` =
    mean(d) / sd(d): ceil(((z₁₋α/₂ + z_power) / effect)² + z₁₋α/₂² / 2), the normal approximation with
    Guenther's (1981) correction, within one pair of the exact noncentral-t answer (G*Power: 34 pairs for
    d = 0.5, 90 for d = 0.3). The Wilcoxon signed-rank test needs about 3/π ≈ 0.955 times as many pairs'
    worth of information under normality (Lehmann 1975), i.e. about 5 % more. ValueError when effect is 0.
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    if effect == 0 or not math.isfinite(effect):
        raise ValueError(f"effect must be finite and non-zero, got {effect}")
    z_a = _st.norm.ppf(1 - alpha / 2)
    z = z_a + _st.norm.ppf(power)
    return math.ceil((z / abs(effect)) ** 2 + z_a ** 2 / 2 - 1e-9)


# ----------------------------------------------------------------------------- means and rank tests


@dataclass(frozen=True)
class MeanCI:
    """A mean with its Student t interval (the MOS of a rating scale).

    ``clipped`` says that the interval was cut to the scale's bounds (see :func:`mean_ci`).
    """

    mean: float
    low: float
    high: float
    sd: float
    n: int
    clipped: bool = False


def mean_ci(values: Iterable[float], confidence: float = 0.95,
            bounds: tuple[float, float] | None = None) -> MeanCI:
    """Mean, sample SD and Student t interval; NaN where undefined (n = 0; interval and SD for n = 1).

    ``bounds`` = (lowest, highest) possible value, e.g. (1, 5) for a 1–5 rating
    or (-100, 100) for the slider. A t interval is symmetric and can run past
    them (mean 4.5, sd 0.58, n = 4: [3.58, 5.42] on a 1–5 scale); with
    ``bounds`` it is clipped to them and ``clipped`` is set. Clipping was chosen
    over a bounded interval (logit, bootstrap) because it leaves every interval
    that fits the scale exactly the textbook t interval, and an end at the
    scale's bound says plainly "cannot be higher than the scale". The clipped
    interval still covers the true mean whenever the t interval did, since the
    true mean lies within the bounds.
    """
    _check_confidence(confidence)
    if bounds is not None and not bounds[0] < bounds[1]:
        raise ValueError(f"bounds must be (lowest, highest) with lowest < highest, got {bounds}")
    if isinstance(values, np.ndarray):
        x = values.astype(float, copy=False)  # no per-value loop for the analysis's arrays
    else:
        x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return MeanCI(NAN, NAN, NAN, NAN, 0)
    if bounds is not None and (x.min() < bounds[0] or x.max() > bounds[1]):
        raise ValueError(f"values outside the bounds {bounds}: {x.min():g}..{x.max():g}")
    mean = float(x.mean())
    if n == 1:
        return MeanCI(mean, NAN, NAN, NAN, 1)
    sd = float(x.std(ddof=1))
    half = float(_st.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    if bounds is None:
        return MeanCI(mean, low, high, sd, n)
    clipped = low < bounds[0] or high > bounds[1]
    return MeanCI(mean, max(low, float(bounds[0])), min(high, float(bounds[1])), sd, n, clipped)


def wilcoxon_signed_rank(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of paired samples, as scipy's
    ``wilcoxon(method="auto", correction=True)`` computes it (zero differences dropped, Wilcoxon's rule; the normal
    approximation with the continuity correction, as R's ``wilcox.test``; see :func:`_signed_rank_p`).

    NaN when every difference is zero (nothing to rank).
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError("x and y must be paired: same length")
    d = (a - b).ravel()
    if d.size == 0 or np.all(d == 0):
        return NAN
    return _signed_rank_p(d)


def mann_whitney_u(x: Sequence[float], y: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test (exact where scipy gives it); NaN for an empty sample."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.size == 0 or b.size == 0:
        return NAN
    return float(_st.mannwhitneyu(a, b, alternative="two-sided", method="auto").pvalue)


@dataclass(frozen=True)
class MedianCI:
    """A median with its distribution-free order-statistic interval (see :func:`median_ci`)."""

    median: float
    low: float
    high: float
    n: int


def median_ci(values: Iterable[float], confidence: float = 0.95) -> MedianCI:
    """Median and its distribution-free interval between two order statistics (Conover 1999, §3.2).

    The interval [x_(j), x_(k)] is the one scipy's ``quantile_test`` gives for the median: the number of
    values below the median is Binomial(n, 1/2), which puts the median between those two order statistics
    with probability at least ``confidence``; no assumption about the shape of the scores (a 1–5 rating's
    median is a rating). None and NaN are dropped. NaN where undefined: n = 0; the bounds also when n is too
    small to reach the confidence (at 95 %, n <= 5: even [min, max] covers only 1 - 2/2^n).
    """
    _check_confidence(confidence)
    if isinstance(values, np.ndarray):
        x = values.astype(float, copy=False)
    else:
        x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return MedianCI(NAN, NAN, NAN, 0)
    median = float(np.median(x))
    ci = _st.quantile_test(x, q=median, p=0.5).confidence_interval(confidence_level=confidence)
    return MedianCI(median, float(ci.low), float(ci.high), len(x))


def _factorize(labels: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..k-1 and the k distinct labels of a column of hashable labels; a missing label is an error."""
    if not isinstance(labels, np.ndarray | pd.Series | pd.Index):
        labels = np.asarray(labels, dtype=object)
    codes, uniques = pd.factorize(labels)
    if (codes < 0).any():
        raise ValueError(f"{what} has missing labels (None or NaN)")
    return codes, np.asarray(uniques)


def zscores_by_evaluator(scores: Any, evaluator: Any) -> np.ndarray:
    """Scores standardised per evaluator, z = (x − mean_e) / sd_e (Graham et al. 2013, 2017: WMT direct assessment).

    Takes out each evaluator's own use of the scale (one scores everything 70–90, another 20–100) before
    scores are averaged per system. ``scores`` and ``evaluator`` are parallel columns, one row per judgment;
    evaluator labels of any hashable kind. sd_e is the sample SD (n − 1) of the evaluator's scores. An
    evaluator with a single score or with all scores equal has no spread to divide by: their z-scores are 0
    (each score sits at the evaluator's mean; the judgments still count, but say no system is better than
    another), a choice rather than NaN so that per-system means keep every judgment. A NaN score stays NaN
    and is left out of its evaluator's mean and SD. Vectorised: per-evaluator sums by ``np.bincount``, no loop.
    """
    x = np.asarray(scores, dtype=float)
    if x.ndim != 1:
        raise ValueError("scores must be one-dimensional")
    codes, uniques = _factorize(evaluator, "evaluator")
    if len(codes) != len(x):
        raise ValueError(f"scores and evaluator must have the same length ({len(x)} and {len(codes)})")
    if np.isinf(x).any():
        raise ValueError("scores must be finite (NaN marks a missing score)")
    k = len(uniques)
    ok = ~np.isnan(x)
    c, v = codes[ok], x[ok]
    n = np.bincount(c, minlength=k)
    mean = np.bincount(c, weights=v, minlength=k) / np.maximum(n, 1)
    dev = x - mean[codes]
    sd = np.sqrt(np.bincount(c, weights=dev[ok] ** 2, minlength=k) / np.maximum(n - 1, 1))
    # "all scores equal" tested exactly (against the evaluator's first score): the rounding of a mean of equal
    # values can leave a tiny SD, which would blow the rounding error up to z-scores of about ±1
    present, at = np.unique(c, return_index=True)
    first = np.full(k, np.nan)
    first[present] = v[at]  # each evaluator's first score
    spread = np.bincount(c, weights=(v != first[c]), minlength=k) > 0
    z = np.zeros(len(x))
    varies = spread[codes] & ok
    z[varies] = dev[varies] / sd[codes[varies]]
    z[~ok] = NAN
    return z


@dataclass(frozen=True)
class PairedWilcoxon:
    """A Wilcoxon signed-rank test of paired scores with the size of the difference (see :func:`paired_wilcoxon`)."""

    statistic: float
    p_value: float
    n: int
    n_nonzero: int
    median_difference: float
    hodges_lehmann: float


def paired_wilcoxon(x: Sequence[float], y: Sequence[float]) -> PairedWilcoxon:
    """Wilcoxon signed-rank test of two systems scored on the same items (Wilcoxon 1945), with effect sizes.

    ``x[i]`` and ``y[i]`` are the two systems' scores on item i; a pair with a NaN is dropped; the differences are
    x − y. ``p_value`` is scipy's two-sided ``wilcoxon``, as in :func:`wilcoxon_signed_rank` (zero differences
    dropped, Wilcoxon's rule; exact for small samples, else the normal approximation with the tie and continuity
    corrections, as R's ``wilcox.test``: :func:`_signed_rank_p`). ``statistic`` is W+, the sum of the ranks of the
    positive differences (R's V), so that it says which way the difference goes (scipy's two-sided statistic is
    min(W+, W−)). ``n`` counts the pairs, ``n_nonzero`` those the test ranks. ``hodges_lehmann`` is the
    Hodges–Lehmann (1963) estimate that goes with the test, the median of the Walsh averages (d_i + d_j)/2, i <= j,
    over all n differences; ``median_difference`` the plain median of the differences. When every difference is 0
    there is nothing to rank: the p-value is NaN (as in :func:`wilcoxon_signed_rank`), W+ and both estimates 0.
    With no pairs everything but ``n`` is NaN.
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"x and y must be paired: one-dimensional and the same length ({a.shape}, {b.shape})")
    d = (a - b)[~(np.isnan(a) | np.isnan(b))]
    if np.isinf(d).any():
        raise ValueError("scores must be finite (NaN marks a missing score)")
    n, nonzero = len(d), d[d != 0]
    if n == 0:
        return PairedWilcoxon(NAN, NAN, 0, 0, NAN, NAN)
    if len(nonzero) == 0:
        return PairedWilcoxon(0.0, NAN, n, 0, 0.0, 0.0)
    ranks = _st.rankdata(np.abs(nonzero))
    return PairedWilcoxon(float(ranks[nonzero > 0].sum()), _signed_rank_p(d, ranks), n, len(nonzero),
                          float(np.median(d)), _walsh_median(d))


def _signed_rank_p(d: np.ndarray, ranks: np.ndarray | None = None) -> float:
    """Two-sided p-value of the signed-rank test of the differences ``d`` (some nonzero), the one scipy's
    ``wilcoxon(d, method="auto", correction=True)`` gives with its default ``zero_method="wilcox"`` (zeros dropped
    before ranking, Wilcoxon 1945): exact for n <= 50 without ties or zeros; the exact conditional distribution of
    the midranks for n <= 13 (zeros counted in n) with ties or zeros (:func:`_signed_rank_tied_p`: scipy runs a
    permutation test in Python there, 0.2 s at n = 10 and 1.5 s at n = 13 per test); otherwise the normal
    approximation with the tie correction of the variance and the continuity correction (|W+ − n(n+1)/4| less ½;
    R's ``wilcox.test`` default ``correct = TRUE``; scipy's default is ``correction=False``). ``ranks``: the
    midranks of the nonzero |d|, if already computed.
    """
    nonzero = d[d != 0]
    if ranks is None:
        ranks = _st.rankdata(np.abs(nonzero))
    if len(d) <= 13 and (len(nonzero) < len(d) or len(np.unique(ranks)) < len(ranks)):
        return _signed_rank_tied_p(ranks, float(ranks[nonzero > 0].sum()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_st.wilcoxon(d, alternative="two-sided", method="auto", correction=True).pvalue)


def _signed_rank_tied_p(ranks: np.ndarray, w_plus: float) -> float:
    """Two-sided p-value of W+ over all 2^m sign assignments of the (mid)ranks, the exact conditional test that
    scipy's ``wilcoxon(method="auto")`` runs for n <= 13 with ties or zeros, with the same result.

    scipy gets it from ``permutation_test``, which evaluates the statistic in Python for every one of the 2^n
    assignments (about 4 s at n = 13, per test: the score analysis runs one per pair of systems and scale);
    here the distribution of 2·W+ (midranks are multiples of ½) is the coefficients of Π (1 + t^(2·r_i)), one
    convolution per rank. p = min(1, 2 · min(P(W+ <= w), P(W+ >= w))), as scipy's two-sided rule.
    """
    doubled = np.round(2 * ranks).astype(np.int64)
    counts = np.zeros(int(doubled.sum()) + 1)
    counts[0] = 1.0
    for r in doubled:
        counts[r:] = counts[r:] + counts[: len(counts) - r].copy()
    probs = counts / counts.sum()
    w = round(2 * w_plus)
    return float(min(1.0, 2 * min(probs[: w + 1].sum(), probs[w:].sum())))


def _walsh_median(d: np.ndarray) -> float:
    """The Hodges–Lehmann estimate: the median of the Walsh averages (d_i + d_j)/2, i <= j.

    Written by hand because neither scipy nor numpy has it, and listing all n(n+1)/2 averages takes 10 GB
    for 50,000 pairs: the one or two middle sums are selected with :func:`_walsh_kth` instead.
    """
    s = np.sort(d)
    total = len(s) * (len(s) + 1) // 2
    low = _walsh_kth(s, (total + 1) // 2)
    high = low if total % 2 else _walsh_kth(s, total // 2 + 1)
    return float((low + high) / 4)  # each sum is twice an average


def _sums_at_most(s: np.ndarray, t: float) -> np.ndarray:
    """Per i, the number of j with s_i + s_j <= t (``s`` sorted), for the sums as computed in floating point.

    A binary search for t − s_i gives the count up to the rounding of the subtraction; where the computed sum
    at the boundary says otherwise, the count moves past the run of equal values there (repeated: rounding is
    monotone, so it ends within a step or two). Counting the computed sums keeps the counts consistent with
    the sums that :func:`_walsh_kth` finally lists.
    """
    n = len(s)
    c = np.searchsorted(s, t - s, side="right")
    while True:
        over = (c > 0) & (s + s[np.maximum(c - 1, 0)] > t)
        under = (c < n) & (s + s[np.minimum(c, n - 1)] <= t)
        if not over.any() and not under.any():
            return c
        c[over] = np.searchsorted(s, s[c[over] - 1], side="left")
        c[under] = np.searchsorted(s, s[c[under]], side="right")


def _walsh_kth(s: np.ndarray, k: int) -> float:
    """The k-th smallest (from 1) of the sums s_i + s_j, i <= j, of sorted ``s``, in O(n log n) memory-light steps.

    Bisection on the value t, keeping count(lo) < k <= count(hi), where count(t) is the number of sums <= t:
    (the ordered pairs from :func:`_sums_at_most` + the diagonal) / 2, as the sums are symmetric. It stops when
    at most n sums lie in (lo, hi] (they are listed and sorted) or when all of them are equal (ties: a median
    difference of 0 on a rating scale is shared by many pairs).
    """
    n = len(s)
    index = np.arange(n)

    def count(c: np.ndarray, t: float) -> int:
        return int((c.sum() + (2 * s <= t).sum()) // 2)

    lo, hi = float(np.nextafter(2 * s[0], -np.inf)), float(2 * s[-1])
    c_lo, c_hi = np.zeros(n, dtype=np.int64), np.full(n, n, dtype=np.int64)
    n_lo, n_hi = 0, n * (n + 1) // 2
    while n_hi - n_lo > n:
        start = np.maximum(c_lo, index)
        rows = start < c_hi  # the rows with a sum in (lo, hi]
        smallest = (s[rows] + s[start[rows]]).min()
        if smallest == (s[rows] + s[c_hi[rows] - 1]).max():
            return float(smallest)
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:  # adjacent floats: every sum in (lo, hi] is hi
            return hi
        c_mid = _sums_at_most(s, mid)
        n_mid = count(c_mid, mid)
        if n_mid >= k:
            hi, c_hi, n_hi = mid, c_mid, n_mid
        else:
            lo, c_lo, n_lo = mid, c_mid, n_mid
    start = np.maximum(c_lo, index)
    length = np.maximum(c_hi - start, 0)
    i = np.repeat(index, length)
    j = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length) + np.repeat(start, length)
    return float(np.sort(s[i] + s[j])[k - n_lo - 1])


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
    aside can leave another without a win). When every item wins and loses but the
    wins still split the items into groups that one direction of comparison never
    crosses (no finite maximum-likelihood fit exists), a group that never beats
    the others gets ``-inf`` and one never beaten ``+inf`` (see
    :func:`_dominated_groups`). The fit works on the aggregated win
    matrix, so its cost does not depend on the number of records. ``records``
    may also be three columns (arrays or a DataFrame), see :func:`win_matrix`.
    """
    return bradley_terry_matrix(*win_matrix(records, ties))


def _dominated_groups(sub: np.ndarray, compared: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Items of groups that never win / never lose against the rest, when every item wins and loses something.

    The maximum-likelihood fit exists only when the "beat" graph is strongly
    connected (Ford 1957; Hunter 2004, Assumption 1). When it is not, e.g.
    A and B beat each other and both always beat C and D, who beat each other,
    the likelihood grows without bound as {A, B} and {C, D} drift apart and
    the minorise–maximise fit would never converge. The strongly connected
    components of the graph with no win over any other component (bottom)
    get ``-inf``, those with no loss (top) ``+inf``, like single items that
    never win or lose; components with neither are left to the fit.
    """
    n_comp, label = connected_components(csr_matrix(sub > 0), directed=True, connection="strong")
    if n_comp < 2:
        return np.zeros(len(sub), dtype=bool), np.zeros(len(sub), dtype=bool)
    member = np.eye(n_comp)[label]  # items x components
    between = member.T @ sub @ member  # wins of component a over component b
    np.fill_diagonal(between, 0)
    out_wins, out_losses = between.sum(axis=1), between.sum(axis=0)
    bottom, top = (out_wins == 0) & (out_losses > 0), (out_losses == 0) & (out_wins > 0)
    return compared & bottom[label], compared & top[label]


def bradley_terry_matrix(items: Sequence[str], w: Any) -> dict[str, float]:
    """:func:`bradley_terry` from an aggregated win matrix (``w[i, j]`` = wins of ``items[i]`` over ``items[j]``).

    For callers that count wins themselves (the analysis does, on integer codes);
    :func:`win_matrix` builds the same matrix from records.
    """
    w = np.asarray(w, dtype=float)
    if w.shape != (len(items), len(items)):
        raise ValueError(f"the win matrix must be {len(items)} x {len(items)}, got {w.shape}")
    fixed, fit = _set_aside(w)
    logs = fixed.copy()
    if fit.any():
        fitted = np.log(_fit_bt(w[np.ix_(fit, fit)]))
        logs[fit] = fitted - fitted.mean()
    return {item: float(v) for item, v in zip(items, logs, strict=True)}


def _set_aside(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The items of a win matrix that get no finite fit, and those left to fit: ``(fixed, fit)``.

    ``fixed[k]`` is ``-inf`` for an item that never wins (nor ties), ``+inf`` for one that never loses, the same
    for whole groups that never beat / are never beaten by the rest (:func:`_dominated_groups`), NaN for an item
    in no comparison with the items that remain, and 0 for the items of ``fit``. Setting items aside is repeated,
    as setting one aside can leave another without a win. Shared by :func:`bradley_terry_matrix` and
    :func:`plackett_luce` (whose ``w[i, j]`` counts the rankings that put i above j).
    """
    fixed = np.zeros(len(w))
    active = np.ones(len(w), dtype=bool)
    while True:
        sub = w[np.ix_(active, active)]
        idx = np.flatnonzero(active)
        compared = (sub + sub.T).sum(axis=1) > 0
        wins, losses = sub.sum(axis=1), sub.sum(axis=0)
        never_win = compared & (wins == 0)
        never_lose = compared & (losses == 0) & ~never_win
        if not never_win.any() and not never_lose.any():
            never_win, never_lose = _dominated_groups(sub, compared)
            if not never_win.any() and not never_lose.any():
                break
        fixed[idx[never_win]] = -math.inf
        fixed[idx[never_lose]] = math.inf
        active[idx[never_win | never_lose]] = False
    idx = np.flatnonzero(active)
    sub = w[np.ix_(idx, idx)]
    compared = (sub + sub.T).sum(axis=1) > 0
    fixed[idx[~compared]] = NAN  # an item in no comparison at all has no estimate
    fit = np.zeros(len(w), dtype=bool)
    fit[idx[compared]] = True
    return fixed, fit


# ----------------------------------------------------------------------------- Bradley–Terry bootstrap


def bootstrap_indexes(n: int, resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """The resamples of :func:`bradley_terry_bootstrap`: ``resamples`` x ``n`` indexes drawn with replacement
    from ``range(n)`` by NumPy's PCG64 seeded with ``seed`` (the same seed gives the same resamples)."""
    if n < 0 or resamples < 1:
        raise ValueError(f"need n >= 0 and resamples >= 1, got n={n}, resamples={resamples}")
    dtype = np.int32 if n < 2**31 else np.int64  # half the memory and about twice as fast to draw
    return np.random.default_rng(seed).integers(0, max(n, 1), size=(resamples, n), dtype=dtype)


def _bt_loglik(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Bradley–Terry log-likelihood of each resample: sum over i, j of w_ij * log sigmoid(theta_i - theta_j)."""
    diff = theta[:, :, None] - theta[:, None, :]
    return (w * -np.logaddexp(0.0, -diff)).sum(axis=(1, 2))


def _newton_batch(theta: np.ndarray, derivatives: Any, loglik: Any, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Maximise many concave log-likelihoods of centred log-strengths at once (``theta``: problems x k, the start).

    ``derivatives(theta, rows)`` gives the gradient (problems x k) and the Hessian (problems x k x k, negative
    semi-definite, singular along (1, ..., 1)) of the problems ``rows`` at ``theta``; ``loglik(theta, rows)``
    their log-likelihoods. Damped Newton steps, one batched k x k solve per step, halving a problem's step while
    it would lower its likelihood; a problem stops when no log-strength moves by ``tol``. Shared by the
    Bradley–Terry and Plackett–Luce bootstraps. Returns the centred log-strengths.
    """
    theta = np.array(theta, dtype=float)
    n_res, k = theta.shape
    ones = np.ones((k, k)) / k  # H is singular along (1, ..., 1): adding this fixes the centring
    active = np.arange(n_res)
    for _ in range(max_iter):
        if not len(active):
            break
        th = theta[active]
        grad, hess = derivatives(th, active)
        step = np.linalg.solve(hess - ones[None], -grad[:, :, None])[:, :, 0]
        base = loglik(th, active)
        scale = np.ones(len(active))
        for _ in range(40):  # step halving where the likelihood would go down
            trial = th + scale[:, None] * step
            worse = loglik(trial, active) < base - 1e-12 * np.abs(base)
            if not worse.any():
                break
            scale[worse] /= 2
        trial -= trial.mean(axis=1, keepdims=True)
        done = np.max(np.abs(trial - th), axis=1) < tol
        theta[active] = trial
        active = active[~done]
    return theta - theta.mean(axis=1, keepdims=True)


def _fit_bt_batch(w: np.ndarray, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """The Bradley–Terry maximum-likelihood fit of a stack of win matrices at once (``w``: resamples x k x k,
    every item winning and losing something in every matrix). Returns centred log-strengths, resamples x k.

    Damped Newton steps on the log-strengths, vectorised over the resamples (:func:`_newton_batch`). Written by
    hand because scipy's optimisers fit one problem at a time, and the minorise–maximise steps of
    :func:`_fit_bt` need millions of iterations on lopsided data (a source winning 2,000 to 1: 15 s for 1,000
    resamples); Newton takes a few dozen. The log-likelihood is concave and the fit exists (every item wins
    and loses), so it converges to the same optimum as :func:`_fit_bt` (a test compares them).
    """
    n_res, k, _ = w.shape
    n_ij = w + np.transpose(w, (0, 2, 1))
    wins = w.sum(axis=2)

    def derivatives(th: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nn = n_ij[rows]
        prob = 1.0 / (1.0 + np.exp(th[:, None, :] - th[:, :, None]))  # P(i beats j)
        grad = wins[rows] - (nn * prob).sum(axis=2)
        curv = nn * prob * (1.0 - prob)
        return grad, curv - np.eye(k)[None] * curv.sum(axis=2)[:, :, None]

    return _newton_batch(np.zeros((n_res, k)), derivatives, lambda th, rows: _bt_loglik(th, w[rows]), tol, max_iter)


def _resampled_totals(per_eval: np.ndarray, resamples: int, seed: int) -> Iterable[tuple[int, np.ndarray]]:
    """The evaluator bootstrap's totals: per resample (:func:`bootstrap_indexes`), the sum of the rows of
    ``per_eval`` (evaluators x cells: each evaluator's counts) over the evaluators it drew, as
    (first resample, resamples x cells) in chunks. One matrix product per chunk: the resample's count of each
    evaluator times ``per_eval``. Shared by the Bradley–Terry and Plackett–Luce bootstraps."""
    n_eval = len(per_eval)
    idx = bootstrap_indexes(n_eval, resamples, seed)
    # float32 products and sums are exact while every partial sum is a multiple of 1/2 below 2**23 (wins are
    # whole, ties halves): then the faster single-precision product gives exactly the double-precision result
    halves = np.all(per_eval * 2 == np.round(per_eval * 2))
    exact = np.float32 if halves and n_eval * float(per_eval.max(initial=0)) < 2**22 else np.float64
    per_eval_exact = per_eval.astype(exact)
    # resample counts in chunks of ~2M cells (16 MB): faster than one large array here, and memory stays small
    chunk = max(1, min(resamples, 2_000_000 // max(n_eval, 1)))
    for start in range(0, resamples, chunk):
        rows = idx[start:start + chunk]
        flat = (np.arange(len(rows), dtype=np.int64)[:, None] * n_eval + rows).ravel()  # evaluator draws per row
        counts = np.bincount(flat, minlength=len(rows) * n_eval).reshape(len(rows), n_eval).astype(exact)
        yield start, (counts @ per_eval_exact).astype(float)


def _percentile_bounds(strengths: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``strengths`` (resamples x items), the percentile interval over its non-NaN values: the
    ``lower`` / ``higher`` order statistics at (1 ∓ confidence) / 2 (no interpolation between an infinity and a
    number); NaN for a column with no value."""
    low_q, high_q = (1 - confidence) / 2, (1 + confidence) / 2
    low, high = np.full(strengths.shape[1], NAN), np.full(strengths.shape[1], NAN)
    for j in range(strengths.shape[1]):
        values = strengths[:, j][~np.isnan(strengths[:, j])]
        if len(values):
            low[j] = float(np.quantile(values, low_q, method="lower"))
            high[j] = float(np.quantile(values, high_q, method="higher"))
    return low, high


def bradley_terry_bootstrap(items: Sequence[str], evaluator: Any, winner: Any, loser: Any, weight: Any = None, *,
                            resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Percentile bootstrap intervals of the Bradley–Terry log-strengths, resampling *evaluators*.

    The comparisons are given as columns of codes: ``evaluator`` (0..E-1),
    ``winner`` and ``loser`` (indexes into ``items``) and ``weight`` (1 per win;
    a tie is two rows of 0.5, one each way, as :func:`win_matrix` counts it).
    Judgments of one evaluator are not independent, so a resample draws E
    evaluators with replacement (:func:`bootstrap_indexes`) and takes all their
    judgments; each resample's win matrix is the resample counts times the
    per-evaluator win matrices (one matrix product over all resamples), and
    the resamples are fitted together (:func:`_fit_bt_batch`).

    Each resample is fitted by the same rule as :func:`bradley_terry_matrix`: a
    source that never wins in it gets ``-inf``, one that never loses ``+inf``
    (those resamples are fitted one by one). The infinities are kept as the
    most extreme values, so when more than (1 - confidence) / 2 of the
    resamples give ``-inf``, the lower bound is ``-inf``: the data cannot rule
    out that the source (almost) never wins. A resample in which a source was
    not compared at all (none of its evaluators drawn) is left out of that
    source's interval. The bounds are order statistics (``lower`` /
    ``higher`` quantiles, no interpolation between an infinity and a number).
    With fewer than two evaluators (counting those with a judgment of
    positive weight) there is nothing to resample: every resample would be
    the data themselves, a zero-width interval claiming a certainty the data
    do not have, so every interval is NaN (as in :func:`plackett_luce_bootstrap`).

    Returns a frame ``source, low, high`` in the order of ``items``.
    """
    _check_confidence(confidence)
    k = len(items)
    evaluator, winner, loser = (np.asarray(c, dtype=np.int64) for c in (evaluator, winner, loser))
    weight = np.ones(len(evaluator)) if weight is None else np.asarray(weight, dtype=float)
    if not len(evaluator) == len(winner) == len(loser) == len(weight):
        raise ValueError("evaluator, winner, loser and weight must have the same length")
    if len(winner) and (min(winner.min(), loser.min()) < 0 or max(winner.max(), loser.max()) >= k):
        raise ValueError(f"winner and loser must be item indexes in 0..{k - 1}")
    if len(evaluator) and evaluator.min() < 0:
        raise ValueError("evaluator codes must be >= 0")
    out = pd.DataFrame({"source": list(items), "low": NAN, "high": NAN})
    if len(np.unique(evaluator[weight > 0])) < 2 or k == 0:  # no judgment, or one evaluator: no interval
        return out
    n_eval = int(evaluator.max()) + 1
    # per-evaluator win matrices, only over the (winner, loser) cells that occur: E x U
    cell = winner * k + loser
    used, cell_code = np.unique(cell, return_inverse=True)
    per_eval = np.bincount(evaluator * len(used) + cell_code, weights=weight,
                           minlength=n_eval * len(used)).reshape(n_eval, len(used))
    strengths = np.empty((resamples, k))
    for start, totals in _resampled_totals(per_eval, resamples, seed):
        w = np.zeros((len(totals), k * k))
        w[:, used] = totals
        strengths[start:start + len(totals)] = _bootstrap_fits(list(items), w.reshape(len(totals), k, k))
    out["low"], out["high"] = _percentile_bounds(strengths, confidence)
    return out


def _strongly_connected(beat: np.ndarray) -> np.ndarray:
    """Per matrix of a stack (resamples x k x k, ``beat[b, i, j]``: i beat j): can every item reach every
    other through wins? Transitive closure by repeated squaring, all resamples at once."""
    k = beat.shape[1]
    reach = (beat | np.eye(k, dtype=bool)).astype(np.float32)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2))))):
        reach = (reach @ reach > 0).astype(np.float32)
    return reach.reshape(len(beat), -1).all(axis=1)


def _bootstrap_fits(items: list[str], w: np.ndarray) -> np.ndarray:
    """Log-strengths of a stack of win matrices: resamples whose wins connect every item with every other
    (the fit exists and is finite) are fitted together; the others one by one with
    :func:`bradley_terry_matrix` (infinities for sources that never win or lose, NaN when not compared)."""
    regular = _strongly_connected(w > 0)
    out = np.empty(w.shape[:2])
    if regular.any():
        out[regular] = _fit_bt_batch(w[regular])
    for b in np.flatnonzero(~regular):
        fitted = bradley_terry_matrix(items, w[b])
        out[b] = [fitted[item] for item in items]
    return out


# ----------------------------------------------------------------------------- signal detection and calibration


@dataclass(frozen=True)
class DPrime:
    """Sensitivity and response bias of yes/no judgments (see :func:`d_prime`)."""

    d_prime: float
    criterion: float
    hit_rate: float
    false_alarm_rate: float


def d_prime(hits: int, n_signal: int, false_alarms: int, n_noise: int, correction: str = "loglinear") -> DPrime:
    """Signal-detection sensitivity d' = z(H) − z(F) and criterion c = −(z(H) + z(F))/2 (Macmillan & Creelman 2005).

    For real-vs-generated judgments, e.g. signal = a real text: a hit is "real" said of a real text, a false
    alarm "real" said of a generated one. d' = 0 is chance (the generated texts pass as real), c > 0 a
    leaning towards "generated". z is the standard normal quantile. ``correction="loglinear"`` (default)
    adds 0.5 to the hits and the false alarms and 1 to n_signal and n_noise before the rates are taken
    (Hautus 1995), to every count and not only when a rate is 0 or 1: d' then stays finite at rates of 0
    or 1 and does not jump when a count reaches 0 or n, and Hautus found it less biased than replacing only
    the extreme rates (by 1/(2n)). ``"none"`` uses the raw rates (d' is infinite at a rate of 0 or 1). The
    rates returned are the ones used. NaN when n_signal or n_noise is 0.
    """
    if correction not in ("loglinear", "none"):
        raise ValueError(f"correction must be 'loglinear' or 'none', got {correction!r}")
    _check_counts(hits, n_signal)
    _check_counts(false_alarms, n_noise)
    if n_signal == 0 or n_noise == 0:
        return DPrime(NAN, NAN, NAN, NAN)
    add = 0.5 if correction == "loglinear" else 0.0
    h = (hits + add) / (n_signal + 2 * add)
    f = (false_alarms + add) / (n_noise + 2 * add)
    zh, zf = float(_st.norm.ppf(h)), float(_st.norm.ppf(f))
    with np.errstate(invalid="ignore"):
        return DPrime(float(np.subtract(zh, zf)), float(-np.add(zh, zf) / 2), h, f)


@dataclass(frozen=True, eq=False)
class Calibration:
    """Stated confidence against accuracy (see :func:`expected_calibration_error`)."""

    ece: float
    n: int
    accuracy: float
    mean_stated: float
    table: pd.DataFrame


def expected_calibration_error(confidence_levels: Any, correct: Any, n_levels: int,
                               stated: Sequence[float] | None = None, confidence: float = 0.95) -> Calibration:
    """Expected calibration error of confidence ratings, with the table of a reliability chart (Naeini et al.
    2015; Guo et al. 2017): ECE = Σ_l (n_l / N) · |accuracy_l − stated_l|, one bin per confidence level.

    ``confidence_levels[i]`` is the level 1..``n_levels`` an evaluator gave with judgment i and ``correct[i]``
    whether the judgment was right (bool or 0/1); a pair with a NaN is dropped. Level l stands for the
    probability of being right ``stated[l - 1]``; by default the levels are evenly spaced from 0.5 (level 1,
    guessing between two answers) to 1.0 (level K, certain): 0.5 + 0.5 (l − 1)/(K − 1), e.g. 0.5, 0.75, 1.0
    for three levels. ``table`` has one row per level, used or not: level, stated, accuracy, n and the
    Wilson interval low, high of the accuracy (NaN where n = 0). ``accuracy - mean_stated`` < 0 is
    over-confidence. ECE and the means are NaN with no judgments.
    """
    _check_confidence(confidence)
    if isinstance(n_levels, bool) or int(n_levels) != n_levels or n_levels < 2:
        raise ValueError(f"n_levels must be a whole number >= 2, got {n_levels}")
    n_levels = int(n_levels)
    if stated is None:
        probs = 0.5 + 0.5 * np.arange(n_levels) / (n_levels - 1)
    else:
        probs = np.asarray(stated, dtype=float)
        if probs.shape != (n_levels,) or not ((probs >= 0) & (probs <= 1)).all():
            raise ValueError(f"stated must be {n_levels} probabilities in [0, 1], got {stated}")
    level, right = np.asarray(confidence_levels, dtype=float), np.asarray(correct, dtype=float)
    if level.ndim != 1 or level.shape != right.shape:
        raise ValueError(f"confidence_levels and correct must be paired: one-dimensional, same length "
                         f"({level.shape}, {right.shape})")
    keep = ~(np.isnan(level) | np.isnan(right))
    level, right = level[keep], right[keep]
    bad = ~np.isin(level, np.arange(1, n_levels + 1))
    if bad.any():
        raise ValueError(f"confidence levels must be whole numbers 1..{n_levels}, got {level[bad][0]:g}")
    if not np.isin(right, (0, 1)).all():
        raise ValueError("correct must be True/False or 1/0")
    code = level.astype(np.int64) - 1
    n = np.bincount(code, minlength=n_levels)
    wins = np.bincount(code, weights=right, minlength=n_levels).round().astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = wins / n
    intervals = [wilson_interval(int(w), int(m), confidence) for w, m in zip(wins, n, strict=True)]
    table = pd.DataFrame({"level": np.arange(1, n_levels + 1), "stated": probs, "accuracy": accuracy, "n": n,
                          "low": [lo for lo, _ in intervals], "high": [hi for _, hi in intervals]})
    total = int(n.sum())
    if total == 0:
        return Calibration(NAN, 0, NAN, NAN, table)
    used = n > 0
    ece = float((n[used] / total * np.abs(accuracy[used] - probs[used])).sum())
    return Calibration(ece, total, float(right.mean()), float(probs[code].mean()), table)


# ----------------------------------------------------------------------------- rankings: Plackett–Luce, best of n


def _item_codes(names: list[Any], items: Sequence[str] | None) -> tuple[list[str], np.ndarray]:
    """The item list (``items``, or the sorted names) and the code of every name; a name not in ``items`` is an
    error."""
    for name in names:
        if not isinstance(name, str):
            if isinstance(name, Iterable):
                raise ValueError(f"ties are not supported: got the group {name!r} where an item name belongs")
            raise ValueError(f"item names must be strings, got {name!r}")
    if items is None:
        uniques, codes = np.unique(np.asarray(names, dtype=str), return_inverse=True)
        return [str(u) for u in uniques], codes.astype(np.int64)
    items = list(items)
    index = pd.Index(items)
    if not index.is_unique:
        raise ValueError("items must not repeat a name")
    codes = index.get_indexer(pd.Index(names, dtype=object)) if names else np.zeros(0, dtype=np.int64)
    if (codes < 0).any():
        raise ValueError(f"unknown item {names[int(np.flatnonzero(codes < 0)[0])]!r}: not in items")
    return items, codes.astype(np.int64)


def _ragged(groups: Iterable[Sequence[str]], what: str) -> tuple[list[Any], np.ndarray]:
    """All names of a sequence of name sequences, flattened, and each sequence's length."""
    names: list[Any] = []
    lengths = []
    for group in groups:
        if isinstance(group, str):
            raise ValueError(f"each {what} is a sequence of item names, got the string {group!r}")
        group = list(group)
        names.extend(group)
        lengths.append(len(group))
    return names, np.asarray(lengths, dtype=np.int64)


def _first_repeat(lengths: np.ndarray, codes: np.ndarray, k: int) -> tuple[int, int] | None:
    """(group, item code) of the first item listed twice within one group of a ragged list, or None."""
    cells = np.sort(np.repeat(np.arange(len(lengths)), lengths) * max(k, 1) + codes)
    twice = cells[1:][cells[1:] == cells[:-1]]
    if not len(twice):
        return None
    group, code = divmod(int(twice[0]), max(k, 1))
    return group, code


def _padded(codes: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Ragged rows of codes as a rows x longest matrix, -1 after each row's end."""
    out = np.full((len(lengths), int(lengths.max(initial=0))), -1, dtype=np.int64)
    row = np.repeat(np.arange(len(lengths)), lengths)
    out[row, np.arange(len(codes)) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = codes
    return out


def plackett_luce(rankings: Iterable[Sequence[str]], items: Sequence[str] | None = None, *,
                  weights: Sequence[float] | None = None) -> dict[str, float]:
    """Maximum-likelihood Plackett–Luce log-strengths from rankings (Luce 1959; Plackett 1975), centred to mean 0
    over the finite ones, as :func:`bradley_terry`.

    Each ranking is a sequence of item names, best first, of any subset of the items; rankings of fewer than
    two items carry no information and are skipped. Ties are not allowed: a group of names in place of a
    name, or a name listed twice in one ranking, is an error. In the model the first of a ranking is chosen
    from all its items with probability proportional to strength, the second from the rest, and so on; on
    rankings of two items it is Bradley–Terry. ``items`` gives the items and their order (a ranked name not in
    it is an error, an item never ranked with another gets NaN); without it, the names ranked, sorted.

    A finite maximum exists only when no group of items is ranked above every other item wherever they meet
    (Hunter 2004, Assumption 2). As in :func:`bradley_terry_matrix`, with ``w[i, j]`` = the rankings that put i
    above j: an item never ranked above another gets ``-inf``, one never ranked below another ``+inf``, groups
    likewise, and the rest are fitted on the rankings with those left out (the limit of the likelihood).

    Fitted by Hunter's (2004) minorise–maximise algorithm, vectorised over the rankings, finished by scipy's
    BFGS where it is slow (:func:`_fit_pl`). Written by hand: ``choix`` has the same algorithm but loops over
    every ranking and position in Python on each step, and raises where no finite fit exists.

    ``weights`` (one per ranking, >= 0) count each ranking that many times: the analysis passes each
    distinct ranking once with the number of times it was given, so the fit does not grow with the answers.
    """
    names, lengths = _ragged(rankings, "ranking")
    item_list, codes = _item_codes(names, items)
    k = len(item_list)
    repeat = _first_repeat(lengths, codes, k)
    if repeat is not None:
        raise ValueError(f"ranking {repeat[0]} lists {item_list[repeat[1]]!r} twice: ties are not supported")
    counts = _counts(weights, len(lengths), "ranking")
    keep = lengths >= 2 if counts is None else (lengths >= 2) & (counts > 0)
    logs = _pl_logs(_padded(codes, lengths)[keep], None if counts is None else counts[keep], k)
    return {item: float(v) for item, v in zip(item_list, logs, strict=True)}


def _above(ranked: np.ndarray, counts: np.ndarray | None, k: int) -> np.ndarray:
    """``w[i, j]``: the rankings (rows of codes, -1 after the end; weighted by ``counts``) placing i above j."""
    above = np.zeros(k * k)
    for step in range(1, ranked.shape[1]):  # rankings with i placed `step` positions above j
        a, b = ranked[:, :-step], ranked[:, step:]
        both = (a >= 0) & (b >= 0)
        per = None if counts is None else np.broadcast_to(counts[:, None], a.shape)[both]
        above += np.bincount(a[both] * k + b[both], weights=per, minlength=k * k)
    return above.reshape(k, k)


def _compact_rankings(ranked: np.ndarray, fit: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rankings with only the items of ``fit``, recoded 0..fit.sum()-1: (rows of codes, their lengths, which
    rankings kept two or more items and so stay)."""
    new_code = np.where(fit, np.cumsum(fit) - 1, -1)
    kept = np.where(ranked >= 0, new_code[np.maximum(ranked, 0)], -1)
    kept_lengths = (kept >= 0).sum(axis=1)
    enough = kept_lengths >= 2
    kept, kept_lengths = kept[enough], kept_lengths[enough]
    return _padded(kept[kept >= 0], kept_lengths), kept_lengths, enough  # row-major order keeps each order


def _pl_logs(ranked: np.ndarray, counts: np.ndarray | None, k: int) -> np.ndarray:
    """:func:`plackett_luce`'s log-strengths of the rankings ``ranked`` (rows of codes 0..k-1, -1 after the end,
    each ranking two or more items) weighted by ``counts``: infinities and NaN by :func:`_set_aside`, the rest
    fitted (:func:`_fit_pl`) on the rankings with those left out and centred."""
    fixed, fit = _set_aside(_above(ranked, counts, k))
    logs = fixed.copy()
    if fit.any():
        compact, lengths, enough = _compact_rankings(ranked, fit)
        fitted = np.log(_fit_pl(compact, lengths, int(fit.sum()), weights=None if counts is None else counts[enough]))
        logs[fit] = fitted - fitted.mean()
    return logs


def _counts(weights: Sequence[float] | None, n: int, what: str) -> np.ndarray | None:
    """``weights`` as a float array of ``n`` finite values >= 0 (None stays None: every row counts once)."""
    if weights is None:
        return None
    w = np.asarray(weights, dtype=float)
    if w.shape != (n,):
        raise ValueError(f"weights must give one number per {what} ({n}), got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights must be finite and >= 0")
    return w


def _pl_terms(theta: np.ndarray, ranked: np.ndarray, present: np.ndarray, stage: np.ndarray,
              inverse: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """Plackett–Luce log-likelihood of log-strengths ``theta``, with γ = exp(θ − max θ) and, per item, the sum over
    the stages it takes part in of 1 / (γ summed over the stage's items): the MM denominator. The gradient is
    wins − γ · that sum. All rankings at once: tail sums by a reversed cumulative sum along the positions, their
    reciprocals summed over the stages up to each position by another, gathered per item by ``np.bincount``.
    ``weights`` (per ranking) multiply each ranking's terms.
    """
    shift = theta.max()
    gamma = np.exp(theta - shift)
    g = np.where(present, gamma[ranked], 0.0)
    tail = np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
    np.divide(1.0, tail, out=inverse, where=stage)  # ``inverse`` stays 0 where there is no stage
    if weights is None:
        denom = np.bincount(ranked[present], weights=np.cumsum(inverse, axis=1)[present], minlength=len(theta))
        loglik = float(theta[ranked[stage]].sum() - (np.log(tail[stage]) + shift).sum())
        return loglik, gamma, denom
    per = np.broadcast_to(weights[:, None], ranked.shape)
    denom = np.bincount(ranked[present], weights=(np.cumsum(inverse, axis=1) * per)[present], minlength=len(theta))
    loglik = float((per[stage] * (theta[ranked[stage]] - np.log(tail[stage]) - shift)).sum())
    return loglik, gamma, denom


def _fit_pl(ranked: np.ndarray, lengths: np.ndarray, k: int, tol: float = 1e-12, mm_steps: int = 1000,
            weights: np.ndarray | None = None) -> np.ndarray:
    """Plackett–Luce strengths (geometric mean 1) of a rankings x positions matrix of codes (-1 = no item).

    Minorise–maximise (Hunter 2004, §5): γ_i ← w_i / Σ_{stages with i} 1 / Σ_{items of the stage} γ, where
    w_i counts the stages at which i was chosen (its rankings, less those that put it last). The steps
    converge linearly, and slowly when one item nearly always beats another (5,001 rankings of five items,
    all but one in the same order, were not done after 100,000 steps, 41 s). After ``mm_steps`` steps the
    fit is finished by scipy's BFGS on the log-likelihood and its gradient (the log-likelihood is concave,
    so both reach the same maximum; a test compares them).
    """
    present = ranked >= 0
    stage = np.arange(ranked.shape[1])[None, :] < (lengths - 1)[:, None]
    per = None if weights is None else np.broadcast_to(weights[:, None], ranked.shape)[stage]
    wins = np.bincount(ranked[stage], weights=per, minlength=k).astype(float)
    inverse = np.zeros(ranked.shape)
    theta = np.zeros(k)
    for _ in range(mm_steps):
        _, _, denom = _pl_terms(theta, ranked, present, stage, inverse, weights)
        new = np.log(wins / denom)
        new -= new.mean()
        if np.max(np.abs(new - theta)) < tol:
            return np.exp(new)
        theta = new

    def minus_loglik(th: np.ndarray) -> tuple[float, np.ndarray]:
        loglik, gamma, denom = _pl_terms(th, ranked, present, stage, inverse, weights)
        return -loglik, -(wins - gamma * denom)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "precision loss": the line search cannot improve at float precision
        result = _optimize.minimize(minus_loglik, theta, jac=True, method="BFGS", options={"gtol": 1e-10})
    theta = result.x - result.x.mean()
    return np.exp(theta)


def plackett_luce_bootstrap(rankings: Sequence[Sequence[str]], evaluator: Any, ranking: Any, weight: Any = None, *,
                            items: Sequence[str] | None = None, resamples: int = 1000, confidence: float = 0.95,
                            seed: int = 0) -> pd.DataFrame:
    """Percentile bootstrap intervals of the Plackett–Luce log-strengths (:func:`plackett_luce`), resampling
    *evaluators* (Efron & Tibshirani 1993), as :func:`bradley_terry_bootstrap` does for Bradley–Terry.

    ``rankings`` are the distinct rankings (item names, best first; ``items`` as in :func:`plackett_luce`), and
    ``evaluator`` (codes >= 0), ``ranking`` (indexes into ``rankings``) and ``weight`` (how many times; 1 by
    default) are parallel columns: one row per (evaluator, ranking given). A resample draws the evaluators with
    replacement (:func:`bootstrap_indexes`, ``seed``) and counts each ranking as often as its drawn evaluators gave
    it (one matrix product for all resamples, shared with Bradley–Terry); the resamples are refitted together by
    damped Newton steps on their choice-set counts (:func:`_choice_sets`, :func:`_fit_pl_batch`), starting from
    the full data's estimate.

    A resample whose rankings do not connect every item (no finite fit) is fitted by :func:`plackett_luce`'s
    rule, one by one: ``-inf`` / ``inf`` for items never ranked above / below another, NaN where an item was
    not ranked (left out of its interval). The bounds are order statistics (:func:`_percentile_bounds`). An item
    infinite in the full data is infinite in every resample (its interval is that infinity), one never ranked
    with another has none (NaN). With fewer than two evaluators there is nothing to resample: every interval is
    NaN. Rankings of fewer than two items carry no information and are ignored.

    Returns a frame ``item, low, high`` in the order of the items.
    """
    _check_confidence(confidence)
    names, lengths = _ragged(rankings, "ranking")
    item_list, codes = _item_codes(names, items)
    k = len(item_list)
    repeat = _first_repeat(lengths, codes, k)
    if repeat is not None:
        raise ValueError(f"ranking {repeat[0]} lists {item_list[repeat[1]]!r} twice: ties are not supported")
    evaluator, ranking = (np.asarray(c, dtype=np.int64).ravel() for c in (evaluator, ranking))
    weight = np.ones(len(evaluator)) if weight is None else np.asarray(weight, dtype=float).ravel()
    if not len(evaluator) == len(ranking) == len(weight):
        raise ValueError("evaluator, ranking and weight must have the same length")
    if len(ranking) and (ranking.min() < 0 or ranking.max() >= len(lengths)):
        raise ValueError(f"ranking must index the rankings, 0..{len(lengths) - 1}")
    if len(evaluator) and evaluator.min() < 0:
        raise ValueError("evaluator codes must be >= 0")
    if not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError("weights must be finite and >= 0")
    out = pd.DataFrame({"item": item_list, "low": NAN, "high": NAN})
    informative = (lengths[ranking] >= 2) & (weight > 0) if len(ranking) else np.zeros(0, dtype=bool)
    _, ev = np.unique(evaluator[informative], return_inverse=True)
    n_eval, n_rank = int(ev.max(initial=-1)) + 1, len(lengths)
    if n_eval < 2 or k < 2:
        return out
    per_eval = np.bincount(ev * n_rank + ranking[informative], weights=weight[informative],
                           minlength=n_eval * n_rank).reshape(n_eval, n_rank)
    ranked = _padded(codes, lengths)
    usable = lengths >= 2
    ranked, per_eval = ranked[usable], per_eval[:, usable]
    fixed, fit = _set_aside(_above(ranked, per_eval.sum(axis=0), k))
    infinite = np.isinf(fixed)
    out.loc[infinite, "low"] = out.loc[infinite, "high"] = fixed[infinite]
    if not fit.any():
        return out
    compact, _, enough = _compact_rankings(ranked, fit)
    # rankings that differ only in items set aside are now the same: merge them
    distinct, inverse = np.unique(compact, axis=0, return_inverse=True)
    merged = np.zeros((n_eval, len(distinct)))
    np.add.at(merged.T, inverse.ravel(), per_eval[:, enough].T)
    kf, lengths_fit = int(fit.sum()), (distinct >= 0).sum(axis=1)
    theta0 = np.log(_fit_pl(distinct, lengths_fit, kf, weights=merged.sum(axis=0)))
    theta0 -= theta0.mean()
    sets, to_sets, chosen, pairs = _choice_sets(distinct, lengths_fit, kf)
    strengths = np.empty((resamples, kf))
    for start, totals in _resampled_totals(merged, resamples, seed):
        regular = _strongly_connected(np.asarray(pairs.T @ totals.T).T.reshape(len(totals), kf, kf) > 0)
        part = np.empty((len(totals), kf))
        if regular.any():
            given = totals[regular]
            part[regular] = _fit_pl_batch(sets, np.asarray(to_sets.T @ given.T).T, np.asarray(chosen.T @ given.T).T,
                                          theta0)
        for b in np.flatnonzero(~regular):
            given = totals[b] > 0
            part[b] = _pl_logs(distinct[given], totals[b][given], kf)
        strengths[start:start + len(totals)] = part
    low, high = _percentile_bounds(strengths, confidence)
    out.loc[fit, "low"], out.loc[fit, "high"] = low, high
    return out


def _choice_sets(ranked: np.ndarray, lengths: np.ndarray, k: int) -> tuple[np.ndarray, Any, Any, Any]:
    """The rankings (rows of codes 0..k-1, -1 after the end) as the choices the Plackett–Luce model sees: at each
    stage the first of the items left is chosen from them. Returns the distinct choice sets (C x k, 0/1), and as
    sparse matrices per ranking its choice sets (rankings x C, how often), the items it chose at a stage
    (rankings x k) and the pairs it orders (rankings x k², cell i * k + j: i above j)."""
    n_pat, width = ranked.shape
    stage_of = np.arange(width)[None, :] < (lengths - 1)[:, None]
    pattern, stage = np.nonzero(stage_of)
    member = np.zeros((len(pattern), k), dtype=bool)  # one row per (ranking, stage): the items from there on
    later = np.arange(width)[None, :] >= stage[:, None]
    rows, cols = np.nonzero(later & (ranked[pattern] >= 0))
    member[rows, ranked[pattern][rows, cols]] = True
    sets, which = np.unique(member, axis=0, return_inverse=True)
    ones = np.ones(len(pattern))
    to_sets = csr_matrix((ones, (pattern, which.ravel())), shape=(n_pat, len(sets)))
    chosen = csr_matrix((ones, (pattern, ranked[pattern, stage])), shape=(n_pat, k))
    # pairs: the item chosen at a stage is above every other item of its set
    p_rows, items = np.nonzero(member)
    first = ranked[pattern, stage][p_rows]
    keep = items != first
    pairs = csr_matrix((np.ones(int(keep.sum())), (pattern[p_rows][keep], first[keep] * k + items[keep])),
                       shape=(n_pat, k * k))
    return sets.astype(float), to_sets, chosen, pairs


def _fit_pl_batch(sets: np.ndarray, n: np.ndarray, wins: np.ndarray, theta0: np.ndarray, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Plackett–Luce log-strengths (centred) of many problems at once, each given by its choices: ``sets``
    (C x k, 0/1) the distinct sets chosen from, ``n`` (problems x C) how often each set was chosen from, ``wins``
    (problems x k) how often each item was chosen; every problem's choices connecting all k items. Damped Newton
    steps (:func:`_newton_batch`) from ``theta0`` (the full data's estimate: a resample's fit lies near it).

    The log-likelihood is Σ wins · θ − Σ_S n_S log Σ_{j∈S} γ_j (γ = exp θ), so with π_S = γ / Σ_S γ on S the
    gradient is wins − Σ_S n_S π_S and the Hessian −Σ_S n_S (diag π_S − π_S π_Sᵀ): matrix products over the
    choice sets, whose number is at most 2^k (64 for six systems) however many distinct rankings there are.
    """
    k = sets.shape[1]
    pair_sets = (sets[:, :, None] * sets[:, None, :]).reshape(len(sets), k * k)

    def parts(th: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shift = th.max(axis=1, keepdims=True)
        gamma = np.exp(th - shift)
        return shift, gamma, gamma @ sets.T  # the sums of γ over each set

    def loglik(th: np.ndarray, rows: np.ndarray) -> np.ndarray:
        shift, _, total = parts(th)
        return (wins[rows] * th).sum(axis=1) - (n[rows] * (np.log(total) + shift)).sum(axis=1)

    def derivatives(th: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, gamma, total = parts(th)
        expected = ((n[rows] / total) @ sets) * gamma
        outer = ((n[rows] / total**2) @ pair_sets).reshape(len(rows), k, k) * gamma[:, :, None] * gamma[:, None, :]
        return wins[rows] - expected, outer - expected[:, :, None] * np.eye(k)[None]

    return _newton_batch(np.broadcast_to(theta0, (len(n), k)), derivatives, loglik, tol, max_iter)


def best_of_n_shares(winners: Sequence[str], shown: Sequence[Sequence[str]], items: Sequence[str] | None = None,
                     confidence: float = 0.95, *, weights: Sequence[int] | None = None) -> pd.DataFrame:
    """Per item: how often it was chosen as the best of the n shown, with a Wilson interval and an exact test
    against chance.

    Question q showed the items ``shown[q]`` (two or more, distinct; n_q may differ between questions) and the
    evaluator chose ``winners[q]`` among them. ``share`` = wins / times shown, with the Wilson (1927) interval.
    Under the null of a choice at random, an item wins a question of n items with probability 1/n, so its
    wins follow a sum of binomials, one per question size: ``chance`` is its expected share (the mean of
    1/n_q over its questions) and ``p_value`` the exact two-sided test of its wins against that distribution,
    by the rule of :func:`binomial_test` (the outcomes no more likely than the observed one); when all its
    questions have the same n this is :func:`binomial_test` against 1/n. Each item is tested on its own.

    Returns a frame item, wins, shown, share, low, high, chance, p_value; items in the order of ``items``
    (an item in no question: shown 0, share NaN, p-value 1), or the names shown, sorted.

    ``weights`` (whole numbers >= 0, one per question) count each question that many times: the analysis
    passes each distinct (shown, winner) once with the number of answers that gave it.
    """
    _check_confidence(confidence)
    names, lengths = _ragged(shown, "question's shown items")
    winners = list(winners)
    if len(winners) != len(lengths):
        raise ValueError(f"winners and shown must have one entry per question ({len(winners)} and {len(lengths)})")
    counts = _counts(weights, len(lengths), "question")
    if counts is not None and (counts != np.round(counts)).any():
        raise ValueError("weights of best_of_n_shares count questions: whole numbers")
    if (lengths < 2).any():
        raise ValueError(f"question {int(np.flatnonzero(lengths < 2)[0])} shows fewer than two items")
    item_list, codes = _item_codes(names + winners, items)
    codes, winner_codes = codes[: len(names)], codes[len(names):]
    k = len(item_list)
    question = np.repeat(np.arange(len(lengths)), lengths)
    repeat = _first_repeat(lengths, codes, k)
    if repeat is not None:
        raise ValueError(f"question {repeat[0]} shows {item_list[repeat[1]]!r} twice")
    in_question = np.zeros(len(lengths), dtype=bool)
    in_question[question[codes == winner_codes[question]]] = True
    if not in_question.all():
        q = int(np.flatnonzero(~in_question)[0])
        raise ValueError(f"question {q}: the winner {winners[q]!r} is not among the items shown")
    size = lengths[question]  # n of the question, per item shown
    if counts is None:
        wins = np.bincount(winner_codes, minlength=k)
        times = np.bincount(codes, minlength=k)
        chance_sum = np.bincount(codes, weights=1.0 / size, minlength=k)
    else:
        per = counts[question]  # each shown item counts as often as its question
        wins = np.bincount(winner_codes, weights=counts, minlength=k).round().astype(np.int64)
        times = np.bincount(codes, weights=per, minlength=k).round().astype(np.int64)
        chance_sum = np.bincount(codes, weights=per / size, minlength=k)
    rows = []
    for j, item in enumerate(item_list):
        low, high = wilson_interval(int(wins[j]), int(times[j]), confidence)
        if counts is None:
            sizes, per_size = np.unique(size[codes == j], return_counts=True)
        else:
            mine = (codes == j) & (per > 0)
            sizes, at = np.unique(size[mine], return_inverse=True)
            per_size = np.bincount(at, weights=per[mine], minlength=len(sizes)).round().astype(np.int64)
        if len(sizes) <= 1:
            p = binomial_test(int(wins[j]), int(times[j]), 1 / sizes[0] if len(sizes) else 0.5)
        else:
            p = _sum_of_binomials_p_value(int(wins[j]), per_size, 1.0 / sizes)
        rows.append((item, int(wins[j]), int(times[j]), wins[j] / times[j] if times[j] else NAN, low, high,
                     chance_sum[j] / times[j] if times[j] else NAN, p))
    return pd.DataFrame(rows, columns=["item", "wins", "shown", "share", "low", "high", "chance", "p_value"])


def _sum_of_binomials_p_value(observed: int, trials: np.ndarray, probs: np.ndarray) -> float:
    """Exact two-sided p-value of ``observed`` successes in independent Binomial(trials[g], probs[g]) summed.

    The distribution of the sum is the convolution of the binomial pmfs (each cut to where it does not
    underflow to 0); the p-value sums the outcomes no more likely than the observed one, with scipy's
    ``binomtest`` tolerance. Written by hand: scipy's ``poisson_binom`` (one probability per trial) builds
    an outcomes x trials table, past memory at 60,000 trials; here there is one binomial per question size.
    """
    pmf, offset = np.ones(1), 0
    for m, p in zip(trials, probs, strict=True):
        f = _st.binom.pmf(np.arange(m + 1), m, p)
        nonzero = np.flatnonzero(f)
        pmf = np.convolve(pmf, f[nonzero[0]: nonzero[-1] + 1])
        offset += int(nonzero[0])
    at = observed - offset
    observed_pmf = pmf[at] if 0 <= at < len(pmf) else 0.0
    return float(min(1.0, pmf[pmf <= observed_pmf * (1 + 1e-7)].sum()))


# ----------------------------------------------------------------------------- correlation


#: Largest n for which Spearman's p-value comes from the exact permutation distribution (:func:`correlation`).
SPEARMAN_EXACT_MAX_N = 10


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its Fisher-z interval and p-value (see :func:`correlation`); ``p_method``
    names how the p-value was obtained ("" when there is none)."""

    r: float
    low: float
    high: float
    p_value: float
    n: int
    method: str
    p_method: str = ""


def correlation(x: Sequence[float], y: Sequence[float], method: str = "pearson",
                confidence: float = 0.95) -> Correlation:
    """Pearson, Spearman or Kendall correlation (e.g. of human scores with an automatic metric) with an interval.

    Pairs with a NaN are dropped. r is scipy's ``pearsonr``, ``spearmanr`` or ``kendalltau`` (tau-b, equal to
    tau-a without ties). The two-sided p-value, and ``p_method`` naming how it was obtained: Pearson "t" (scipy's
    exact test under bivariate normality); Spearman "exact permutation" for n <= 10 (:data:`SPEARMAN_EXACT_MAX_N`:
    over all n! pairings of the ranks, :func:`_spearman_exact_p`; conditional on the midranks when there are ties;
    R's ``cor.test`` is exact for n <= 9 without ties), else "t approximation" (scipy's ``spearmanr``, which is
    poor for few points: R's tuna example, n = 9, gives 0.0876 for the exact 0.0968; system-level correlations
    have few systems); Kendall "exact" (scipy's, without ties for n <= 33) or "normal approximation". The
    interval is tanh(atanh(r) ± z · se) (Fisher 1921), with se² = 1/(n − 3) for Pearson (scipy's own
    interval), (1 + r²/2)/(n − 3) for Spearman (Bonett & Wright 2000) and 0.437/(n − 4) for Kendall
    (Fieller, Hartley & Pearson 1957, as Bonett & Wright 2000 recommend). Undefined values are NaN rather
    than errors, as the analysis meets them on small subsets: everything but n below n = 3 pairs; the
    interval below n = 4 (Pearson, Spearman) or 5 (Kendall); r, the interval and p when x or y is constant.
    """
    if method not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"method must be pearson, spearman or kendall, got {method!r}")
    _check_confidence(confidence)
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"x and y must be paired: one-dimensional and the same length ({a.shape}, {b.shape})")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if np.isinf(a).any() or np.isinf(b).any():
        raise ValueError("x and y must be finite (NaN marks a missing value)")
    n = len(a)
    if n < 3:
        return Correlation(NAN, NAN, NAN, NAN, n, method)
    test = {"pearson": _st.pearsonr, "spearman": _st.spearmanr, "kendall": _st.kendalltau}[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and returns NaN
        result = test(a, b)
    r, p = float(result.statistic), float(result.pvalue)
    p_method = ""
    if not math.isnan(p):
        if method == "pearson":
            p_method = "t"
        elif method == "spearman" and n <= SPEARMAN_EXACT_MAX_N:
            p, p_method = _spearman_exact_p(a, b), "exact permutation"
        elif method == "spearman":
            p_method = "t approximation"
        else:  # scipy's kendalltau(method="auto") rule: exact without ties for n <= 33 or when all but one agree
            pairs = n * (n - 1) // 2
            discordant = round(pairs * (1 - r) / 2)  # tau-b = tau-a without ties
            ties = len(np.unique(a)) < n or len(np.unique(b)) < n
            exact = not ties and (n <= 33 or min(discordant, pairs - discordant) <= 1)
            p_method = "exact" if exact else "normal approximation"
    low = high = NAN
    if method == "pearson" and n > 3 and not math.isnan(r):
        ci = result.confidence_interval(confidence_level=confidence)
        low, high = float(ci.low), float(ci.high)
    elif method != "pearson" and n > (3 if method == "spearman" else 4) and not math.isnan(r):
        variance = (1 + r * r / 2) / (n - 3) if method == "spearman" else 0.437 / (n - 4)
        half = float(_st.norm.ppf((1 + confidence) / 2)) * math.sqrt(variance)
        with np.errstate(divide="ignore"):
            z = float(np.arctanh(r))
        low, high = math.tanh(z - half), math.tanh(z + half)
    return Correlation(r, low, high, p, n, method, p_method)


def _spearman_exact_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p-value of Spearman's rho from its exact permutation distribution: over all n! pairings of the
    midranks of ``x`` with those of ``y``, p = min(1, 2 · min(P(T <= t), P(T >= t))) for T = Σ rank(x_i) ·
    rank(y_π(i)) (rho is increasing in T), as ``scipy.stats.permutation_test(..., permutation_type="pairings",
    n_resamples=np.inf)`` gives it (a test compares them).

    Written by hand because scipy's permutation test lists the n! pairings in Python: 2 s at n = 9 and 12–16 s
    at n = 10 per correlation, with a vectorised statistic (the analysis reruns on every new answer, for every
    metric). Here the distribution of T is counted by dynamic programming over the subsets of y's ranks already
    paired (2^n subsets x the values of T, the ranks doubled to whole numbers): about 20 ms at n = 10.
    """
    a = np.round(2 * _st.rankdata(x)).astype(np.int64)  # doubled midranks: whole numbers
    b = np.round(2 * _st.rankdata(y)).astype(np.int64)
    n = len(a)
    top = int(np.sort(a) @ np.sort(b))  # the largest T (rearrangement inequality)
    # counts[mask, t]: the ways of pairing x's first popcount(mask) ranks with y's ranks in mask, with sum t
    counts = np.zeros((1 << n, top + 1))
    counts[0, 0] = 1.0
    masks = np.arange(1 << n)
    size = np.zeros(1 << n, dtype=np.int64)
    for j in range(n):
        size += (masks >> j) & 1
    for i in range(n):
        layer = masks[size == i]
        for j in range(n):
            free = layer[(layer >> j) & 1 == 0]
            step = int(a[i] * b[j])
            counts[free | (1 << j), step:] += counts[free, : top + 1 - step]
    dist = counts[-1] / counts[-1].sum()
    t = int(a @ b)
    return float(min(1.0, 2 * min(dist[: t + 1].sum(), dist[t:].sum())))
