"""What a task kind's analysis returns and gets: :class:`Options` (the analysis's switches), :class:`TaskContext`,
:class:`Block` (one table of results with its note and chart), the :class:`TaskResult` protocol with
:class:`ResultDefaults`; and the rows every analysis shares (a rate with its Wilson interval and binomial test:
:func:`interval_row`; Bradley–Terry tables: :func:`bt_frame`, :func:`strongest_first`).

May import :mod:`evalkit.stats` and (for types) :mod:`evalkit.items`; nothing above the task kinds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from .. import stats

if TYPE_CHECKING:
    from ..items import ItemSet

__all__ = ["BT_ONE_EVALUATOR", "Block", "Options", "ResultDefaults", "TaskContext", "TaskResult", "bt_frame",
           "interval_row", "strongest_first"]


@dataclass(frozen=True)
class Options:
    """Switches of the analysis (the results page's controls and the CLI's flags)."""

    completed_only: bool = False
    fast_ms: int = 2000  # an answer faster than this is flagged as too fast to have read the texts
    familiarity_weighted: bool = False
    confidence: float = 0.95
    bootstrap_resamples: int = 1000  # Bradley–Terry intervals: evaluators resampled this many times
    bootstrap_seed: int = 0  # ... from this seed, so the same data give the same intervals
    #: leave out the evaluators who failed their attention checks ([study.quality] max_failed_checks)
    exclude_failed_checks: bool = True
    #: count the answers to tutorial and attention-check questions in the statistics (off: left out)
    include_check_questions: bool = False



@dataclass(frozen=True)
class TaskContext:
    """What a kind's analysis (:func:`evalkit.tasks.results`) gets besides the answers."""

    options: Options
    #: the task's items file as loaded (the automatic metrics of its items); None when the caller gave none
    items: ItemSet | None = None
    #: why ``items`` is None, for the note under the metric correlations
    items_note: str = "the study's items files were not given to the analysis"
    #: the rating rows of the included sessions (what a rating task is analysed from); None: none given
    ratings: pd.DataFrame | None = None
    #: the ``spans`` rows of the included sessions (what a spans task's errors are analysed from); None: none given
    spans: pd.DataFrame | None = None



@dataclass(frozen=True)
class Block:
    """One table of a task's results as the results page and the Markdown report show it: a heading ("" =
    none), the table formatted for display (None: only the note), a note under it (how its intervals and tests
    were made, with references), and the key of its chart in the report's charts ("" = none).

    Where the page and the report differ: ``shown`` puts a block on the results page only (``"page"``) or in
    the Markdown report only (``"report"``); ``page_heading`` is the page's Markdown line above the block
    when it is not the bold heading (``""``: none); ``folded`` puts it in a collapsed expander on the page,
    named by the heading."""

    heading: str
    table: pd.DataFrame | None
    note: str = ""
    chart: str = ""
    shown: str = "both"  # "both", "page" or "report"
    page_heading: str | None = None
    folded: bool = False



class TaskResult(Protocol):
    """The results of one task, from its kind's analysis module (``evalkit/tasks/<kind>_analysis.py``).

    Result classes inherit :class:`ResultDefaults` for ``tab`` and ``headings()`` and override them where their
    section is headed or placed otherwise.
    """

    task: str
    title: str
    kind: str
    n_answers: int
    #: the results page's tab holding the task's section
    tab: ClassVar[str]

    def describe(self) -> str:
        """The kind and its variant for headings: ``compare, choice-tie``."""

    def headings(self) -> tuple[str, str]:
        """(the results page's heading, the Markdown report's) of the task's section."""

    def blocks(self) -> list[Block]:
        """Every table, in order, formatted for display."""

    def main_rows(self) -> list[dict[str, Any]]:
        """Rows of the headline table (:func:`evalkit.export.main_results`): section, label, detail, value, low,
        high, p_value, n, interval, kind (``pct`` or ``num``)."""

    def charts(self) -> dict[str, Any]:
        """Altair charts by the key the blocks name."""



class ResultDefaults:
    """What most task results share: the Overview tab, and the headings ``title · kind, variant · N answers``
    (page) and ``title (`task`, kind, variant): N answers`` (report)."""

    tab: ClassVar[str] = "Overview"
    task: str
    title: str
    n_answers: int

    def describe(self) -> str:  # overridden by every result
        raise NotImplementedError

    def headings(self) -> tuple[str, str]:
        """(the results page's heading, the Markdown report's)."""
        answers = f"{self.n_answers:,} {'answer' if self.n_answers == 1 else 'answers'}"
        return (f"{self.title} · {self.describe()} · {answers}",
                f"{self.title} (`{self.task}`, {self.describe()}): {answers}")



def interval_row(successes: int, n: int, p0: float, confidence: float) -> dict[str, Any]:
    r = stats.win_rate(int(successes), int(n), p0=p0, confidence=confidence)
    return {"n": r.n, "rate": r.rate, "low": r.low, "high": r.high, "p_value": r.p_value}



def bt_frame(bt: Mapping[str, float], intervals: pd.DataFrame | None = None) -> pd.DataFrame:
    """Bradley–Terry log-strengths, strongest first; ``low`` / ``high`` from ``intervals`` (NaN without)."""
    frame = pd.DataFrame({"source": list(bt), "log_strength": list(bt.values())},
                         columns=["source", "log_strength"])
    if intervals is not None and len(frame):
        frame = frame.merge(intervals[["source", "low", "high"]], on="source", how="left")
    else:
        frame = frame.assign(low=np.nan, high=np.nan)
    return strongest_first(frame, "source")



def strongest_first(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """Log-strengths strongest first, ties (to 9 decimals: equal up to rounding) by ``name``, so the order does
    not depend on the order the names came in (a columnar and a plain read give the same table)."""
    key = frame.assign(_key=-frame["log_strength"].astype(float).round(9))
    return key.sort_values(["_key", name], kind="stable").drop(columns="_key").reset_index(drop=True)



#: Added to a Bradley–Terry note when fewer than two evaluators judged (the bootstrap gives no interval then).
BT_ONE_EVALUATOR = (" Only one evaluator has judged: the bootstrap resamples evaluators, so there is no interval "
                    "until a second one has.")
