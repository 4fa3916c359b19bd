"""Intervals and tests: proportions (Wilson interval, exact binomial test, win rate), Cohen's h and sample sizes,
means and medians with their intervals, Wilcoxon signed-rank and Mann–Whitney tests, the paired Wilcoxon test
with the Hodges–Lehmann estimate, and z-scores by evaluator.

References: Wilson (1927), "Probable inference, the law of succession, and statistical inference", JASA 22,
209–212, and Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of seven
methods", Statistics in Medicine 17, 857–872 (why Wilson's interval rather than Wald's); Cohen (1988),
Statistical Power Analysis for the Behavioral Sciences, 2nd ed., ch. 6 (h and the two-proportion sample size);
Guenther (1981) and Lehmann (1975) for the paired sample size (see :func:`sample_size_paired`); Student (1908)
for the t interval of :func:`mean_ci`; Conover (1999), Practical Nonparametric Statistics, 3rd ed., §3.2 (the
median's order-statistic interval); Wilcoxon (1945), "Individual comparisons by ranking methods", Biometrics
Bulletin 1, 80–83; Mann & Whitney (1947), Annals of Mathematical Statistics 18, 50–60; Hodges & Lehmann (1963),
"Estimates of location based on rank tests", Annals of Mathematical Statistics 34, 598–611; Graham et al.
(2013, 2017) for z-scores by evaluator (WMT direct assessment).

scipy does the work wherever it can (binomial tests, Wilson intervals, t and median intervals, Wilcoxon and
Mann–Whitney). Written here by hand: Cohen's h and the sample sizes (closed forms); the exact conditional
signed-rank p-value with ties or zeros for n <= 13 (scipy runs a permutation test in Python there, see
:func:`_signed_rank_tied_p`); the Hodges–Lehmann estimate (a selection, to avoid listing n² Walsh averages, see
:func:`_walsh_median`); the z-scores (per-evaluator sums by ``np.bincount``). Each function says why where it
matters.

May import: numpy, scipy, pandas and sibling ``evalkit.stats`` modules only (here :mod:`.common`); never other
evalkit modules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

from .common import NAN, check_confidence, check_counts, factorize

# ----------------------------------------------------------------------------- proportions


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (no continuity correction); (nan, nan) for n = 0."""
    check_counts(successes, n)
    check_confidence(confidence)
    if n == 0:
        return (NAN, NAN)
    ci = _st.binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


def binomial_test(successes: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial p-value (scipy's rule: outcomes no more likely than the observed one).

    With n = 0 there is no evidence either way: the p-value is 1.
    """
    check_counts(successes, n)
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


def _z_over_h_squared(p1: float, p2: float, alpha: float, power: float, same: str) -> float:
    """((z₁₋α/₂ + z_power) / h)², h = Cohen's h between ``p1`` and ``p2``: what both sample sizes scale.
    ValueError for alpha or power outside (0, 1), or (saying ``same``) when the proportions are equal."""
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be between 0 and 1")
    h = abs(cohens_h(p1, p2))
    if h == 0:
        raise ValueError(f"{same}: no sample size detects a zero effect")
    z = _st.norm.ppf(1 - alpha / 2) + _st.norm.ppf(power)
    return (z / h) ** 2


def sample_size_two_proportions(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """n per condition to detect p1 vs p2 (two-sided): ceil(2·((z₁₋α/₂ + z_power)/h)²), h = Cohen's h.

    Raises ValueError when p1 == p2 (no effect: no finite n).
    """
    return math.ceil(2 * _z_over_h_squared(p1, p2, alpha, power, "p1 equals p2") - 1e-9)


def sample_size_one_proportion(p: float, p0: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Judgments a two-sided test of one proportion against a fixed ``p0`` (a win rate against 50 %, a share
    against its chance level) needs to detect a true proportion ``p``: ceil(((z₁₋α/₂ + z_power) / h)²), h =
    Cohen's h between ``p`` and ``p0`` (Cohen 1988, ch. 6, case 0: one sample against a theoretical value, whose
    tables are read at h·√2; half the n per condition of :func:`sample_size_two_proportions`).

    Raises ValueError when p == p0 (no effect: no finite n).
    """
    return math.ceil(_z_over_h_squared(p, p0, alpha, power, "p equals p0") - 1e-9)


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
    check_confidence(confidence)
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
    check_confidence(confidence)
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
    codes, uniques = factorize(evaluator, "evaluator")
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
