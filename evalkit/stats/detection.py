"""Signal detection and calibration: d' and the criterion c of yes/no judgments (real vs generated), and the
expected calibration error of confidence ratings with the table of a reliability chart.

References: Macmillan & Creelman (2005), Detection Theory: A User's Guide, 2nd ed. (d' and c); Hautus (1995),
"Corrections for extreme proportions and their biasing effects on estimated values of d'", Behavior Research
Methods, Instruments, & Computers 27, 46–51 (the log-linear correction); Naeini, Cooper & Hauskrecht (2015),
"Obtaining well calibrated probabilities using Bayesian binning", AAAI, and Guo, Pleiss, Sun & Weinberger (2017),
"On calibration of modern neural networks", ICML (the expected calibration error); Wilson (1927) for the
intervals of each level's accuracy.

Written here by hand: both are closed forms (normal quantiles; a weighted mean of |accuracy − stated| over the
confidence levels), with scipy's normal quantiles and the Wilson intervals of :mod:`.intervals`.

May import: numpy, scipy, pandas and sibling ``evalkit.stats`` modules only (here :mod:`.common` and
:mod:`.intervals`); never other evalkit modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _st

from .common import NAN, check_confidence, check_counts
from .intervals import wilson_interval


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
    check_counts(hits, n_signal)
    check_counts(false_alarms, n_noise)
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
    check_confidence(confidence)
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
