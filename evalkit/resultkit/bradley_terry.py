"""Bradley–Terry across evaluators, shared by the pairwise and compare kinds and the study-level fit over all
pairwise tasks: how many evaluators the bootstrap resamples (:func:`bt_evaluators`) and the bootstrap intervals
(:func:`bradley_terry_intervals`, Efron & Tibshirani 1993's percentile bootstrap over evaluators; the fit is
:func:`evalkit.stats.bradley_terry_bootstrap`, Bradley & Terry 1952 by Hunter 2004's MM algorithm).

May import :mod:`evalkit.stats` and :mod:`evalkit.resultkit.codes`; nothing above the task kinds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pandas as pd

from .. import stats
from .codes import column_codes, recode_column

__all__ = ["WinsByEvaluator", "bradley_terry_intervals", "bt_evaluators"]


class WinsByEvaluator(Protocol):
    """A result with its judgments per evaluator: ``evaluator_wins`` (``session_id, winner, loser, wins``), as the
    pairwise kind's result has (:class:`evalkit.tasks.pairwise_analysis.PairwiseResult`)."""

    evaluator_wins: pd.DataFrame



def bt_evaluators(pairwise: Sequence[WinsByEvaluator]) -> int:
    """How many evaluators (sessions) the Bradley–Terry bootstrap of ``pairwise`` resamples: those with a judgment
    (:func:`bradley_terry_intervals`; below two it gives no interval)."""
    parts = [np.asarray(p.evaluator_wins.loc[p.evaluator_wins["wins"].to_numpy() > 0, "session_id"], dtype=object)
             for p in pairwise if len(p.evaluator_wins)]
    return len(pd.unique(np.concatenate(parts))) if parts else 0



def bradley_terry_intervals(pairwise: Sequence[WinsByEvaluator], items: list[str], resamples: int = 1000,
                            seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """Bootstrap intervals (``source, low, high``) of the Bradley–Terry strengths over all pairwise tasks.

    An evaluator is one session: all its judgments, in every pairwise task, go
    into a resample together (see :func:`evalkit.stats.bradley_terry_bootstrap`).
    With fewer than two evaluators (:func:`bt_evaluators`) every interval is NaN.
    """
    parts = [p.evaluator_wins for p in pairwise if len(p.evaluator_wins)]
    if not parts:
        return pd.DataFrame({"source": items, "low": np.nan, "high": np.nan})
    index = pd.Index(items, dtype=object)
    winner = np.concatenate([recode_column(part["winner"], index) for part in parts])
    loser = np.concatenate([recode_column(part["loser"], index) for part in parts])
    seen = np.concatenate([column_codes(part["session_id"])[1] for part in parts])
    sessions = pd.Index(pd.unique(seen), dtype=object)
    evaluator = np.concatenate([recode_column(part["session_id"], sessions) for part in parts])
    _, evaluator = np.unique(evaluator, return_inverse=True)  # 0..E-1 over the evaluators who compared anything
    wins = np.concatenate([part["wins"].to_numpy(dtype=float) for part in parts])
    return stats.bradley_terry_bootstrap(items, evaluator, winner, loser, wins, resamples=resamples,
                                         confidence=confidence, seed=seed)
