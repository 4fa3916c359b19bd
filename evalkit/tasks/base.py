"""What every task kind shares: the config reader, the common keys, and the :class:`TaskKind` interface.

A task kind is one module of :mod:`evalkit.tasks` holding its typed task class and a
:class:`TaskKind` object that parses its ``[[tasks]]`` table, says how its questions
come about (planned from review pools, or picked by the evaluator), counts its progress
and describes it for the analysis. The registry in :mod:`evalkit.tasks` maps
``kind = "..."`` to that object; nothing else in evalkit asks which kind a task is.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:

    from ..datasets import Review
    from ..items import ItemSet
    from ..question import Question
    from ..rng import Mulberry32
    from ..store import Progress

__all__ = ["APP_FOLDER", "ID", "Common", "ConfigError", "PlanInputs", "QueueSpec", "StudyPaths", "SurveyError", "Table",
           "TaskKind", "open_checks", "study_folder", "type_name"]

MISSING: Any = object()
ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class ConfigError(Exception):
    """The study config is invalid; the message names the file and the key."""


def type_name(value: Any) -> str:
    """How a TOML value's type is named in messages."""
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class QueueSpec:
    """``judgments_per_item = k``: the task's items are dealt from one queue shared by all evaluators
    (:mod:`evalkit.queue`), each item (with its systems) to ``k`` different evaluators; a claim that is not
    answered within ``claim_minutes`` goes back to the queue."""

    k: int
    claim_minutes: float = 30.0


class Table:
    """Typed access to one TOML table that remembers which keys were read."""

    def __init__(self, data: Any, file: Path, where: str) -> None:
        self.file, self.where = file, where
        if not isinstance(data, dict):
            self.fail(None, f"must be a table, got {type_name(data)}")
        self.data: dict[str, Any] = data
        self.read: set[str] = set()
        self.deferred: list[tuple[str, str]] = []

    def fail(self, key: str | None, problem: str) -> None:
        """Raise :class:`ConfigError` naming the file, this table and ``key``."""
        at = f"{self.where}: key '{key}'" if key is not None else self.where
        raise ConfigError(f"{self.file.name}: {at}: {problem}")

    def fail_later(self, key: str, problem: str) -> None:
        """Note a problem of ``key`` that another key's absence causes (``claim_minutes`` without
        ``judgments_per_item``): :meth:`done` raises it, after the unknown keys, so that a misspelt
        ``judgements_per_item`` is reported as such (did-you-mean) rather than as its consequence."""
        self.read.add(key)
        self.deferred.append((key, problem))

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
        """Fail on keys that were never read (typos), suggesting the nearest known key; then on the first
        problem noted by :meth:`fail_later`."""
        for key in self.data:
            if key not in self.read:
                near = difflib.get_close_matches(key, sorted(self.read), n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                known = ", ".join(sorted(self.read))
                self.fail(key, f"is not a known setting{hint}; known keys here: {known}")
        for key, problem in self.deferred:
            self.fail(key, problem)


#: the evalkit folder in use: the one holding the ``evalkit`` package (app.py, config.toml, datasets/, examples/)
APP_FOLDER = Path(__file__).resolve().parents[2]


def study_folder(config: Path) -> Path:
    """The folder a study's relative paths must stay in: the config file's folder, or the evalkit folder when
    the config is inside it (its config.toml, examples/, tests/fixtures/, a deployment's studies/), so that the
    studies kept with the app can share its datasets/ and consent.md."""
    base = config.resolve().parent
    return APP_FOLDER if base.is_relative_to(APP_FOLDER) else base


class StudyPaths:
    """Resolves the paths of one config (relative ones from the config's folder) under the study-folder rule.

    A relative path whose resolved target (``..`` and symbolic links followed) leaves :func:`study_folder` is
    a :class:`ConfigError` naming the key and the path: a study is one folder, and a study copied to a server
    must not read (or show on its consent screen) the server's files. An absolute path is taken as meant: it
    is accepted, and :attr:`outside` notes it when it is outside the study folder (``evalkit check`` warns).
    """

    def __init__(self, config: Path) -> None:
        self.base = config.resolve().parent
        self.root = study_folder(config)
        #: ``evalkit check``'s warnings: one per absolute path outside the study folder, naming the key
        self.outside: list[str] = []

    def inside(self, path: Path) -> bool:
        """Whether ``path`` (resolved) is in the study folder."""
        return path.is_relative_to(self.root)

    def check(self, t: Table, key: str, given: str, path: Path, *, absolute: bool) -> Path:
        """``path`` (``given`` as written in the config, ``absolute`` if written as an absolute path) resolved;
        ConfigError when it is relative and leaves the study folder."""
        path = path.resolve()
        if not absolute and self.inside(path) and any(part.startswith(".") for part in path.relative_to(self.root)
                                                      .parts):
            t.fail(key, f"the path {given!r} leads into a hidden file or folder ({path.relative_to(self.root)}); a "
                        "study's files are never hidden (.streamlit and .git hold the server's secrets and history)")
        if not self.inside(path):
            if not absolute:
                t.fail(key, f"the path {given!r} leaves the study folder {self.root} (it leads to {path}); keep "
                            "the study's files inside its folder, or give an absolute path to use a file outside "
                            "it on purpose")
            self.outside.append(f"{t.file.name}: {t.where}: key '{key}': the absolute path {given!r} is outside "
                                f"the study folder {self.root}")
        return path

    def resolve(self, t: Table, key: str, value: str) -> Path:
        """A path key's value, relative to the config's folder unless absolute, checked by :meth:`check`."""
        return self.check(t, key, value, self.base / value, absolute=Path(value).is_absolute())


@dataclass(frozen=True)
class Common:
    """The keys every kind takes, read before the kind's own: where its files are, its id, title, instructions."""

    file: Path  # the config file (for messages)
    base: Path  # the folder relative paths start from
    label: str  # "[[tasks]] #2 (id 'pairwise')", for messages
    id: str
    title: str
    instructions: str
    paths: StudyPaths | None = None  # the config's path rule (None: a fresh one for ``file``)

    def path(self, t: Table, key: str) -> tuple[str, Path]:
        """The string ``key`` as written and the path it names, resolved under the study-folder rule
        (:class:`StudyPaths`): every path key of a task is read through here."""
        value = t.str(key)
        return value, (self.paths or StudyPaths(self.file)).resolve(t, key, value)


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
    #: the invited participant's id (a session started from a private link), for fixed assignments; else None
    participant: str | None = None


class TaskKind:
    """One kind of task: a subclass per module of :mod:`evalkit.tasks`, registered under :attr:`name`.

    ``source`` says where its questions come from: ``"pools"`` (drawn by :func:`evalkit.sampling.plan`
    from the review pools, one :class:`~evalkit.sampling.Question` per slot), ``"items"`` (the kind's own
    :meth:`plan`, from an items file, see :mod:`evalkit.tasks.itemsource`) or ``"picked"`` (the
    evaluator picks items from a list; the plan has no questions for it).
    """

    name: ClassVar[str]
    source: ClassVar[str] = "pools"
    #: one line for the documentation's and the error message's list of kinds
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

    def warnings(self, task: Any, file: Path, items: Mapping[Path, ItemSet]) -> list[str]:
        """``evalkit check``'s warnings about the task's data (the study runs, but maybe not as meant): for a
        task over an items file (its ``source``), every item that lacks an output of a system the task lists
        (:func:`evalkit.tasks.itemsource.missing_outputs`). ``file``: the config."""
        source = getattr(task, "source", None)
        if source is None or not hasattr(source, "warnings"):  # a pool task, or a task over the review pools
            return []
        return source.warnings(task.id, items, file.resolve().parent)

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

    def progress(self, task: Any, questions: Sequence[Question], progress: Progress) -> tuple[int, int]:
        """(steps in all, steps done) of this task, for the overall progress bar (a task ended early, see
        :meth:`next_question`, counts only the steps it had and the checks still open)."""
        done = progress.answered.get(task.id, set())
        answered = sum(1 for q in questions if q.index in done)
        if task.id not in progress.finished:
            return len(questions), answered
        return answered + len(open_checks(questions, done)), answered

    def next_question(self, task: Any, questions: Sequence[Question],
                      progress: Progress) -> tuple[int, Question | None, int, Mapping[int, str]] | None:
        """(index, question, questions in the block, rated items) of the first open step; None when done.

        A queued task whose queue had nothing left for the evaluator is marked finished (:mod:`evalkit.queue`):
        its remaining placeholders are skipped, but its check questions are not (:func:`open_checks`), so an
        evaluator whom the queue ran out on still answers every attention check planned for them."""
        done = progress.answered.get(task.id, set())
        if task.id in progress.finished:
            rest = open_checks(questions, done)
            return (rest[0].index, rest[0], len(questions), {}) if rest else None
        for q in questions:
            if q.index not in done:
                return q.index, q, len(questions), {}
        return None


def open_checks(questions: Sequence[Question], done: Collection[int]) -> list[Question]:
    """The check questions still to answer in a task that ended early (its queue had nothing left for the
    evaluator). None when the evaluator made no judgment in the task: there is nothing for its attention
    checks to vouch for, so the task simply ends (and the session's outcome says it got no work, see
    :func:`evalkit.checks.session_outcome`)."""
    if not any(q.check is None and q.index in done for q in questions):
        return []
    return [q for q in questions if q.check is not None and q.index not in done]


class SurveyError(ValueError):
    """An answer cannot be stored as given (the message is meant for the evaluator)."""
