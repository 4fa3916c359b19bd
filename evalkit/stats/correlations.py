"""Correlation: Pearson, Spearman or Kendall coefficients with a Fisher-z interval and a p-value, and Spearman's
exact permutation p-value for small samples.

References: Pearson (1896); Spearman (1904); Kendall (1938, 1945: tau and tau-b); Fisher (1921) for the
atanh interval; Bonett & Wright (2000), "Sample size requirements for estimating Pearson, Kendall and Spearman
correlations", Psychometrika 65, 23–28, and Fieller, Hartley & Pearson (1957) for the Spearman and Kendall
standard errors; Kendall & Gibbons (1990), Rank Correlation Methods, 5th ed., for the exact permutation
distribution of Spearman's rho.

scipy computes the coefficients and their tests (``pearsonr``, ``spearmanr``, ``kendalltau``). Written here by
hand: Spearman's exact permutation p-value for n <= 10 (scipy's permutation test lists the n! pairings: seconds
per correlation; :func:`_spearman_exact_p` counts the distribution by dynamic programming instead).

May import: numpy, scipy and sibling ``evalkit.stats`` modules only (here :mod:`.common`); never other evalkit
modules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

from .common import NAN, check_confidence

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
    check_confidence(confidence)
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
