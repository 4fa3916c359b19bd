"""Task kinds: one module per kind, and the registry that maps ``kind = "..."`` in a config to it.

Each module holds its typed task class and a :class:`~evalkit.tasks.base.TaskKind` object
(parsing and validating its ``[[tasks]]`` table, where its questions come from, its progress,
what the analysis needs to know); how an answer is recorded lives beside it
(:mod:`evalkit.tasks.responses` for questions drawn from the review pools). The Streamlit
layer has one renderer per kind, ``pages/tasks/<kind>.py``. To add a kind: a module here,
its line in :data:`KINDS`, its renderer, and tests (docs/development/adding-a-kind.md).

Floor: task kinds (``.importlinter``). May import :mod:`evalkit.resultkit`, :mod:`evalkit.balance`,
:mod:`evalkit.question` and the core (items, rating_items, datasets, rng, stats, store, text, missing); never the
config, the checks or anything above. Inside the package the analyses sit over the kinds, the kinds over responses
and checks' answers, those over :mod:`evalkit.tasks.base`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import compare, form, pairwise, rank, rating, realfake, score, spans, triplet
from .base import Common, ConfigError, SurveyError, Table, TaskKind
from .compare import CompareTask
from .form import FormTask
from .pairwise import PairwiseTask
from .rank import RankTask
from .rating import Metric, RatingTask
from .realfake import RealFakeTask
from .score import Scale, ScoreTask
from .spans import SpansTask
from .triplet import TripletTask

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from ..resultkit import TaskContext, TaskResult

__all__ = ["KINDS", "Common", "CompareTask", "ConfigError", "FormTask", "Metric", "PairwiseTask", "RankTask",
           "RatingTask", "RealFakeTask", "Scale", "ScoreTask", "SpansTask", "SurveyError", "Table", "Task", "TaskKind",
           "TripletTask", "analysis_module", "kind_of", "known_kinds", "results"]

Task = (TripletTask | PairwiseTask | RatingTask | CompareTask | ScoreTask | SpansTask | RankTask | RealFakeTask
        | FormTask)


#: kind name -> its TaskKind, in the order the documentation lists them
KINDS: dict[str, TaskKind] = {module.KIND.name: module.KIND
                              for module in (triplet, pairwise, rating, compare, score, spans, rank, realfake, form)}


def known_kinds() -> str:
    """The registered kinds, for messages: ``'triplet', 'pairwise', 'rating'``."""
    return ", ".join(repr(k) for k in KINDS)


def kind_of(name: str) -> TaskKind:
    """The kind registered as ``name``; KeyError naming the known kinds otherwise."""
    try:
        return KINDS[name]
    except KeyError:
        raise KeyError(f"unknown task kind {name!r}; the known kinds are {known_kinds()}") from None


def analysis_module(kind: TaskKind) -> ModuleType | None:
    """The kind's analysis module (``evalkit/tasks/<kind>_analysis.py``, named by :attr:`TaskKind.analysis`),
    imported when a report is first made: it needs scipy and Altair, which the survey never loads. None for a kind
    without one (the background form). The registry is the one place that imports a kind's module by its name."""
    return None if kind.analysis is None else importlib.import_module(f"{__name__}.{kind.analysis}")


def results(kind: TaskKind, evaluations: pd.DataFrame, task: Mapping[str, Any],
            context: TaskContext) -> TaskResult | None:
    """A task's result tables by its kind's analysis module: from the included answers (every task's rows; the kind
    picks its own), its description as stored (:meth:`TaskKind.describe` plus id, kind, title) and the ``context``
    (options, items file, the included rating rows); None for a kind without an analysis module."""
    module = analysis_module(kind)
    return None if module is None else module.results(evaluations, task, context)
