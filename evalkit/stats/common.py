"""Helpers shared by several families of :mod:`evalkit.stats`: the NaN constant, the checks of a confidence level
and of binomial counts, and the integer coding of a column of labels.

Public names (no underscore) because sibling modules import them; they are not part of :mod:`evalkit.stats`'s
``__all__``. No statistic of its own, so no reference.

May import: numpy and pandas only (no sibling ``evalkit.stats`` module, no other evalkit module).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

NAN = float("nan")


def check_confidence(confidence: float) -> None:
    """ValueError unless 0 < ``confidence`` < 1."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")


def check_counts(successes: int, n: int) -> None:
    """TypeError / ValueError unless ``successes`` and ``n`` are whole numbers with 0 <= successes <= n."""
    if isinstance(successes, bool) or isinstance(n, bool):
        raise TypeError("successes and n must be integers")
    if int(successes) != successes or int(n) != n:
        raise ValueError("successes and n must be whole numbers")
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")


def factorize(labels: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..k-1 and the k distinct labels of a column of hashable labels; a missing label is an error."""
    if not isinstance(labels, np.ndarray | pd.Series | pd.Index):
        labels = np.asarray(labels, dtype=object)
    codes, uniques = pd.factorize(labels)
    if (codes < 0).any():
        raise ValueError(f"{what} has missing labels (None or NaN)")
    return codes, np.asarray(uniques)
