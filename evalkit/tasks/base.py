"""What every task kind shares: the config reader, the common keys, and the :class:`TaskKind` interface.

A task kind is one module of :mod:`evalkit.tasks` holding its typed task class and a
:class:`TaskKind` object that parses its ``[[tasks]]`` table, says how its questions
come about (planned from review pools, or picked by the evaluator), counts its progress
and describes it for the analysis. The registry in :mod:`evalkit.tasks` maps
``kind = "..."`` to that object; nothing else in evalkit asks which kind a task is.
"""

from __future__ import annotations

import difflib
import importlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pandas as pd

    from ..analysis import TaskContext, TaskResult
    from ..datasets import Review
    from ..items import ItemSet
    from ..rng import Mulberry32
    from ..sampling import Question
    from ..store import Progress
    from .itemsource import QueueSpec

__all__ = ["ID", "Common", "ConfigError", "PlanInputs", "SurveyError", "Table", "TaskKind", "type_name"]

MISSING: Any = object()
ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class ConfigError(Exception):
    """The study config is invalid; the message names the file and the key."""


def type_name(value: Any) -> str:
    """How a TOML value's type is named in messages."""
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


class Table:
    """Typed access to one TOML table that remembers which keys were read."""

    def __init__(self, data: Any, file: Path, where: str) -> None:
        self.file, self.where = file, where
        if not isinstance(data, dict):
            self.fail(None, f"must be a table, got {type_name(data)}")
        self.data: dict[str, Any] = data
        self.read: set[str] = set()

    def fail(self, key: str | None, problem: str) -> None:
        """Raise :class:`ConfigError` naming the file, this table and ``key``."""
        at = f"{self.where}: key '{key}'" if key is not None else self.where
        raise ConfigError(f"{self.file.name}: {at}: {problem}")

    def get(self, key: str, default: Any = MISSING) -> Any:
        """The raw value (``default`` when absent; required without one)."""
        self.read.add(key)
        if key not in self.data:
            if default is MISSING:
                self.fail(key, "is required but missing")
            return default
        return self.data[key]

    def str(self, key: str, default: Any = MISSING, *, nonempty: bool = True) -> str:
        """A string value."""
        value = self.get(key, default)
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {type_name(value)}")
        if nonempty and not value.strip():
            self.fail(key, "must not be empty")
        return value

    def int(self, key: str, default: Any = MISSING, *, minimum: int | None = None) -> int:
        """An integer value, at least ``minimum``."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {type_name(value)} {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def float(self, key: str, default: Any = MISSING, *, low: float, high: float) -> float:
        """A finite number in ``[low, high]``."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(key, f"must be a number, got {type_name(value)} {value!r}")
        if not low <= value <= high:
            self.fail(key, f"must be between {low} and {high}, got {value}")
        return float(value)

    def strs(self, key: str, default: Any = MISSING, *, nonempty: bool = True) -> tuple[str, ...]:
        """A list of non-empty strings (stripped)."""
        value = self.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(key, "must be a list of non-empty strings")
        if nonempty and not value:
            self.fail(key, "must not be an empty list")
        return tuple(v.strip() for v in value)

    def choice(self, key: str, options: Sequence[str], default: Any = MISSING) -> str:
        """One of ``options``."""
        value = self.get(key, default)
        if value not in options:
            self.fail(key, f"must be one of {', '.join(repr(o) for o in options)}; got {value!r}")
        return value

    def ident(self, key: str, default: Any = MISSING) -> str:
        """An id: letters, digits, '_', '-' or '.'."""
        value = self.str(key, default)
        if not ID.match(value):
            self.fail(key, f"must be letters, digits, '_', '-' or '.', got {value!r}")
        return value

    def done(self) -> None:
        """Fail on keys that were never read (typos), suggesting the nearest known key."""
        for key in self.data:
            if key not in self.read:
                near = difflib.get_close_matches(key, sorted(self.read), n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                known = ", ".join(sorted(self.read))
                self.fail(key, f"is not a known setting{hint}; known keys here: {known}")


@dataclass(frozen=True)
class Common:
    """The keys every kind takes, read before the kind's own: where its files are, its id, title, instructions."""

    file: Path  # the config file (for messages)
    base: Path  # the folder relative paths start from
    label: str  # "[[tasks]] #2 (id 'pairwise')", for messages
    id: str
    title: str
    instructions: str


@dataclass(frozen=True)
class PlanInputs:
    """What a kind that plans its own questions (:meth:`TaskKind.plan`) may draw from, for one evaluator."""

    seed: int
    items: Mapping[Path, ItemSet]  # the loaded items files, by resolved path
    #: draws one unused review of (source, domain) from the review pools, shared with the rest of the plan
    draw: Callable[[str, str, Mulberry32], Review]
    #: the evaluator's arrival number (sessions created before theirs), when display orders are balanced
    #: across evaluators (:mod:`evalkit.balance`); None: each evaluator's plan is balanced on its own
    arrival: int | None = None


class TaskKind:
    """One kind of task: a subclass per module of :mod:`evalkit.tasks`, registered under :attr:`name`.

    ``source`` says where its questions come from: ``"pools"`` (drawn by :func:`evalkit.sampling.plan`
    from the review pools, one :class:`~evalkit.sampling.Question` per slot), ``"items"`` (the kind's own
    :meth:`plan`, from an items file, see :mod:`evalkit.tasks.itemsource`) or ``"picked"`` (the
    evaluator picks items from a list; the plan has no questions for it).
    """

    name: ClassVar[str]
    source: ClassVar[str] = "pools"
    #: one line for the README's and the error message's list of kinds
    summary_line: ClassVar[str] = ""
    #: the module of :mod:`evalkit.tasks` holding the kind's analysis (``results``, its tables, export rows and
    #: charts), imported only when a report is made (it needs scipy and Altair, which the survey does not);
    #: None: the kind has no analysis (its tasks are left out of the report)
    analysis: ClassVar[str | None] = None
    #: whether an answer's ``review_source`` is the evaluator's pick (a triplet's, a pair's, the best of a
    #: ranking): the evaluator table's majority agreement compares picks; False for kinds that store the text
    #: shown there (score, realfake)
    choice_in_review_source: ClassVar[bool] = True
    #: whether an answer's ``response`` says what the evaluator answered: the evaluator table's longest run of
    #: identical responses (straight-lining) counts it; False for score (always "scored")
    response_varies: ClassVar[bool] = True
    #: the columns of the answers (``evaluations``) the kind's analysis reads beyond those every answer's
    #: analysis reads (:data:`evalkit.analysis.COMMON_READ`): :func:`evalkit.analysis.load_frames` reads only
    #: the columns of the kinds a study has (each column of a million answers costs 0.1-0.3 s to read)
    analysis_columns: ClassVar[tuple[str, ...]] = ()

    def parse(self, t: Table, common: Common) -> Any:
        """The typed task from its ``[[tasks]]`` table (common keys already read); ConfigError on mistakes."""
        raise NotImplementedError

    def describe(self, task: Any) -> dict[str, Any]:
        """What the analysis needs to know about the task beyond id, kind and title (JSON-ready)."""
        raise NotImplementedError

    def pool_slots(self, task: Any) -> list[tuple[tuple[str, ...], str]]:
        """(sources, domain) of every question drawn from the review pools (for the config's pool checks)."""
        return task.slots() if self.source == "pools" else []

    def items_files(self, task: Any) -> tuple[Path, ...]:
        """The items files (JSONL of inputs and outputs) this task reads."""
        return ()

    def check(self, task: Any, file: Path, items: Mapping[Path, ItemSet]) -> None:
        """ConfigError when the loaded items cannot serve the task (called once, when the study opens)."""

    def step_label(self, task: Any, index: int, n_questions: int, rated: int, what: str) -> str:
        """The progress bar's text for the step at ``index`` (``rated``: items rated so far, picked kinds)."""
        return f"{what} {index + 1} of {n_questions}"

    def outline(self, task: Any, items: Mapping[Path, ItemSet]) -> str:
        """One line for ``evalkit check``: how many questions an evaluator gets, from where."""
        return ""

    def plan(self, task: Any, inputs: PlanInputs) -> list[Question]:
        """This evaluator's questions, for kinds whose ``source`` is ``"items"`` (seeded by ``inputs.seed``;
        ``inputs.arrival``, when given, balances display orders across evaluators)."""
        return []

    def queue_spec(self, task: Any) -> QueueSpec | None:
        """The task's ``judgments_per_item`` queue (:mod:`evalkit.queue`), or None (the plan picks its items)."""
        return None

    def combos(self, task: Any, items: Mapping[Path, ItemSet]) -> list[tuple[str, ...]]:
        """The sets of systems one question of the task shows (config order); a queued task's units are every
        item having the outputs of one of them."""
        return []

    def results(self, evaluations: pd.DataFrame, task: Mapping[str, Any], context: TaskContext) -> TaskResult | None:
        """The task's result tables from the included answers (every task's rows; the kind picks its own), its
        description as stored (:meth:`describe` plus id, kind, title) and the ``context`` (options, items file,
        the included rating rows); None for a kind without an analysis module."""
        if self.analysis is None:
            return None
        return importlib.import_module(f"{__package__}.{self.analysis}").results(evaluations, task, context)

    def progress(self, task: Any, questions: Sequence[Question], progress: Progress) -> tuple[int, int]:
        """(steps in all, steps done) of this task, for the overall progress bar (a task ended early, see
        :meth:`next_question`, counts only the steps it had)."""
        done = progress.answered.get(task.id, set())
        answered = sum(1 for q in questions if q.index in done)
        return (answered if task.id in progress.finished else len(questions)), answered

    def next_question(self, task: Any, questions: Sequence[Question],
                      progress: Progress) -> tuple[int, Question | None, int, Mapping[int, str]] | None:
        """(index, question, questions in the block, rated items) of the first open step; None when done (a
        queued task is also done when its queue had nothing left for the evaluator: it is marked finished)."""
        if task.id in progress.finished:
            return None
        done = progress.answered.get(task.id, set())
        for q in questions:
            if q.index not in done:
                return q.index, q, len(questions), {}
        return None


class SurveyError(ValueError):
    """An answer cannot be stored as given (the message is meant for the evaluator)."""
