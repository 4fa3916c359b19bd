"""Statistics of error-span annotation: Holm's adjustment of a family of p-values, Cohen's kappa of two binary
labellings from their 2x2 table, a ratio of sums with a bootstrap interval over units, and the agreement of pairs
of annotators (mean character F1 and pooled kappa per pair, averaged over pairs) with a bootstrap over units.

References: Holm (1979), "A simple sequentially rejective multiple test procedure", Scandinavian Journal of
Statistics 6(2), 65–70; Cohen (1960), "A coefficient of agreement for nominal scales", Educational and
Psychological Measurement 20(1), 37–46; Efron & Tibshirani (1993), An Introduction to the Bootstrap, ch. 13 (the
percentile interval) and §6.4 (resampling the sampling units, here items or annotated outputs).

scipy does the ratio's bootstrap (``scipy.stats.bootstrap``, percentile method, paired resampling of numerator and
denominator). Written here by hand: Holm's step-down adjustment (a few lines; statsmodels' ``multipletests`` has it
but statsmodels is not a dependency, and scipy offers only Benjamini–Hochberg), kappa from a 2x2 table (the same
formula as :func:`evalkit.stats.cohen_kappa`, from counts, so that character-level agreement does not list every
character of every output, and vectorised over bootstrap resamples), and the pairs' bootstrap (the statistic is a
mean over pairs of per-pair sums over units, which ``scipy.stats.bootstrap`` cannot resample by unit; done here
with :func:`evalkit.stats.bootstrap_indexes`' seeded resamples, in chunks to bound memory).

May import: numpy, scipy and sibling ``evalkit.stats`` modules only (here :mod:`.common`, :mod:`.rankings`);
never other evalkit modules.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as _st

from .common import NAN, check_confidence
from .rankings import bootstrap_indexes

__all__ = ["PairAgreement", "RatioCI", "holm", "kappa_from_counts", "pair_agreement", "ratio_ci"]

#: Resamples of the pairs' bootstrap drawn at once (each chunk holds chunk x units weights).
_CHUNK = 100


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values of one family of tests, in the order given: the i-th smallest of
    the m p-values times (m − i + 1), made non-decreasing and capped at 1. A NaN p-value (a test that could not be
    made) stays NaN and does not count in m."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    known = np.flatnonzero(~np.isnan(p))
    if not len(known):
        return out
    order = known[np.argsort(p[known], kind="stable")]
    m = len(order)
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out[order] = adjusted
    return out


def kappa_from_counts(both: Any, first_only: Any, second_only: Any, neither: Any) -> Any:
    """Cohen's (1960) kappa of two binary labellings of the same units from their 2x2 table: ``both`` units
    labelled by both, ``first_only`` / ``second_only`` by one, ``neither`` by none. κ = (p_o − p_e) / (1 − p_e),
    p_o = (both + neither) / n, p_e = p₁p₂ + (1 − p₁)(1 − p₂) with p₁, p₂ each labelling's share of positives.
    Arrays broadcast (one kappa per element); NaN where undefined (no units, or p_e = 1: both labellings put every
    unit in one and the same class). A float for scalar counts."""
    a, b, c, d = (np.asarray(x, dtype=float) for x in (both, first_only, second_only, neither))
    n = a + b + c + d
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = (a + d) / n
        p1, p2 = (a + b) / n, (a + c) / n
        p_e = p1 * p2 + (1 - p1) * (1 - p2)
        kappa = np.where(np.isclose(p_e, 1.0) | (n <= 0), np.nan, (p_o - p_e) / (1 - p_e))
    return float(kappa) if kappa.ndim == 0 else kappa


@dataclass(frozen=True)
class RatioCI:
    """A ratio of sums over units with its bootstrap interval (NaN bounds: fewer than two units)."""

    value: float
    low: float
    high: float
    units: int


def ratio_ci(numerator: Any, denominator: Any, confidence: float = 0.95, resamples: int = 1000,
             seed: int = 0) -> RatioCI:
    """Σ numerator / Σ denominator over units (e.g. an item's penalty summed over its annotations, over the number of
    annotations or their words), with the percentile bootstrap interval (Efron & Tibshirani 1993) of
    ``scipy.stats.bootstrap`` resampling the units, numerator and denominator together (``paired=True``), from
    ``seed``. A mean over units is the ratio with a denominator of ones. NaN when there are no units or the
    denominators sum to 0; NaN bounds with fewer than two units (no spread to resample)."""
    check_confidence(confidence)
    x, y = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"numerator and denominator must be paired one-dimensional arrays ({x.shape}, {y.shape})")
    n = len(x)
    total = y.sum()
    value = float(x.sum() / total) if n and total > 0 else NAN
    if n < 2 or np.isnan(value):
        return RatioCI(value, NAN, NAN, n)
    if np.allclose(x / np.where(y > 0, y, 1), value) and (y > 0).all():
        return RatioCI(value, value, value, n)  # every unit has the same ratio: every resample has it

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        s = b.sum(axis=axis)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(s > 0, a.sum(axis=axis) / s, np.nan)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = _st.bootstrap((x, y), ratio, paired=True, vectorized=True, n_resamples=resamples,
                            confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
    return RatioCI(value, float(res.confidence_interval.low), float(res.confidence_interval.high), n)


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of annotator pairs averaged over pairs, with bootstrap intervals over units."""

    f1: float
    f1_low: float
    f1_high: float
    kappa: float
    kappa_low: float
    kappa_high: float
    pairs: int
    units: int


def _per_pair(weights: np.ndarray, unit: np.ndarray, starts: np.ndarray, f1: np.ndarray,
              counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean F1 over pairs, mean kappa over pairs) per row of ``weights`` (resamples x units)."""
    w = weights[:, unit]  # resamples x rows (rows sorted by pair)
    total = np.add.reduceat(w, starts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pair_f1 = np.where(total > 0, np.add.reduceat(w * f1, starts, axis=1) / total, np.nan)
    sums = [np.add.reduceat(w * counts[:, k], starts, axis=1) for k in range(4)]
    pair_kappa = np.where(total > 0, kappa_from_counts(*sums), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no pair, or no defined kappa: NaN
        return np.nanmean(pair_f1, axis=1), np.nanmean(pair_kappa, axis=1)


def pair_agreement(pair: Any, unit: Any, f1: Any, counts: Any, confidence: float = 0.95, resamples: int = 1000,
                   seed: int = 0) -> PairAgreement:
    """The agreement of annotator pairs on shared units (e.g. the outputs two evaluators both annotated), one row
    per (pair, unit): ``pair`` and ``unit`` integer codes, ``f1`` the pair's F1 on the unit, ``counts`` (rows x 4)
    its 2x2 table (both, first only, second only, neither; NaN rows where unknown). Per pair: the mean F1 over its
    units and Cohen's kappa of its table summed over its units (:func:`kappa_from_counts`); then each averaged over
    the pairs (a pair's kappa left out where undefined). Intervals: percentile bootstrap resampling the units
    (every pair's rows of a unit go together), ``resamples`` from ``seed``; NaN with fewer than two units."""
    check_confidence(confidence)
    pair, unit = np.asarray(pair, dtype=np.int64), np.asarray(unit, dtype=np.int64)
    f1 = np.asarray(f1, dtype=float)
    counts = np.asarray(counts, dtype=float).reshape(len(pair), 4)
    if not len(pair):
        return PairAgreement(NAN, NAN, NAN, NAN, NAN, NAN, 0, 0)
    order = np.argsort(pair, kind="stable")
    pair, unit, f1, counts = pair[order], unit[order], f1[order], counts[order]
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    _, unit = np.unique(unit, return_inverse=True)
    n_units = int(unit.max()) + 1
    point_f1, point_kappa = (float(v[0]) for v in _per_pair(np.ones((1, n_units)), unit, starts, f1, counts))
    if n_units < 2:
        return PairAgreement(point_f1, NAN, NAN, point_kappa, NAN, NAN, len(starts), n_units)
    draws = bootstrap_indexes(n_units, resamples, seed)
    f1s, kappas = [], []
    for at in range(0, resamples, _CHUNK):
        chunk = draws[at: at + _CHUNK]
        offsets = (np.arange(len(chunk)) * n_units)[:, None]
        weights = np.bincount((chunk + offsets).ravel(), minlength=len(chunk) * n_units).reshape(len(chunk), n_units)
        a, b = _per_pair(weights.astype(float), unit, starts, f1, counts)
        f1s.append(a)
        kappas.append(b)
    q = [100 * (1 - confidence) / 2, 100 * (1 + confidence) / 2]

    def bounds(values: list[np.ndarray], point: float) -> tuple[float, float]:
        v = np.concatenate(values)
        v = v[~np.isnan(v)]
        if not len(v) or np.isnan(point):
            return NAN, NAN
        low, high = np.percentile(v, q)
        return float(low), float(high)

    (f1_low, f1_high), (k_low, k_high) = bounds(f1s, point_f1), bounds(kappas, point_kappa)
    return PairAgreement(point_f1, f1_low, f1_high, point_kappa, k_low, k_high, len(starts), n_units)
