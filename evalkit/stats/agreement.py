"""Agreement between raters: Fleiss' kappa, Cohen's kappa, Krippendorff's alpha of a raters x units table, and
alpha from long-format judgments (item, rater, value).

References: Fleiss (1971), "Measuring nominal scale agreement among many raters", Psychological Bulletin 76(5),
378–382 (here each subject's agreement uses its own number of raters); Cohen (1960), "A coefficient of agreement
for nominal scales", Educational and Psychological Measurement 20(1), 37–46; Krippendorff (2004), Content
Analysis: An Introduction to Its Methodology, 2nd ed., ch. 11, and Krippendorff (2011), "Computing
Krippendorff's alpha-reliability" (the coincidence matrix and the distances δ² by level of measurement that
:func:`alpha_from_long` uses).

:func:`krippendorff_alpha` is the ``krippendorff`` package's. Written here by hand, because neither scipy nor
``krippendorff`` offers them: Fleiss' and Cohen's kappa (a few lines of arithmetic on count tables; statsmodels
has them but is a heavy dependency for two formulas), and alpha from long-format data (the package's memory
grows with units x values²: :func:`alpha_from_long` says why).

May import: numpy, pandas, scipy, ``krippendorff`` and sibling ``evalkit.stats`` modules only (here
:mod:`.common`); never other evalkit modules.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import krippendorff as _krippendorff
import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

from .common import NAN, factorize


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
    units, _ = factorize(item, "item")
    raters, rater_names = factorize(rater, "rater")
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
