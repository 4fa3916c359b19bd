"""``config.toml`` -> a typed, validated :class:`Study`.

Every mistake raises :class:`ConfigError` with a message that names the file
and the key, e.g. ``config.toml: [[tasks]] #2 (id 'pairwise'): key 'response':
must be one of 'choice', 'slider'; got 'stars'``. Unknown keys are errors too
(with a did-you-mean hint), because a misspelt key silently ignored would run a
different study than the one the researcher wrote.

Checks that need the review files (a source with no dataset file, a domain list
asking for more reviews than the pool holds) are in :func:`check_pools`;
:func:`open_study` runs both.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import re
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .datasets import (
    DatasetError,
    Pools,
    RatingItem,
    dataset_files,
    load_pools,
    load_rating_items,
    read_file_bytes,
    review_counts,
)
from .store import Database, StoreError, resolve_database

__all__ = [
    "BiasControls",
    "ConfigError",
    "LoadedStudy",
    "Metric",
    "PairwiseTask",
    "PoolFilters",
    "RatingTask",
    "Study",
    "Task",
    "TripletTask",
    "check_pools",
    "load_study",
    "needed_reviews",
    "open_study",
]

_MISSING: Any = object()
_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class ConfigError(Exception):
    """The study config is invalid; the message names the file and the key."""


_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s'\"(),;:]+/)*[^\s'\"(),;:]*")


def relative_paths(message: str, base: str | Path) -> str:
    """``message`` with absolute paths made relative to the study folder ``base``, for evaluators' screens.

    Paths inside ``base`` lose that prefix (``/srv/study/datasets/x.xml`` -> ``datasets/x.xml``); any
    other absolute path is cut to its last part (``.../x.sqlite``), so a set-up message shown in a browser
    names the file without revealing the server's folders. The full message belongs in the log and in
    ``evalkit check``.
    """
    root = str(Path(base).resolve()).rstrip("/") + "/"
    message = message.replace(root, "")  # first, whole: the folder's name may contain spaces

    def shorten(match: re.Match[str]) -> str:
        path = match.group(0)
        if path.startswith(root):
            return path[len(root):] or "."
        if path.rstrip("/") == root.rstrip("/"):
            return "."
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return f".../{name}" if name else path

    return _ABSOLUTE_PATH.sub(shorten, message)


@dataclass(frozen=True)
class PoolFilters:
    """Which reviews are eligible (see :func:`evalkit.datasets.load_reviews`)."""

    max_sentences: int = 4
    min_sentences: int = 2
    min_chars: int = 120
    max_chars: int = 600

    def as_kwargs(self) -> dict[str, int]:
        """The filters as keyword arguments of ``load_reviews`` / ``load_pools``."""
        return {"max_sentences": self.max_sentences, "min_sentences": self.min_sentences,
                "min_chars": self.min_chars, "max_chars": self.max_chars}


@dataclass(frozen=True)
class BiasControls:
    """Length matching at selection and length normalisation at display."""

    length_tolerance: float = 0.40  # others within +-40 % of the anchor's characters
    sentence_tolerance: int = 1  # ... and +-1 sentence
    truncate_low: float = 0.85  # display target drawn from 85-100 % of the shortest text
    truncate_high: float = 1.00


@dataclass(frozen=True)
class Metric:
    """One rubric question scored 1..len(anchors); ``anchors[k]`` describes score k+1."""

    id: str
    label: str
    question: str
    anchors: tuple[str, ...]

    @property
    def scale(self) -> tuple[int, ...]:
        """The allowed scores, 1..n."""
        return tuple(range(1, len(self.anchors) + 1))


Selection = Literal["per-evaluator", "shared"]
Order = Literal["shuffled", "fixed"]


@dataclass(frozen=True)
class TripletTask:
    """Which of N texts (one per source, same domain) comes from ``target``."""

    id: str
    title: str
    question: str
    instructions: str
    sources: tuple[str, ...]
    target: str
    domains: tuple[str, ...]
    selection: Selection = "per-evaluator"
    order: Order = "shuffled"
    kind: Literal["triplet"] = "triplet"

    def slots(self) -> list[tuple[tuple[str, ...], str]]:
        """(sources, domain) of every question in config order."""
        return [(self.sources, d) for d in self.domains]


@dataclass(frozen=True)
class PairwiseTask:
    """Which of two texts (two sources, same domain) is more natural."""

    id: str
    title: str
    question: str
    instructions: str
    pairs: tuple[tuple[str, str], ...]
    domains: tuple[str, ...]
    response: Literal["choice", "slider"] = "choice"
    selection: Selection = "per-evaluator"
    order: Order = "shuffled"
    kind: Literal["pairwise"] = "pairwise"

    def slots(self) -> list[tuple[tuple[str, ...], str]]:
        """(sources, domain) of every question in config order."""
        return [(tuple(p), d) for p, d in zip(self.pairs, self.domains, strict=True)]


@dataclass(frozen=True)
class RatingTask:
    """Rubric ratings of items (e.g. a system's novelty assessment of a paper)."""

    id: str
    title: str
    instructions: str
    items: Path
    metrics: tuple[Metric, ...]
    familiarity: Metric | None = None
    min_items: int = 1
    suggested_items: int = 3
    kind: Literal["rating"] = "rating"

    @property
    def questions(self) -> tuple[Metric, ...]:
        """Every question an evaluator answers per item, in order: familiarity (if asked), then the metrics."""
        return ((self.familiarity,) if self.familiarity else ()) + self.metrics


Task = TripletTask | PairwiseTask | RatingTask


@dataclass(frozen=True)
class Study:
    """A whole study as described by one ``config.toml``."""

    path: Path
    title: str
    datasets: Path
    database: Database  # a SQLite file's path, or a PostgreSQL URL (str; print it with store.describe)
    completion_url: str
    seed: int
    estimated_minutes: int | None
    consent_text: str
    description: str
    pool: PoolFilters
    bias: BiasControls
    tasks: tuple[Task, ...]
    #: store the browser's User-Agent with each session (off by default: say so in the consent text if on)
    record_user_agent: bool = False
    config_sha256: str = field(repr=False, default="")
    domain_names: tuple[tuple[str, str], ...] = ()  # ([study.domain_names]) domain -> name shown to evaluators

    def domain_label(self, domain: str) -> str:
        """The name evaluators see for ``domain``: ``[study.domain_names]``, else the key capitalised."""
        return dict(self.domain_names).get(domain) or domain.capitalize()

    @property
    def sampled_tasks(self) -> list[TripletTask | PairwiseTask]:
        """The triplet and pairwise blocks (the ones drawn from review pools), in order."""
        return [t for t in self.tasks if not isinstance(t, RatingTask)]

    def task(self, task_id: str) -> Task:
        """The task with this id (KeyError if none)."""
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    @property
    def sources(self) -> list[str]:
        """Every source named by a sampled task, in first-use order."""
        out: list[str] = []
        for task in self.sampled_tasks:
            for sources, _ in task.slots():
                out.extend(s for s in sources if s not in out)
        return out

    @property
    def domains(self) -> list[str]:
        """Every domain named by a sampled task, in first-use order."""
        out: list[str] = []
        for task in self.sampled_tasks:
            out.extend(d for _, d in task.slots() if d not in out)
        return out


class _Table:
    """Typed access to one TOML table that remembers which keys were read."""

    def __init__(self, data: Any, file: Path, where: str) -> None:
        self.file, self.where = file, where
        if not isinstance(data, dict):
            self.fail(None, f"must be a table, got {_type(data)}")
        self.data: dict[str, Any] = data
        self.read: set[str] = set()

    def fail(self, key: str | None, problem: str) -> None:
        at = f"{self.where}: key '{key}'" if key is not None else self.where
        raise ConfigError(f"{self.file.name}: {at}: {problem}")

    def get(self, key: str, default: Any = _MISSING) -> Any:
        self.read.add(key)
        if key not in self.data:
            if default is _MISSING:
                self.fail(key, "is required but missing")
            return default
        return self.data[key]

    def str(self, key: str, default: Any = _MISSING, *, nonempty: bool = True) -> str:
        value = self.get(key, default)
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {_type(value)}")
        if nonempty and not value.strip():
            self.fail(key, "must not be empty")
        return value

    def int(self, key: str, default: Any = _MISSING, *, minimum: int | None = None) -> int:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {_type(value)} {value!r}")
        if minimum is not None and value < minimum:
            self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def float(self, key: str, default: Any = _MISSING, *, low: float, high: float) -> float:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(key, f"must be a number, got {_type(value)} {value!r}")
        if not low <= value <= high:
            self.fail(key, f"must be between {low} and {high}, got {value}")
        return float(value)

    def strs(self, key: str, default: Any = _MISSING, *, nonempty: bool = True) -> tuple[str, ...]:
        value = self.get(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(key, "must be a list of non-empty strings")
        if nonempty and not value:
            self.fail(key, "must not be an empty list")
        return tuple(v.strip() for v in value)

    def choice(self, key: str, options: tuple[str, ...], default: Any = _MISSING) -> str:
        value = self.get(key, default)
        if value not in options:
            self.fail(key, f"must be one of {', '.join(repr(o) for o in options)}; got {value!r}")
        return value

    def done(self) -> None:
        """Fail on keys that were never read (typos), suggesting the nearest known key."""
        for key in self.data:
            if key not in self.read:
                near = difflib.get_close_matches(key, sorted(self.read), n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                known = ", ".join(sorted(self.read))
                self.fail(key, f"is not a known setting{hint}; known keys here: {known}")


def _type(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


def _read_text(base: Path, rel: str, table: _Table, key: str) -> str:
    path = (base / rel).resolve()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        table.fail(key, f"file {rel!r} not found (looked for {path})")
    except (OSError, UnicodeDecodeError) as exc:
        table.fail(key, f"cannot read {rel!r}: {exc}")
    raise AssertionError("unreachable")


def _metric(data: Any, file: Path, where: str) -> Metric:
    t = _Table(data, file, where)
    metric_id = t.str("id")
    if not _ID.match(metric_id):
        t.fail("id", f"must be letters, digits, '_', '-' or '.', got {metric_id!r}")
    metric = Metric(
        id=metric_id,
        label=t.str("label", metric_id.replace("_", " ").capitalize()),
        question=t.str("question"),
        anchors=t.strs("anchors"),
    )
    if len(metric.anchors) < 2:
        t.fail("anchors", "needs at least two levels (one description per score)")
    t.done()
    return metric


def _task(data: Any, file: Path, base: Path, n: int) -> Task:
    probe = data if isinstance(data, dict) else {}
    label = f"[[tasks]] #{n}" + (f" (id {probe['id']!r})" if isinstance(probe.get("id"), str) else "")
    t = _Table(data, file, label)
    kind = t.choice("kind", ("triplet", "pairwise", "rating"))
    task_id = t.str("id")
    if not _ID.match(task_id):
        t.fail("id", f"must be letters, digits, '_', '-' or '.', got {task_id!r}")
    title = t.str("title", task_id.capitalize())
    instructions = t.str("instructions", "", nonempty=False)
    task: Task
    if kind == "triplet":
        sources = t.strs("sources")
        if len(sources) < 2:
            t.fail("sources", "needs at least two sources")
        if len(set(sources)) != len(sources):
            t.fail("sources", f"names a source twice: {list(sources)}")
        if len(sources) > 26:
            t.fail("sources", "at most 26 sources (texts are labelled A-Z)")
        target = t.str("target")
        if target not in sources:
            t.fail("target", f"{target!r} is not one of the task's sources {list(sources)}")
        task = TripletTask(
            id=task_id, title=title, instructions=instructions,
            question=t.str("question", f"Which review was written by a {target} source?"),
            sources=sources, target=target, domains=t.strs("domains"),
            selection=t.choice("selection", ("per-evaluator", "shared"), "per-evaluator"),  # type: ignore[arg-type]
            order=t.choice("order", ("shuffled", "fixed"), "shuffled"),  # type: ignore[arg-type]
        )
    elif kind == "pairwise":
        raw_pairs = t.get("pairs")
        if not isinstance(raw_pairs, list) or not raw_pairs:
            t.fail("pairs", "must be a non-empty list of [source, source] pairs")
        pairs: list[tuple[str, str]] = []
        for k, p in enumerate(raw_pairs, start=1):
            if not (isinstance(p, list) and len(p) == 2 and all(isinstance(s, str) and s.strip() for s in p)):
                t.fail("pairs", f"entry #{k} must be a list of two source names, got {p!r}")
            if p[0] == p[1]:
                t.fail("pairs", f"entry #{k} compares {p[0]!r} with itself")
            pairs.append((p[0].strip(), p[1].strip()))
        domains = t.strs("domains")
        if len(domains) != len(pairs):
            t.fail("domains", f"must give one domain per pair: {len(pairs)} pairs but {len(domains)} domains")
        task = PairwiseTask(
            id=task_id, title=title, instructions=instructions,
            question=t.str("question", "Which review sounds more natural and realistic?"),
            pairs=tuple(pairs), domains=domains,
            response=t.choice("response", ("choice", "slider"), "choice"),  # type: ignore[arg-type]
            selection=t.choice("selection", ("per-evaluator", "shared"), "per-evaluator"),  # type: ignore[arg-type]
            order=t.choice("order", ("shuffled", "fixed"), "shuffled"),  # type: ignore[arg-type]
        )
    else:
        rel = t.str("items")
        items = (base / rel).resolve()
        if not items.is_file():
            t.fail("items", f"rating items file {rel!r} not found (looked for {items})")
        raw_metrics = t.get("metrics")
        if not isinstance(raw_metrics, list) or not raw_metrics:
            t.fail("metrics", "needs at least one [[tasks.metrics]] table (id, question, anchors)")
        metrics = tuple(_metric(m, file, f"{label} metric #{k}") for k, m in enumerate(raw_metrics, start=1))
        ids = [m.id for m in metrics]
        if len(set(ids)) != len(ids):
            t.fail("metrics", f"metric ids must be unique, got {ids}")
        fam = t.get("familiarity", None)
        familiarity = None
        if fam is not None:
            fam = {"id": "familiarity", **fam} if isinstance(fam, dict) else fam
            familiarity = _metric(fam, file, f"{label} familiarity")
            if familiarity.id in ids:
                t.fail("familiarity", f"its id {familiarity.id!r} is also a metric id")
        min_items = t.int("min_items", 1, minimum=1)
        suggested = t.int("suggested_items", max(min_items, 3), minimum=1)
        if suggested < min_items:
            t.fail("suggested_items", f"({suggested}) is less than min_items ({min_items})")
        task = RatingTask(id=task_id, title=title, instructions=instructions, items=items, metrics=metrics,
                          familiarity=familiarity, min_items=min_items, suggested_items=suggested)
    t.done()
    return task


def load_study(path: str | Path = "config.toml", *, database: str | Path | None = None,
               database_from: str = "EVALKIT_DATABASE") -> Study:
    """Parse and validate ``config.toml`` (no dataset reading beyond file checks).

    Relative paths in the config are relative to the config file's folder.
    ``database`` overrides ``[study] database`` (tests, deployments).
    """
    path = Path(path)
    raw = read_file_bytes(path, "study config", ConfigError)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path.name}: not valid UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path.name}: not valid TOML: {exc}") from None
    base = path.resolve().parent
    top = _Table(data, path, "top level")

    st = _Table(top.get("study"), path, "[study]")
    title = st.str("title")
    datasets = (base / st.str("datasets", "datasets")).resolve()
    if not datasets.is_dir():
        st.fail("datasets", f"folder {st.data.get('datasets', 'datasets')!r} not found (looked for {datasets})")
    configured_db = st.str("database", "data/responses.sqlite")
    try:
        db = resolve_database(configured_db, base)
        if database is not None:  # EVALKIT_DATABASE or a test's override
            db = resolve_database(database, Path.cwd())
    except StoreError as exc:
        where = "key 'database'" if database is None else f"the database override ({database_from})"
        raise ConfigError(f"{path.name}: [study] {where}: {exc}") from None
    completion_url = st.str("completion_url", "", nonempty=False).strip()
    if completion_url:
        if not re.match(r"^https?://[^\s]+$", completion_url):
            st.fail("completion_url", f"must be an http(s) URL, got {completion_url!r}")
        fields = set(re.findall(r"\{([^{}]*)\}", completion_url))
        if fields - {"code"}:
            st.fail("completion_url", f"only the placeholder {{code}} is allowed, found {sorted(fields - {'code'})}")
    seed = st.int("seed", 0, minimum=0)
    if seed > 0xFFFFFFFF:
        st.fail("seed", f"must fit in 32 bits (0..4294967295), got {seed}")
    minutes = st.get("estimated_minutes", None)
    if minutes is not None:
        minutes = st.int("estimated_minutes", minimum=1)
    consent_rel = st.get("consent", None)
    consent_text = "" if consent_rel is None else _read_text(base, st.str("consent"), st, "consent")
    description = st.str("description", "", nonempty=False)
    record_user_agent = st.get("record_user_agent", False)
    if not isinstance(record_user_agent, bool):
        st.fail("record_user_agent", f"must be true or false, got {_type(record_user_agent)}")
    names = _Table(st.get("domain_names", {}), path, "[study.domain_names]")
    domain_names = {key: names.str(key).strip() for key in names.data}
    st.done()

    pt = _Table(top.get("pool", {}), path, "[pool]")
    pool = PoolFilters(
        max_sentences=pt.int("max_sentences", 4, minimum=1),
        min_sentences=pt.int("min_sentences", 2, minimum=0),
        min_chars=pt.int("min_chars", 120, minimum=0),
        max_chars=pt.int("max_chars", 600, minimum=1),
    )
    if pool.min_sentences > pool.max_sentences:
        pt.fail("min_sentences", f"({pool.min_sentences}) is greater than max_sentences ({pool.max_sentences})")
    if pool.min_chars > pool.max_chars:
        pt.fail("min_chars", f"({pool.min_chars}) is greater than max_chars ({pool.max_chars})")
    pt.done()

    bt = _Table(top.get("bias", {}), path, "[bias]")
    trunc = bt.get("truncate", [0.85, 1.0])
    if (not isinstance(trunc, list) or len(trunc) != 2
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in trunc)):
        bt.fail("truncate", f"must be [low, high] fractions, e.g. [0.85, 1.0]; got {trunc!r}")
    low, high = float(trunc[0]), float(trunc[1])
    if not (0 < low <= high <= 1):
        bt.fail("truncate", f"needs 0 < low <= high <= 1, got [{low}, {high}]")
    bias = BiasControls(
        length_tolerance=bt.float("length_tolerance", 0.40, low=0.0, high=10.0),
        sentence_tolerance=bt.int("sentence_tolerance", 1, minimum=0),
        truncate_low=low,
        truncate_high=high,
    )
    bt.done()

    raw_tasks = top.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        top.fail("tasks", "needs at least one [[tasks]] block (kind = 'triplet', 'pairwise' or 'rating')")
    tasks = tuple(_task(d, path, base, n) for n, d in enumerate(raw_tasks, start=1))
    ids = Counter(t.id for t in tasks)
    dup = [i for i, c in ids.items() if c > 1]
    if dup:
        raise ConfigError(f"{path.name}: [[tasks]]: task id {dup[0]!r} is used by more than one task")
    top.done()
    known = [d for t in tasks if not isinstance(t, RatingTask) for _, d in t.slots()]
    for key in domain_names:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(set(known)), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            names.fail(key, f"is not a domain of any task{hint}; the tasks' domains: "
                            f"{', '.join(sorted(set(known))) or 'none'}")
    return Study(
        path=path.resolve(), title=title.strip(), datasets=datasets,
        database=db.resolve() if isinstance(db, Path) else db,
        completion_url=completion_url, seed=seed, estimated_minutes=minutes, consent_text=consent_text,
        description=description, pool=pool, bias=bias, tasks=tasks, record_user_agent=record_user_agent,
        config_sha256=hashlib.sha256(raw).hexdigest(), domain_names=tuple(sorted(domain_names.items())),
    )


def needed_reviews(study: Study) -> dict[tuple[str, str], dict[str, int]]:
    """Reviews one evaluator's plan draws per (source, domain), broken down by task id."""
    need: dict[tuple[str, str], dict[str, int]] = {}
    for task in study.sampled_tasks:
        for sources, domain in task.slots():
            for s in sources:
                per_task = need.setdefault((s, domain), {})
                per_task[task.id] = per_task.get(task.id, 0) + 1
    return need


def check_pools(study: Study, pools: Mapping[tuple[str, str], list[Any]]) -> None:
    """Check the config against the loaded review pools; :class:`ConfigError` on the first problem.

    Every (source, domain) a task asks for must have a dataset file, and enough
    eligible reviews that no evaluator's plan repeats a review.
    """
    name = study.path.name
    for task in study.sampled_tasks:
        for sources, domain in task.slots():
            for s in sources:
                if (s, domain) not in pools:
                    expected = f"{s}-{domain}s.xml"
                    have = sorted({d for (src, d) in pools if src == s})
                    why = (f"source {s!r} has files for {have} only" if have
                           else f"no dataset file names source {s!r}")
                    raise ConfigError(
                        f"{name}: [[tasks]] id {task.id!r}: source {s!r} in domain {domain!r} has no dataset "
                        f"file: expected {study.datasets / expected} ({why})"
                    )
    for (s, d), per_task in needed_reviews(study).items():
        total = sum(per_task.values())
        have = len(pools[(s, d)])
        if total > have:
            detail = ", ".join(f"task {t!r}: {n}" for t, n in per_task.items())
            file = getattr(pools, "files", {}).get((s, d))
            n_reviews, n_text = review_counts(file) if file is not None else (None, None)
            if n_reviews == 0 or n_text == 0:  # not a filter problem: say what is wrong with the file
                what = "has no <Review> elements" if n_reviews == 0 else (
                    f"has {n_reviews} reviews but every one of them has empty text (no <text> content)")
                raise ConfigError(f"{name}: [[tasks]] id {next(iter(per_task))!r}: source {s!r} in domain {d!r}: "
                                  f"{file} {what}, so there is nothing to show")
            raise ConfigError(
                f"{name}: [[tasks]] domains: the tasks ask for {total} different reviews of source {s!r} in "
                f"domain {d!r} ({detail}) but only {have} are eligible in {s}-{d}s.xml under the [pool] "
                "filters; shorten the domain lists, add reviews or relax the filters"
            )


@dataclass(frozen=True)
class LoadedStudy:
    """A study with its pools and rating items, validated together."""

    study: Study
    pools: Pools
    items: dict[str, list[RatingItem]]
    version: str


def study_summary(study: Study) -> dict[str, Any]:
    """What the analysis needs to know about the tasks, as JSON-ready data (stored in the database)."""
    tasks: list[dict[str, Any]] = []
    for t in study.tasks:
        entry: dict[str, Any] = {"id": t.id, "kind": t.kind, "title": t.title}
        if isinstance(t, TripletTask):
            entry.update(sources=list(t.sources), target=t.target, selection=t.selection)
        elif isinstance(t, PairwiseTask):
            entry.update(pairs=[list(p) for p in t.pairs], response=t.response, selection=t.selection)
        else:
            entry.update(metrics=[{"id": m.id, "label": m.label, "scale": len(m.anchors)} for m in t.metrics],
                         familiarity=t.familiarity is not None, min_items=t.min_items)
        tasks.append(entry)
    return {"title": study.title, "tasks": tasks}


def study_version(study: Study) -> str:
    """A short hash of the config, the consent text and every dataset file the study reads."""
    h = hashlib.sha256()
    h.update(study.config_sha256.encode())
    h.update(study.consent_text.encode("utf-8"))
    paths = sorted(dataset_files(study.datasets).values())
    paths += sorted({t.items for t in study.tasks if isinstance(t, RatingTask)})
    for p in paths:
        h.update(p.name.encode("utf-8") + b"\0")
        with open(p, "rb") as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def open_study(path: str | Path = "config.toml", *, database: str | Path | None = None,
               database_from: str = "EVALKIT_DATABASE") -> LoadedStudy:
    """Load the config, the review pools and the rating items, and check them together.

    Raises :class:`ConfigError` for config mistakes and :class:`DatasetError`
    for broken data files; both messages name the file.
    """
    study = load_study(path, database=database, database_from=database_from)
    pools = load_pools(study.datasets, **study.pool.as_kwargs())
    check_pools(study, pools)
    for source, domain in pools:  # build the length indexes now, not during an evaluator's first click
        pools.index(source, domain)
    items: dict[str, list[RatingItem]] = {}
    for task in study.tasks:
        if isinstance(task, RatingTask):
            items[task.id] = load_rating_items(task.items)
            if len(items[task.id]) < task.min_items:
                raise ConfigError(
                    f"{study.path.name}: [[tasks]] id {task.id!r}: key 'min_items' asks for {task.min_items} "
                    f"items but {task.items.name} holds only {len(items[task.id])}"
                )
    return LoadedStudy(study=study, pools=pools, items=items, version=study_version(study))


__all__ += ["DatasetError", "study_version"]
